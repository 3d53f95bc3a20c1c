#include "base/vector_isa.h"

#include <cstdlib>
#include <cstring>

namespace actex {
namespace {

std::expected<VectorIsa, std::string> IsaFromEnvironment() {
  const char* value = std::getenv("ACTEX_ISA");
  if (value == nullptr || *value == '\0') return DetectedIsa();
  VectorIsa wanted;
  if (std::strcmp(value, "avx2") == 0) {
    wanted = VectorIsa::kAvx2;
  } else if (std::strcmp(value, "avx512") == 0) {
    wanted = VectorIsa::kAvx512;
  } else {
    return std::unexpected("ACTEX_ISA=" + std::string(value) +
                           " names no instruction set: use avx2 or avx512, or unset it");
  }
  if (wanted == VectorIsa::kAvx512 && DetectedIsa() != VectorIsa::kAvx512) {
    return std::unexpected(
        "ACTEX_ISA=avx512, but this CPU lacks AVX-512 (F, BW, DQ and VL); unset ACTEX_ISA");
  }
  return wanted;
}

}  // namespace

const char* IsaName(VectorIsa isa) { return isa == VectorIsa::kAvx512 ? "avx512" : "avx2"; }

VectorIsa DetectedIsa() {
  // __builtin_cpu_supports also checks that the OS saves the ZMM registers (XCR0).
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return avx512 ? VectorIsa::kAvx512 : VectorIsa::kAvx2;
}

VectorIsa ActiveIsa() {
  static const VectorIsa active = IsaFromEnvironment().value_or(DetectedIsa());
  return active;
}

std::expected<VectorIsa, std::string> CheckIsaOverride() { return IsaFromEnvironment(); }

}  // namespace actex
