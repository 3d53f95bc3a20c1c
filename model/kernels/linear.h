#ifndef ACTEX_MODEL_KERNELS_LINEAR_H_
#define ACTEX_MODEL_KERNELS_LINEAR_H_

#include <cstdint>
#include <span>
#include <vector>

#include "model/kernels/thread_team.h"
#include "model/model_weights.h"

namespace actex {

// Rows [first_row, end_row) and columns [first_col, end_col) of a [rows, cols] weight
// in HF's Linear layout [out_features, in_features]. A shard takes a row range of
// q/k/v/gate/up (its output features) and a column range of o_proj/down_proj (its
// input features).
struct WeightSlice {
  WeightView weight;
  int64_t first_row = 0, end_row = 0;
  int64_t first_col = 0, end_col = 0;

  int64_t out_features() const { return end_row - first_row; }
  int64_t in_features() const { return end_col - first_col; }
};

WeightSlice RowSlice(const WeightView& weight, int64_t first_row, int64_t end_row);
WeightSlice ColumnSlice(const WeightView& weight, int64_t first_col, int64_t end_col);

// Y[tokens, out] = X[tokens, in] · Wᵀ (+ bias[out]), each product by the gemm backend
// PreferredGemmBackend(ActiveIsa()) chooses (gemm.h). Float32 weights are read in
// place. 16-bit weights are widened tile by tile (see WidenTileShape) into
// `widen_buffer` (reused, grows as needed) with one product per tile, so a model is
// never widened as a whole. `x` has row stride `ldx` >= in, `y` row stride `ldy` >= out;
// `bias` may be null. Y must not overlap X.
//
// With a `team` of N members the output features are cut into N contiguous shares
// (multiples of 32), one per member, each widened and multiplied on its own thread with
// its own part of `widen_buffer`; OpenBLAS must then run one thread per call
// (SetBlasThreads(1)), since the team is the parallelism. Without a team the whole
// product runs on the caller (with whatever threads OpenBLAS has, when it is the
// backend).
void Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
            const float* bias, float* y, int64_t ldy, std::vector<float>* widen_buffer,
            ThreadTeam* team = nullptr);

// One of the products a step takes of one X (q, k and v of the same normed rows; gate
// and up): Y[tokens, out] (row stride `ldy` >= out) = X · weightᵀ (+ bias[out]).
struct LinearTarget {
  const WeightSlice* weight = nullptr;
  const float* bias = nullptr;  // [out], or null
  float* y = nullptr;           // [tokens, ldy]; must not overlap X
  int64_t ldy = 0;
};

// Linear of every target, all reading X (their in_features equal): each target is cut
// into shares as alone, and the team runs every target's shares as one job (one wait
// instead of one per product, and the small products fill the large ones' gaps), so
// every result is the bits a Linear per target gives.
void Linear(const float* x, int64_t ldx, int64_t tokens, std::span<const LinearTarget> targets,
            std::vector<float>* widen_buffer, ThreadTeam* team = nullptr);

// The tile of a 16-bit weight widened at a time: every input feature when there are
// at most 1024 (the hidden size of small models: one product, one pass over Y),
// else 512 (about the libraries' own K blocking, so splitting K adds little traffic
// on Y), by about as many output rows as fit in 4 MiB of float32 (L2/L3 sized, and
// wide enough that re-packing X once per row tile costs under 1% of the multiply),
// evened out so the row tiles are of one size.
struct WidenTile {
  int64_t rows = 0, cols = 0;
};
WidenTile WidenTileShape(int64_t out_features, int64_t in_features);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_LINEAR_H_
