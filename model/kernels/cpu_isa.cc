#include "model/kernels/cpu_isa.h"

#include <cpuid.h>

#include <cstring>

namespace actex {

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
