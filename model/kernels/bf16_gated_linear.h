#ifndef ACTEX_MODEL_KERNELS_BF16_GATED_LINEAR_H_
#define ACTEX_MODEL_KERNELS_BF16_GATED_LINEAR_H_

#include <cstdint>

#include "model/kernels/bf16_linear.h"
#include "model/kernels/linear.h"
#include "model/kernels/thread_team.h"

namespace actex {

// A gated MLP's activation, element by element: out = act(gate) · up (SwiGlu, GeGlu).
using GatedActivation = void (*)(const float* gate, const float* up, int64_t count, float* out);

// The first half of a gated MLP in bfloat16 products:
//   A[tokens, columns] = activate(X · gateᵀ + gate bias, X · upᵀ + up bias)
// where gate and up have the same output features (`columns`) and read X [tokens, in]
// (row stride `ldx`), rounded to bfloat16 first unless `x_rounded` (as Bf16Linear).
// Each of the team's tasks takes kGatedTileColumns of those features for every token:
// its gate and up products (as Bf16Linear's: every value is the bits Bf16Linear gives)
// land in the member's own [tokens, tile] scratch, still in cache when the activation
// reads them, where Bf16Linear then SwiGlu would write both to memory and read them
// back. The activation is rounded to bfloat16 as the next product (down) takes it and
// becomes RoundedInput(scratch), [tokens, columns] (pass `x_rounded` to that Linear);
// when `keep_float32` it is also written in float32 into gate's `y` (row stride
// `ldy`), else that is left as it was. Up's `y` is not used.
void Bf16GatedLinear(const float* x, int64_t ldx, int64_t tokens, const LinearTarget& gate,
                     const LinearTarget& up, GatedActivation activate, bool keep_float32,
                     Bf16LinearScratch* scratch, ThreadTeam* team = nullptr,
                     bool x_rounded = false);

// Output features per task: 128 keeps a token's gate and up tiles (1 KiB) and the
// member's whole scratch (2048 tokens: 2 MiB) near the core, and leaves oneDNN's
// blocking of a product of that width as it is for the whole share.
inline constexpr int64_t kGatedTileColumns = 128;

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_BF16_GATED_LINEAR_H_
