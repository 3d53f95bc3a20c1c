// What the model asks of the CPU: whether bf16 products may run, on what, and the
// warning where they would be slower than fp32.

#include "model/kernels/cpu_isa.h"

#include <cpuid.h>
#include <gtest/gtest.h>

namespace actex {
namespace {

TEST(Bf16ProductsSupported, NamesWhyNotUnderAvx2OrWithoutAvx512Bf16) {
  auto supported = Bf16ProductsSupported();
  if (ActiveIsa() == VectorIsa::kAvx2) {
    ASSERT_FALSE(supported.has_value());
    EXPECT_TRUE(supported.error().find("ACTEX_ISA=avx2") != std::string::npos ||
                supported.error().find("lacks AVX512_BF16") != std::string::npos)
        << supported.error();
  } else if (!__builtin_cpu_supports("avx512bf16")) {
    ASSERT_FALSE(supported.has_value());
    EXPECT_NE(supported.error().find("lacks AVX512_BF16"), std::string::npos) << supported.error();
  } else {
    EXPECT_TRUE(supported.has_value()) << supported.error();
  }
}

TEST(Bf16ProductUnits, AreAmxExactlyWhereTheCpuHasItsTilesElseAvx512Bf16) {
  const std::string units = Bf16ProductUnits();
  // CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE. oneDNN also needs Linux's
  // permission, which a kernel of 5.16 or later grants on asking.
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
  const bool amx = (edx >> 22 & 1) && (edx >> 24 & 1);
  if (amx) {
    EXPECT_TRUE(units == "AMX" || units == "AVX512_BF16") << units;
  } else {
    EXPECT_EQ(units, "AVX512_BF16");
  }
}

TEST(CpuVendor, IsCpuidsTwelveCharacters) {
  const std::string vendor = CpuVendor();
  EXPECT_EQ(vendor.size(), 12u);
  const bool known = vendor == "GenuineIntel" || vendor == "AuthenticAMD";
  if (__builtin_cpu_is("intel") || __builtin_cpu_is("amd")) {
    EXPECT_TRUE(known) << vendor;
  }
}

TEST(CpuModelName, IsNotEmpty) { EXPECT_FALSE(CpuModelName().empty()); }

TEST(Bf16SpeedWarning, WarnsOnIntelWithoutAmxNamingTheCpuAndTheBetterChoice) {
  auto warning = Bf16SpeedWarning("GenuineIntel", "Intel(R) Xeon(R) Processor", "AVX512_BF16");
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("Intel(R) Xeon(R) Processor"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("without AMX"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--precision fp32"), std::string::npos) << *warning;
}

TEST(Bf16SpeedWarning, IsSilentWithAmxAndOnAmd) {
  EXPECT_FALSE(Bf16SpeedWarning("GenuineIntel", "Intel(R) Xeon(R) Platinum 8480+", "AMX"));
  EXPECT_FALSE(Bf16SpeedWarning("AuthenticAMD", "AMD EPYC 9B45", "AVX512_BF16"));
}

}  // namespace
}  // namespace actex
