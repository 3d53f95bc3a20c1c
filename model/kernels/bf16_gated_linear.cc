#include "model/kernels/bf16_gated_linear.h"

#include <algorithm>
#include <utility>

#include "base/bfloat16.h"
#include "model/kernels/half_float.h"
#include "model/kernels/linear_shares.h"

namespace actex {

void Bf16GatedLinear(const float* x, int64_t ldx, int64_t tokens, const LinearTarget& gate,
                     const LinearTarget& up, GatedActivation activate, bool keep_float32,
                     Bf16LinearScratch* scratch, ThreadTeam* team, bool x_rounded) {
  const int64_t columns = gate.weight->out_features(), in = gate.weight->in_features();
  if (tokens <= 0 || columns <= 0) return;
  const int members = team != nullptr ? team->size() : 1;
  const Bf16ShareProduct product(scratch, members, tokens, in);
  if (!x_rounded) RoundInput(x, ldx, tokens, in, scratch, team);
  const int64_t tile_columns = std::min(kGatedTileColumns, columns);
  const int64_t tile_count = (columns + tile_columns - 1) / tile_columns;
  // Every tile's gate and up, [tokens, tile_columns] each, then a converted weight tile
  // where a weight is not BF16.
  const WidenTile weight_tile = WidenTileShape(tile_columns, in);
  const int64_t weight_tile_elements = weight_tile.rows * weight_tile.cols;
  const int64_t tile_floats = 2 * tokens * tile_columns;
  if (static_cast<int64_t>(scratch->gated_tiles.size()) < tile_floats * members) {
    scratch->gated_tiles.resize(static_cast<size_t>(tile_floats * members));
  }
  if (static_cast<int64_t>(scratch->rounded_tiles.size()) < weight_tile_elements * members) {
    scratch->rounded_tiles.resize(static_cast<size_t>(weight_tile_elements * members));
  }
  if (static_cast<int64_t>(scratch->rounded_next.size()) < tokens * columns) {
    scratch->rounded_next.resize(static_cast<size_t>(tokens * columns));
  }
  uint16_t* rounded = scratch->rounded_next.data();  // [tokens, columns]
  const bool gate_in_place = MultipliedInPlace<uint16_t>(*gate.weight, WeightDtype::kBF16);
  const bool up_in_place = MultipliedInPlace<uint16_t>(*up.weight, WeightDtype::kBF16);
  ForEachShare(team, tile_count, [&](int64_t tile, int member) {
    const int64_t first = tile * tile_columns;
    const int64_t width = std::min(tile_columns, columns - first);
    float* gate_tile = scratch->gated_tiles.data() + member * tile_floats;  // [tokens, width]
    float* up_tile = gate_tile + tokens * tile_columns;                     // [tokens, width]
    uint16_t* weight_block = scratch->rounded_tiles.data() + member * weight_tile_elements;
    // The tile as a product of its own: the weights' rows [first, first + width).
    auto tile_target = [&](const LinearTarget& whole, WeightSlice* slice, float* y) {
      *slice = *whole.weight;
      slice->first_row += first;
      slice->end_row = slice->first_row + width;
      return LinearTarget{slice, whole.bias != nullptr ? whole.bias + first : nullptr, y, width};
    };
    WeightSlice gate_slice, up_slice;
    MultiplyShare(tile_target(gate, &gate_slice, gate_tile), tokens, 0, width, gate_in_place,
                  weight_tile, weight_block, member, RoundToBFloat16, product);
    MultiplyShare(tile_target(up, &up_slice, up_tile), tokens, 0, width, up_in_place, weight_tile,
                  weight_block, member, RoundToBFloat16, product);
    for (int64_t t = 0; t < tokens; ++t) {
      float* row = gate_tile + t * width;  // [width]
      float* out = keep_float32 ? gate.y + t * gate.ldy + first : row;
      activate(row, up_tile + t * width, width, out);
      ConvertToBfloat16({out, static_cast<size_t>(width)}, rounded + t * columns + first);
    }
  });
  // The activation is now what the next product rounds no further.
  std::swap(scratch->rounded_x, scratch->rounded_next);
}

}  // namespace actex
