#include "model/kernels/linear.h"

#include <algorithm>

#include "model/kernels/gemm.h"
#include "model/kernels/half_float.h"
#include "model/kernels/linear_shares.h"

namespace actex {

WeightSlice RowSlice(const WeightView& weight, int64_t first_row, int64_t end_row) {
  return {weight, first_row, end_row, 0, weight.cols};
}

WeightSlice ColumnSlice(const WeightView& weight, int64_t first_col, int64_t end_col) {
  return {weight, 0, weight.rows, first_col, end_col};
}

WidenTile WidenTileShape(int64_t out_features, int64_t in_features) {
  constexpr int64_t kWholeUpTo = 1024, kSplitCols = 512;
  constexpr int64_t kTileBytes = int64_t{4} << 20;
  WidenTile tile;
  tile.cols = in_features <= kWholeUpTo ? std::max<int64_t>(in_features, 1) : kSplitCols;
  // As many row tiles as 4 MiB needs, all of about one size (multiples of 32 rows):
  // a short last tile (1170 + 1170 + 92 rows, say) runs its sgemm far below the rate
  // of the others.
  const int64_t out = std::max<int64_t>(out_features, 1);
  const int64_t fitting = std::max<int64_t>(kTileBytes / (tile.cols * 4), 1);
  const int64_t tiles = (out + fitting - 1) / fitting;
  const int64_t even = (out + tiles - 1) / tiles;
  tile.rows = std::min(out, (even + 31) / 32 * 32);
  return tile;
}

void Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
            const float* bias, float* y, int64_t ldy, std::vector<float>* widen_buffer,
            ThreadTeam* team) {
  const LinearTarget target{&weight, bias, y, ldy};
  Linear(x, ldx, tokens, {&target, 1}, widen_buffer, team);
}

void Linear(const float* x, int64_t ldx, int64_t tokens, std::span<const LinearTarget> targets,
            std::vector<float>* widen_buffer, ThreadTeam* team) {
  const GemmBackend backend = PreferredGemmBackend(ActiveIsa());
  MultiplyInShares(targets, tokens, WeightDtype::kF32, widen_buffer, team, WidenToFloat,
                   [&](int, const LinearTarget& target, int64_t first_row, int64_t rows,
                       int64_t first_col, int64_t cols, const float* w, int64_t ldw, float beta) {
                     GemmOnThisThread(backend, tokens, rows, cols, x + first_col, ldx, w, ldw, beta,
                                      target.y + first_row, target.ldy);
                   });
}

}  // namespace actex
