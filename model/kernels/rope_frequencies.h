#ifndef ACTEX_MODEL_KERNELS_ROPE_FREQUENCIES_H_
#define ACTEX_MODEL_KERNELS_ROPE_FREQUENCIES_H_

#include <vector>

#include "model/model_config.h"

namespace actex {

// The rotary inverse frequencies [head_dim / 2] as HF's rope init functions compute
// them, in float32: default inv_freq[j] = 1 / theta^(2j / head_dim); `linear` divides
// every one by factor; `llama3` keeps the short wavelengths (< original / high_freq),
// divides the long ones (> original / low_freq) by factor and blends in between.
std::vector<float> RopeInverseFrequencies(int head_dim, const RopeConfig& rope);

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_ROPE_FREQUENCIES_H_
