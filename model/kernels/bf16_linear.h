#ifndef ACTEX_MODEL_KERNELS_BF16_LINEAR_H_
#define ACTEX_MODEL_KERNELS_BF16_LINEAR_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/kernels/bf16_gemm.h"
#include "model/kernels/huge_pages.h"
#include "model/kernels/linear.h"
#include "model/kernels/thread_team.h"

namespace actex {

// What Bf16Linear reuses from call to call: grown as needed, never shrunk.
struct Bf16LinearScratch {
  HugePageVector<uint16_t> rounded_x;            // [tokens, in]: X in bfloat16
  HugePageVector<uint16_t> rounded_next;         // Bf16GatedLinear's output, then swapped in
  std::vector<uint16_t> rounded_tiles;           // one weight tile per team member
  HugePageVector<float> gated_tiles;             // Bf16GatedLinear: gate and up per member
  std::vector<std::unique_ptr<Bf16Gemm>> gemms;  // one per team member
};

// Y[tokens, out] = X[tokens, in] · Wᵀ (+ bias[out]) with bfloat16 products and float32
// accumulation, as a bfloat16 model's nn.Linear: X is rounded to bfloat16 once (on the
// team, which then waits for all of it), then each member multiplies its share of the
// output features (CutOutputFeatures, as Linear) with one-thread bf16 matmuls
// (Bf16Gemm). BF16 weights are read in place (half the bytes of float32); F32 and F16
// weights are rounded to bfloat16 tile by tile (WidenTileShape, as Linear widens them)
// into the member's part of `scratch`. The bias is added in float32. `x` has row stride
// `ldx` >= in, `y` row stride `ldy` >= out; `bias` may be null. Y must not overlap X.
// Callers check Bf16ProductsSupported() (cpu_isa.h) first. Results depend on the team's
// size in the last bits (how the products are cut), never on timing.
void Bf16Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
                const float* bias, float* y, int64_t ldy, Bf16LinearScratch* scratch,
                ThreadTeam* team = nullptr);

// Bf16Linear of every target, all reading X (their in_features equal; linear.h): X is
// rounded once for all of them, and the team runs every target's shares as one job, so
// every result is the bits a Bf16Linear per target gives. `x_rounded`: the caller has
// already written X rounded to bfloat16 into RoundedInput(scratch, tokens * in) (as
// [tokens, in]); it is multiplied as it is.
void Bf16Linear(const float* x, int64_t ldx, int64_t tokens, std::span<const LinearTarget> targets,
                Bf16LinearScratch* scratch, ThreadTeam* team = nullptr, bool x_rounded = false);

// The product of one share (MultiplyShare's `multiply`, linear_shares.h) on its member's
// Bf16Gemm, X being the rounded [tokens, in] of RoundedInput(scratch): what Bf16Linear
// and Bf16GatedLinear run for every share or tile. Makes a gemm per member first.
class Bf16ShareProduct {
 public:
  Bf16ShareProduct(Bf16LinearScratch* scratch, int members, int64_t tokens, int64_t in);
  void operator()(int member, const LinearTarget& target, int64_t first_row, int64_t rows,
                  int64_t first_col, int64_t cols, const uint16_t* w, int64_t ldw,
                  float beta) const;

 private:
  Bf16LinearScratch* scratch_;
  int64_t tokens_, in_;
};

// X [tokens, in] (row stride `ldx`) rounded to bfloat16 into RoundedInput(scratch), on the
// team: what Bf16Linear does first unless `x_rounded`.
void RoundInput(const float* x, int64_t ldx, int64_t tokens, int64_t in, Bf16LinearScratch* scratch,
                ThreadTeam* team = nullptr);

// The buffer Bf16Linear rounds X into, grown to `count` values: for a caller that rounds
// X while it writes it, saving Bf16Linear a pass over X (then `x_rounded`).
uint16_t* RoundedInput(Bf16LinearScratch* scratch, int64_t count);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_BF16_LINEAR_H_
