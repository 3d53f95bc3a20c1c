// ActiveIsa's choice narrowed by ACTEX_ISA (base/vector_isa.h): avx2 always, avx512 only
// where the CPU has it, anything else refused naming what was given.
#include "base/vector_isa.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace actex {
namespace {

// Sets ACTEX_ISA for one test and restores what the process had.
class IsaOverride {
 public:
  explicit IsaOverride(const char* value) {
    if (const char* old = getenv("ACTEX_ISA")) saved_ = old, had_ = true;
    if (value)
      setenv("ACTEX_ISA", value, 1);
    else
      unsetenv("ACTEX_ISA");
  }
  ~IsaOverride() {
    if (had_)
      setenv("ACTEX_ISA", saved_.c_str(), 1);
    else
      unsetenv("ACTEX_ISA");
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(CheckIsaOverride, UnsetMeansTheWidestTheCpuHas) {
  IsaOverride unset(nullptr);
  ASSERT_TRUE(CheckIsaOverride().has_value());
  EXPECT_EQ(*CheckIsaOverride(), DetectedIsa());
}

TEST(CheckIsaOverride, Avx2IsAlwaysAvailable) {
  IsaOverride avx2("avx2");
  ASSERT_TRUE(CheckIsaOverride().has_value());
  EXPECT_EQ(*CheckIsaOverride(), VectorIsa::kAvx2);
}

TEST(CheckIsaOverride, Avx512IsRefusedWhereTheCpuLacksIt) {
  IsaOverride avx512("avx512");
  auto isa = CheckIsaOverride();
  if (DetectedIsa() == VectorIsa::kAvx512) {
    ASSERT_TRUE(isa.has_value());
    EXPECT_EQ(*isa, VectorIsa::kAvx512);
  } else {
    ASSERT_FALSE(isa.has_value());
    EXPECT_NE(isa.error().find("lacks AVX-512"), std::string::npos) << isa.error();
  }
}

TEST(CheckIsaOverride, AnUnknownNameIsRefusedNamingIt) {
  IsaOverride typo("avx-512");
  auto isa = CheckIsaOverride();
  ASSERT_FALSE(isa.has_value());
  EXPECT_NE(isa.error().find("ACTEX_ISA=avx-512"), std::string::npos) << isa.error();
}

}  // namespace
}  // namespace actex
