#include "model/kernels/linear.h"

#include <algorithm>
#include <cstring>

#include "model/kernels/gemm.h"
#include "model/kernels/half_float.h"

namespace actex {
namespace {

// Y[:, first_out, end_out) of the product (+ its part of the bias), on the calling
// thread: one sgemm for float32 weights read in place, else one per widened tile in
// `block` (tile.rows * tile.cols).
void LinearRows(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
                const float* bias, int64_t first_out, int64_t end_out, float* y, int64_t ldy,
                const WidenTile& tile, GemmBackend backend, float* block) {
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
    // W's slice is read in place: ldb is the full row length even for a column range.
    GemmOnThisThread(
        backend, tokens, end_out - first_out, in, x, ldx,
        reinterpret_cast<const float*>(element(weight.first_row + first_out, weight.first_col)),
        view.cols, beta, y + first_out, ldy);
    return;
  }
  for (int64_t first_row = first_out; first_row < end_out; first_row += tile.rows) {
    const int64_t rows = std::min(tile.rows, end_out - first_row);
    for (int64_t first_col = 0; first_col < in; first_col += tile.cols) {
      const int64_t cols = std::min(tile.cols, in - first_col);
      for (int64_t r = 0; r < rows; ++r) {
        WidenToFloat(element(weight.first_row + first_row + r, weight.first_col + first_col),
                     view.dtype, cols, block + r * cols);
      }
      // The first K tile overwrites (or adds to the bias), the others accumulate.
      GemmOnThisThread(backend, tokens, rows, cols, x + first_col, ldx, block, cols,
                       first_col == 0 ? beta : 1.0f, y + first_row, ldy);
    }
  }
}

}  // namespace

void FillWithBias(const float* bias, int64_t tokens, int64_t out, float* y, int64_t ldy) {
  for (int64_t t = 0; t < tokens; ++t) {
    if (bias != nullptr) {
      std::memcpy(y + t * ldy, bias, static_cast<size_t>(out) * sizeof(float));
    } else {
      std::fill(y + t * ldy, y + t * ldy + out, 0.0f);
    }
  }
}

FeatureShares CutOutputFeatures(int64_t out, int members) {
  constexpr int64_t kRowAlignment = 32;
  const int64_t even_share = (out + members - 1) / members;
  FeatureShares shares;
  shares.size = std::min(out, (even_share + kRowAlignment - 1) / kRowAlignment * kRowAlignment);
  shares.count = shares.size > 0 ? (out + shares.size - 1) / shares.size : 0;
  return shares;
}

void ForEachShare(ThreadTeam* team, int64_t count,
                  const std::function<void(int64_t index, int member)>& share) {
  if (team != nullptr && count > 1) {
    team->Run(count, share);
  } else {
    for (int64_t index = 0; index < count; ++index) share(index, 0);
  }
}

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
  const int64_t out = weight.out_features();
  const int64_t in = weight.in_features();
  if (tokens <= 0 || out <= 0) return;
  if (in <= 0) {  // an empty product: Y is the bias, or zero
    FillWithBias(bias, tokens, out, y, ldy);
    return;
  }
  const WeightView& view = weight.weight;
  const bool float_in_place = view.dtype == WeightDtype::kF32 &&
                              reinterpret_cast<uintptr_t>(view.data) % alignof(float) == 0;

  // Each member takes a contiguous share of the output features (its own widen tile
  // buffer, its own sgemms), so the members never wait for one another.
  const int members = team != nullptr ? team->size() : 1;
  const FeatureShares shares = CutOutputFeatures(out, members);
  const WidenTile tile = WidenTileShape(shares.size, in);
  const int64_t tile_floats = float_in_place ? 0 : tile.rows * tile.cols;
  if (static_cast<int64_t>(widen_buffer->size()) < tile_floats * members) {
    widen_buffer->resize(static_cast<size_t>(tile_floats * members));
  }
  const GemmBackend backend = PreferredGemmBackend(ActiveIsa());
  ForEachShare(team, shares.count, [&](int64_t index, int member) {
    float* block = float_in_place ? nullptr : widen_buffer->data() + member * tile_floats;
    LinearRows(x, ldx, tokens, weight, bias, index * shares.size,
               std::min(out, (index + 1) * shares.size), y, ldy, tile, backend, block);
  });
}

}  // namespace actex
