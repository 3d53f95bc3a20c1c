#ifndef ACTEX_BASE_VECTOR_ISA_H_
#define ACTEX_BASE_VECTOR_ISA_H_

#include <expected>
#include <string>

namespace actex {

// The vector instruction sets actex has kernels for (the model's, the writer's
// statistics). Every build targets x86-64-v3 (AVX2 + FMA + F16C), so kAvx2 is always
// available; kAvx512 needs AVX-512 F, BW, DQ and VL (Skylake-SP and later Xeons, AMD
// Zen 4 and later).
enum class VectorIsa { kAvx2, kAvx512 };

// Marks a function whose body uses AVX-512 (the instruction sets of kAvx512). Such a
// function may only run when ActiveIsa() is kAvx512; the rest of the binary stays
// x86-64-v3, so one build runs on every x86-64-v3 CPU.
#define ACTEX_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

const char* IsaName(VectorIsa isa);

// The widest ISA this CPU supports, from CPUID.
VectorIsa DetectedIsa();

// The ISA every dispatched kernel uses in this process: DetectedIsa(), unless the
// environment variable ACTEX_ISA narrows it ("avx2"), which exists so that tests and
// benchmarks can run the AVX2 kernels on an AVX-512 machine; no user needs it.
// Computed once, on first use; the same for every thread afterwards.
VectorIsa ActiveIsa();

// ActiveIsa(), or an error a user can act on when ACTEX_ISA names no ISA or one this CPU
// lacks (ActiveIsa() then falls back to DetectedIsa()). Shards call it at creation so a
// typo is refused before any work.
std::expected<VectorIsa, std::string> CheckIsaOverride();

}  // namespace actex

#endif  // ACTEX_BASE_VECTOR_ISA_H_
