#include "model/kernels/bf16_linear.h"

#include <algorithm>

#include "model/kernels/half_float.h"

namespace actex {
namespace {

// Y[:, first_out, end_out) of the product (+ its part of the bias) on the calling
// thread, from X already in bfloat16 (`rounded_x`, row stride `in`): one matmul for
// BF16 weights read in place, else one per rounded tile in `block` (null for BF16).
void Bf16LinearRows(const uint16_t* rounded_x, int64_t tokens, const WeightSlice& weight,
                    const float* bias, int64_t first_out, int64_t end_out, float* y, int64_t ldy,
                    const WidenTile& tile, uint16_t* block, Bf16Gemm& gemm) {
  const int64_t in = weight.in_features();
  if (bias != nullptr) {
    FillWithBias(bias + first_out, tokens, end_out - first_out, y + first_out, ldy);
  }
  const float beta = bias != nullptr ? 1.0f : 0.0f;  // without a bias Y is overwritten
  const WeightView& view = weight.weight;
  const int element_bytes = WeightDtypeBytes(view.dtype);
  const auto* base = static_cast<const uint8_t*>(view.data);
  auto element = [&](int64_t row, int64_t col) {
    return base + (row * view.cols + col) * element_bytes;
  };
  if (block == nullptr) {
    // W's slice is read in place: its leading dimension is the full row length.
    gemm.Multiply(
        tokens, end_out - first_out, in, rounded_x, in,
        reinterpret_cast<const uint16_t*>(element(weight.first_row + first_out, weight.first_col)),
        view.cols, beta, y + first_out, ldy);
    return;
  }
  for (int64_t first_row = first_out; first_row < end_out; first_row += tile.rows) {
    const int64_t rows = std::min(tile.rows, end_out - first_row);
    for (int64_t first_col = 0; first_col < in; first_col += tile.cols) {
      const int64_t cols = std::min(tile.cols, in - first_col);
      for (int64_t r = 0; r < rows; ++r) {
        RoundToBFloat16(element(weight.first_row + first_row + r, weight.first_col + first_col),
                        view.dtype, cols, block + r * cols);
      }
      // The first K tile overwrites (or adds to the bias), the others accumulate.
      gemm.Multiply(tokens, rows, cols, rounded_x + first_col, in, block, cols,
                    first_col == 0 ? beta : 1.0f, y + first_row, ldy);
    }
  }
}

}  // namespace

void Bf16Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
                const float* bias, float* y, int64_t ldy, Bf16LinearScratch* scratch,
                ThreadTeam* team) {
  const int64_t out = weight.out_features();
  const int64_t in = weight.in_features();
  if (tokens <= 0 || out <= 0) return;
  if (in <= 0) {  // an empty product: Y is the bias, or zero
    FillWithBias(bias, tokens, out, y, ldy);
    return;
  }
  const int members = team != nullptr ? team->size() : 1;
  while (static_cast<int>(scratch->gemms.size()) < members) {
    scratch->gemms.push_back(std::make_unique<Bf16Gemm>());
  }
  if (static_cast<int64_t>(scratch->rounded_x.size()) < tokens * in) {
    scratch->rounded_x.resize(static_cast<size_t>(tokens * in));
  }
  uint16_t* rounded_x = scratch->rounded_x.data();  // [tokens, in]
  auto round_rows = [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      RoundToBFloat16(x + t * ldx, WeightDtype::kF32, in, rounded_x + t * in);
    }
  };
  // Every share reads all of X: the team rounds it first, and ForRanges returns only
  // once every row is done.
  if (team != nullptr) {
    team->ForRanges(tokens, kTeamRowGrain, round_rows);
  } else {
    round_rows(0, tokens, 0);
  }

  const WeightView& view = weight.weight;
  const bool bf16_in_place = view.dtype == WeightDtype::kBF16 &&
                             reinterpret_cast<uintptr_t>(view.data) % alignof(uint16_t) == 0;
  const FeatureShares shares = CutOutputFeatures(out, members);
  const WidenTile tile = WidenTileShape(shares.size, in);
  const int64_t tile_elements = bf16_in_place ? 0 : tile.rows * tile.cols;
  if (static_cast<int64_t>(scratch->rounded_tiles.size()) < tile_elements * members) {
    scratch->rounded_tiles.resize(static_cast<size_t>(tile_elements * members));
  }
  ForEachShare(team, shares.count, [&](int64_t index, int member) {
    uint16_t* block =
        bf16_in_place ? nullptr : scratch->rounded_tiles.data() + member * tile_elements;
    Bf16LinearRows(rounded_x, tokens, weight, bias, index * shares.size,
                   std::min(out, (index + 1) * shares.size), y, ldy, tile, block,
                   *scratch->gemms[static_cast<size_t>(member)]);
  });
}

}  // namespace actex
