#ifndef ACTEX_MODEL_KERNELS_LINEAR_SHARES_H_
#define ACTEX_MODEL_KERNELS_LINEAR_SHARES_H_

// How one Linear call is cut (linear.h): into a share of output features per team
// member for each of its targets, and a 16-bit weight into tiles. Linear (float32
// products) and Bf16Linear (bfloat16 products) cut alike through MultiplyInShares.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "model/kernels/half_float.h"
#include "model/kernels/linear.h"
#include "model/kernels/thread_team.h"

namespace actex {

// `out` output features among a team of `members`: `count` contiguous shares of `size`
// features (a multiple of 32, so every product keeps whole register tiles of the
// libraries' kernels; the last share may be shorter).
struct FeatureShares {
  int64_t size = 0, count = 0;
};
FeatureShares CutOutputFeatures(int64_t out, int members);

// Runs share(index, member) for every index in [0, count): on the team when there is
// one and more than one share, else on the caller (member 0).
void ForEachShare(ThreadTeam* team, int64_t count,
                  const std::function<void(int64_t index, int member)>& share);

// Sets Y's first `out` columns of each of `tokens` rows (row stride `ldy`) to `bias`
// [out], or to zero when `bias` is null: the start of a product that accumulates onto
// its bias, as torch's addmm adds it, and the whole of a product over no input features.
void FillWithBias(const float* bias, int64_t tokens, int64_t out, float* y, int64_t ldy);

// Whether a weight stored as `in_place_dtype` and aligned for Element is multiplied
// where it lies (one product), rather than converted tile by tile.
template <typename Element>
bool MultipliedInPlace(const WeightSlice& weight, WeightDtype in_place_dtype) {
  return weight.weight.dtype == in_place_dtype &&
         reinterpret_cast<uintptr_t>(weight.weight.data) % alignof(Element) == 0;
}

// Target's Y[:, first_out, end_out) = X · W[slice rows first_out..end_out)ᵀ (+ bias) on
// the calling thread, team member `member`, for the element type `Element` a library
// multiplies (float, or bfloat16 bits). The share fills its part of the bias first (then
// accumulates onto it), and multiplies either W's rows read in place (`in_place`,
// MultipliedInPlace: one product) or W converted `tile` by `tile` (WidenTileShape) by
// `convert` into `block` (the member's own [tile.rows, tile.cols]; one product per tile;
// the first of a row tile overwrites or adds to the bias, the others accumulate).
// The callables:
//   convert(const void* source, WeightDtype dtype, int64_t count, Element* destination)
//   multiply(int member, const LinearTarget& target, int64_t first_row, int64_t rows,
//            int64_t first_col, int64_t cols, const Element* w, int64_t ldw, float beta):
//            target's Y[:, first_row, +rows) = X[:, first_col, +cols) · wᵀ + beta · Y
//            there, on the calling thread.
template <typename Element, typename Convert, typename Multiply>
void MultiplyShare(const LinearTarget& target, int64_t tokens, int64_t first_out, int64_t end_out,
                   bool in_place, WidenTile tile, Element* block, int member,
                   const Convert& convert, const Multiply& multiply) {
  const WeightSlice& weight = *target.weight;
  const WeightView& view = weight.weight;
  const int element_bytes = WeightDtypeBytes(view.dtype);
  auto element = [&](int64_t row, int64_t col) {
    return static_cast<const uint8_t*>(view.data) + (row * view.cols + col) * element_bytes;
  };
  const int64_t in = weight.in_features();
  const float beta = target.bias != nullptr ? 1.0f : 0.0f;  // without a bias Y is overwritten
  if (target.bias != nullptr) {
    FillWithBias(target.bias + first_out, tokens, end_out - first_out, target.y + first_out,
                 target.ldy);
  }
  if (in_place) {
    // W's slice is read in place: its leading dimension is the full row length.
    multiply(
        member, target, first_out, end_out - first_out, 0, in,
        reinterpret_cast<const Element*>(element(weight.first_row + first_out, weight.first_col)),
        view.cols, beta);
    return;
  }
  for (int64_t first_row = first_out; first_row < end_out; first_row += tile.rows) {
    const int64_t rows = std::min(tile.rows, end_out - first_row);
    for (int64_t first_col = 0; first_col < in; first_col += tile.cols) {
      const int64_t cols = std::min(tile.cols, in - first_col);
      for (int64_t r = 0; r < rows; ++r) {
        convert(element(weight.first_row + first_row + r, weight.first_col + first_col), view.dtype,
                cols, block + r * cols);
      }
      multiply(member, target, first_row, rows, first_col, cols, block, cols,
               first_col == 0 ? beta : 1.0f);
    }
  }
}

// Y[tokens, out] (+)= X · W[slice]ᵀ (+ bias) of every target (all reading one X), cut
// into shares (MultiplyShare each; W stored as `in_place_dtype` is read in place, other
// weights are converted into the member's part of `tiles`). Each target is cut by
// CutOutputFeatures as if alone and the team runs all the targets' shares as one job.
template <typename Element, typename Convert, typename Multiply>
void MultiplyInShares(std::span<const LinearTarget> targets, int64_t tokens,
                      WeightDtype in_place_dtype, std::vector<Element>* tiles, ThreadTeam* team,
                      Convert convert, Multiply multiply) {
  if (tokens <= 0) return;
  // Each member takes a contiguous share of a target's output features (its own tile
  // buffer, its own products), so the members never wait for one another.
  const int members = team != nullptr ? team->size() : 1;
  struct TargetCut {
    FeatureShares shares;
    WidenTile tile;
    bool in_place = false;
  };
  std::vector<TargetCut> cuts(targets.size());
  int64_t share_count = 0, tile_elements = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const LinearTarget& target = targets[i];
    const WeightSlice& weight = *target.weight;
    const int64_t out = weight.out_features(), in = weight.in_features();
    if (out <= 0) continue;
    if (in <= 0) {  // an empty product: Y is the bias, or zero
      FillWithBias(target.bias, tokens, out, target.y, target.ldy);
      continue;
    }
    TargetCut& cut = cuts[i];
    cut.shares = CutOutputFeatures(out, members);
    cut.tile = WidenTileShape(cut.shares.size, in);
    cut.in_place = MultipliedInPlace<Element>(weight, in_place_dtype);
    if (!cut.in_place) tile_elements = std::max(tile_elements, cut.tile.rows * cut.tile.cols);
    share_count += cut.shares.count;
  }
  if (static_cast<int64_t>(tiles->size()) < tile_elements * members) {
    tiles->resize(static_cast<size_t>(tile_elements * members));
  }
  ForEachShare(team, share_count, [&](int64_t index, int member) {
    size_t i = 0;
    while (index >= cuts[i].shares.count) index -= cuts[i++].shares.count;
    const TargetCut& cut = cuts[i];
    const int64_t first_out = index * cut.shares.size;
    const int64_t end_out =
        std::min(targets[i].weight->out_features(), first_out + cut.shares.size);
    MultiplyShare(targets[i], tokens, first_out, end_out, cut.in_place, cut.tile,
                  tiles->data() + member * tile_elements, member, convert, multiply);
  });
}

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_LINEAR_SHARES_H_
