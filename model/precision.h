#ifndef ACTEX_MODEL_PRECISION_H_
#define ACTEX_MODEL_PRECISION_H_

#include <expected>
#include <string>

namespace actex {

// How a device computes the forward's matrix products (--precision; metadata.json
// records it). Everything else (norms, attention, softmax, activations, the residual
// stream) is float32 either way.
enum class Precision {
  kFp32,  // float32 products, as HF transformers' float32 model
  kBf16,  // bfloat16 inputs (weights and activations rounded), float32 accumulation
};

const char* PrecisionName(Precision precision);  // "fp32", "bf16"
// "fp32" or "bf16"; anything else is refused, naming the choices.
std::expected<Precision, std::string> ParsePrecision(const std::string& text);

}  // namespace actex

#endif  // ACTEX_MODEL_PRECISION_H_
