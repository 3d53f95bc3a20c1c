#ifndef ACTEX_MODEL_KERNELS_CPU_ISA_H_
#define ACTEX_MODEL_KERNELS_CPU_ISA_H_

#include <expected>
#include <optional>
#include <string>

// VectorIsa, ActiveIsa() and ACTEX_TARGET_AVX512 live in base/ (the writer's statistics
// dispatch too); this header adds what only the model asks of the CPU.
#include "base/vector_isa.h"

namespace actex {

// Whether this process may run bfloat16 products (--precision bf16 on the CPU): the
// CPU has AVX512_BF16 (VDPBF16PS: two bf16 products per float32 lane per instruction;
// every AMX CPU has it too) and ActiveIsa() is kAvx512. Otherwise an error naming why:
// the CPU lacks it, or ACTEX_ISA=avx2 keeps this process to AVX2 instructions, which
// have no bf16 dot product (oneDNN could only emulate one).
std::expected<void, std::string> Bf16ProductsSupported();

// What oneDNN runs bf16 products on in this process: "AMX" (the tile units: the CPU has
// them and Linux lets the process use them, which oneDNN asks for) or "AVX512_BF16".
std::string Bf16ProductUnits();

// The warning --precision bf16 on the CPU deserves, or nothing, given the CPU's `vendor`
// (CpuVendor()), `model` (CpuModelName()) and `units` (Bf16ProductUnits()). On an Intel CPU
// without AMX, VDPBF16PS (two bf16 products a lane) did fewer products a second than
// fp32's FMAs (53-59 against 88-174 GFLOPS on one core of a Xeon), so bf16 is slower
// than fp32 there, and less exact: 0.59x fp32's tokens/s (bench/README.md). On AMD's Zen 5 bf16 ran
// 1.7-1.9x fp32; AMX multiplies whole tiles.
std::optional<std::string> Bf16SpeedWarning(const std::string& vendor, const std::string& model,
                                            const std::string& units);

// "GenuineIntel", "AuthenticAMD", ...: CPUID's vendor string.
std::string CpuVendor();

// "AMD EPYC 9B45" etc.: the CPU's brand string, for benchmark reports.
std::string CpuModelName();

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_CPU_ISA_H_
