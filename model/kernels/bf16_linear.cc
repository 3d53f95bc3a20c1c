#include "model/kernels/bf16_linear.h"

#include <algorithm>

#include "base/bfloat16.h"
#include "model/kernels/half_float.h"
#include "model/kernels/linear_shares.h"

namespace actex {

void Bf16Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
                const float* bias, float* y, int64_t ldy, Bf16LinearScratch* scratch,
                ThreadTeam* team) {
  const LinearTarget target{&weight, bias, y, ldy};
  Bf16Linear(x, ldx, tokens, {&target, 1}, scratch, team);
}

void Bf16Linear(const float* x, int64_t ldx, int64_t tokens, std::span<const LinearTarget> targets,
                Bf16LinearScratch* scratch, ThreadTeam* team, bool x_rounded) {
  if (targets.empty()) return;
  const int64_t in = targets.front().weight->in_features();
  const int members = team != nullptr ? team->size() : 1;
  const Bf16ShareProduct product(scratch, members, tokens, in);
  if (!x_rounded) RoundInput(x, ldx, tokens, in, scratch, team);
  MultiplyInShares(targets, tokens, WeightDtype::kBF16, &scratch->rounded_tiles, team,
                   RoundToBFloat16, product);
}

Bf16ShareProduct::Bf16ShareProduct(Bf16LinearScratch* scratch, int members, int64_t tokens,
                                   int64_t in)
    : scratch_(scratch), tokens_(tokens), in_(in) {
  while (static_cast<int>(scratch->gemms.size()) < members) {
    scratch->gemms.push_back(std::make_unique<Bf16Gemm>());
  }
}

void Bf16ShareProduct::operator()(int member, const LinearTarget& target, int64_t first_row,
                                  int64_t rows, int64_t first_col, int64_t cols, const uint16_t* w,
                                  int64_t ldw, float beta) const {
  scratch_->gemms[static_cast<size_t>(member)]->Multiply(
      tokens_, rows, cols, scratch_->rounded_x.data() + first_col, in_, w, ldw, beta,
      target.y + first_row, target.ldy);
}

void RoundInput(const float* x, int64_t ldx, int64_t tokens, int64_t in, Bf16LinearScratch* scratch,
                ThreadTeam* team) {
  uint16_t* rounded_x = RoundedInput(scratch, tokens * in);  // [tokens, in]
  auto round_rows = [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      ConvertToBfloat16({x + t * ldx, static_cast<size_t>(in)}, rounded_x + t * in);
    }
  };
  // ForRanges returns only once every row is done: every share reads all of X.
  if (team != nullptr) {
    team->ForRanges(tokens, kTeamRowGrain, round_rows);
  } else {
    round_rows(0, tokens, 0);
  }
}

uint16_t* RoundedInput(Bf16LinearScratch* scratch, int64_t count) {
  if (static_cast<int64_t>(scratch->rounded_x.size()) < count) {
    scratch->rounded_x.resize(static_cast<size_t>(std::max<int64_t>(count, 0)));
  }
  return scratch->rounded_x.data();
}

}  // namespace actex
