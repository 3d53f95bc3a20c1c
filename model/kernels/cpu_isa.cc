#include "model/kernels/cpu_isa.h"

#include <cpuid.h>

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

std::expected<void, std::string> Bf16ProductsSupported() {
  // __builtin_cpu_supports also checks that the OS saves the ZMM registers (XCR0).
  if (!__builtin_cpu_supports("avx512bf16")) {
    return std::unexpected("this CPU (" + CpuModelName() +
                           ") lacks AVX512_BF16, which bf16 products on the CPU need; use "
                           "--precision fp32 (or --device cuda)");
  }
  if (ActiveIsa() != VectorIsa::kAvx512) {
    return std::unexpected(
        "ACTEX_ISA=avx2 keeps this process to AVX2 instructions, which have no bf16 dot "
        "product; unset ACTEX_ISA for --precision bf16");
  }
  return {};
}

std::string CpuModelName() {
  unsigned int regs[12] = {};
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000004u) return "unknown CPU";
  for (unsigned int leaf = 0; leaf < 3; ++leaf) {
    __get_cpuid(0x80000002u + leaf, &regs[4 * leaf], &regs[4 * leaf + 1], &regs[4 * leaf + 2],
                &regs[4 * leaf + 3]);
  }
  std::string name(reinterpret_cast<const char*>(regs), sizeof(regs));
  name.resize(std::strlen(name.c_str()));
  const size_t first = name.find_first_not_of(' ');
  const size_t last = name.find_last_not_of(' ');
  return first == std::string::npos ? "unknown CPU" : name.substr(first, last - first + 1);
}

}  // namespace actex
