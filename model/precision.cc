#include "model/precision.h"

namespace actex {

const char* PrecisionName(Precision precision) {
  return precision == Precision::kBf16 ? "bf16" : "fp32";
}

std::expected<Precision, std::string> ParsePrecision(const std::string& text) {
  if (text == "fp32") return Precision::kFp32;
  if (text == "bf16") return Precision::kBf16;
  return std::unexpected("precision '" + text + "' is neither fp32 nor bf16");
}

}  // namespace actex
