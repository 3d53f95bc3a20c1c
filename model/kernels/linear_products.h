#ifndef ACTEX_MODEL_KERNELS_LINEAR_PRODUCTS_H_
#define ACTEX_MODEL_KERNELS_LINEAR_PRODUCTS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "model/kernels/bf16_gated_linear.h"
#include "model/kernels/bf16_linear.h"
#include "model/kernels/linear.h"
#include "model/kernels/thread_team.h"
#include "model/precision.h"

namespace actex {

// How a CPU shard multiplies its Linear layers at one --precision, with the scratch
// the products reuse: fp32 by Linear (linear.h), bf16 by Bf16Linear (bf16_linear.h).
// The dense layers (cpu_shard_device.cc) and the experts (mixture_of_experts.cc) go
// through one object, so every product of a shard has one precision. Not thread-safe:
// one caller (the team's owner) at a time.
class LinearProducts {
 public:
  // bf16 needs Bf16ProductsSupported() (cpu_isa.h); the caller checks it.
  explicit LinearProducts(Precision precision) : precision_(precision) {}

  Precision precision() const { return precision_; }

  // Y[tokens, out] = X[tokens, in] · Wᵀ (+ bias[out]) at this precision; arguments as
  // Linear's (`bias` may be null; without a team the caller's thread does it all).
  void Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
              const float* bias, float* y, int64_t ldy, ThreadTeam* team = nullptr);
  // The same for every target, all reading X (linear.h's Linear of targets): one job on
  // the team, and in bf16 one rounding of X, none when `x_rounded` (X rounded already
  // into RoundedInput, bf16 only).
  void Linear(const float* x, int64_t ldx, int64_t tokens, std::span<const LinearTarget> targets,
              ThreadTeam* team = nullptr, bool x_rounded = false);
  // A gated MLP's hidden activation at this precision, into gate's `y`:
  //   activate(X · gateᵀ + gate bias, X · upᵀ + up bias)
  // bf16: the products and the activation a tile of features at a time
  // (Bf16GatedLinear), the activation left rounded in RoundedInput for the next product,
  // and in gate's `y` only when `keep_float32`. fp32: Linear of both (up's `y` as
  // scratch), then the activation on the team. Returns whether the next Linear of gate's
  // `y` may pass `x_rounded` (bf16).
  bool GatedLinear(const float* x, int64_t ldx, int64_t tokens, const LinearTarget& gate,
                   const LinearTarget& up, GatedActivation activate, bool keep_float32,
                   ThreadTeam* team, bool x_rounded = false);
  // bf16: where the next Linear of `count` input values takes X rounded to bfloat16, for
  // a caller that rounds X as it writes it (then `x_rounded`); null in fp32.
  uint16_t* RoundedInput(int64_t count);
  // The same in float32 whatever the precision: a mixture of experts' router, whose
  // logits choose experts (a discrete choice bf16 would move; the GPU does the same).
  void Float32Linear(const float* x, int64_t ldx, int64_t tokens, const WeightSlice& weight,
                     const float* bias, float* y, int64_t ldy, ThreadTeam* team = nullptr);

 private:
  const Precision precision_;
  std::vector<float> widen_scratch_;  // fp32: 16-bit weight tiles widened
  Bf16LinearScratch bf16_scratch_;    // bf16: X and weight tiles rounded, matmuls
};

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_LINEAR_PRODUCTS_H_
