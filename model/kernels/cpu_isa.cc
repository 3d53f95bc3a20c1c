#include "model/kernels/cpu_isa.h"

#include <cpuid.h>
#include <dnnl.h>

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

std::string Bf16ProductUnits() {
  // The effective ISA is the widest one oneDNN dispatches to here (capped by
  // ONEDNN_MAX_CPU_ISA); each ISA's value holds the bits of those below it.
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const unsigned amx = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_amx);
  return (isa & amx) == amx ? "AMX" : "AVX512_BF16";
}

std::optional<std::string> Bf16SpeedWarning(const std::string& vendor, const std::string& model,
                                            const std::string& units) {
  if (vendor != "GenuineIntel" || units == "AMX") return std::nullopt;
  return "--precision bf16: this Intel CPU (" + model +
         ") runs bf16 products on AVX512_BF16 without AMX, which is slower than fp32 "
         "(0.59x fp32's tokens/s measured on such a Xeon), and fp32 equals HF's float32 "
         "model more closely: --precision fp32 is the better choice here";
}

std::string CpuVendor() {
  unsigned int max_leaf = 0, regs[3] = {};
  __get_cpuid(0, &max_leaf, &regs[0], &regs[2], &regs[1]);  // EBX, EDX, ECX spell it
  return std::string(reinterpret_cast<const char*>(regs), sizeof(regs));
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
