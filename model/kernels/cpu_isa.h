#ifndef ACTEX_MODEL_KERNELS_CPU_ISA_H_
#define ACTEX_MODEL_KERNELS_CPU_ISA_H_

#include <expected>
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

// "AMD EPYC 9B45" etc.: the CPU's brand string, for benchmark reports.
std::string CpuModelName();

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_CPU_ISA_H_
