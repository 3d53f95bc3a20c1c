#include "model/kernels/linear_products.h"

namespace actex {

void LinearProducts::Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
                            const float* bias, float* y, int64_t ldy, ThreadTeam* team) {
  const LinearTarget target{&weight, bias, y, ldy};
  Linear(x, ldx, tokens, {&target, 1}, team);
}

void LinearProducts::Linear(const float* x, int64_t ldx, int64_t tokens,
                            std::span<const LinearTarget> targets, ThreadTeam* team,
                            bool x_rounded) {
  if (precision_ == Precision::kBf16) {
    Bf16Linear(x, ldx, tokens, targets, &bf16_scratch_, team, x_rounded);
  } else {
    actex::Linear(x, ldx, tokens, targets, &widen_scratch_, team);
  }
}

bool LinearProducts::GatedLinear(const float* x, int64_t ldx, int64_t tokens,
                                 const LinearTarget& gate, const LinearTarget& up,
                                 GatedActivation activate, bool keep_float32, ThreadTeam* team,
                                 bool x_rounded) {
  if (precision_ == Precision::kBf16) {
    Bf16GatedLinear(x, ldx, tokens, gate, up, activate, keep_float32, &bf16_scratch_, team,
                    x_rounded);
    return true;
  }
  const LinearTarget both[] = {gate, up};
  Linear(x, ldx, tokens, both, team);
  const int64_t columns = gate.weight->out_features();
  auto activate_rows = [&](int64_t first, int64_t end, int) {
    for (int64_t t = first; t < end; ++t) {
      activate(gate.y + t * gate.ldy, up.y + t * up.ldy, columns, gate.y + t * gate.ldy);
    }
  };
  if (team != nullptr) {
    team->ForRanges(tokens, kTeamRowGrain, activate_rows);
  } else {
    activate_rows(0, tokens, 0);
  }
  return false;
}

uint16_t* LinearProducts::RoundedInput(int64_t count) {
  return precision_ == Precision::kBf16 ? actex::RoundedInput(&bf16_scratch_, count) : nullptr;
}

void LinearProducts::Float32Linear(const float* x, int64_t ldx, int64_t tokens,
                                   const WeightSlice& weight, const float* bias, float* y,
                                   int64_t ldy, ThreadTeam* team) {
  actex::Linear(x, ldx, tokens, weight, bias, y, ldy, &widen_scratch_, team);
}

}  // namespace actex
