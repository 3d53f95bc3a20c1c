#include "storage/float_convert.h"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace actex {
namespace {

uint16_t Half(uint32_t float_bits) { return FloatToHalfBits(std::bit_cast<float>(float_bits)); }

// Float bit patterns that put every rounding case in front of the converters: for
// every exponent and sign, mantissas k << s and their neighbours for every shift s,
// so exact ties, just-below and just-above ties occur at every bit position
// (normal, subnormal and overflowing results alike), plus a scrambled sweep.
std::vector<uint32_t> InterestingFloats() {
  std::vector<uint32_t> patterns;
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exponent = 0; exponent < 256; ++exponent) {
      for (int shift = 0; shift < 23; ++shift) {
        for (uint32_t k = 0; k < 64; ++k) {
          const uint32_t mantissa = (k << shift) & 0x7FFFFF;
          for (int delta = -1; delta <= 1; ++delta) {
            patterns.push_back((sign << 31) | (exponent << 23) |
                               ((mantissa + static_cast<uint32_t>(delta)) & 0x7FFFFF));
          }
        }
      }
    }
  }
  for (uint64_t i = 0; i < (uint64_t{1} << 22); ++i) {
    patterns.push_back(static_cast<uint32_t>(i * 0x9E3779B1u));
  }
  return patterns;
}

TEST(FloatToHalfBits, MatchesTheProcessorsRoundToNearestEven) {
  // F16C's VCVTPS2PH with round-to-nearest is the IEEE conversion.
  int64_t checked = 0;
  for (uint32_t bits : InterestingFloats()) {
    const float value = std::bit_cast<float>(bits);
    const uint16_t expected = _cvtss_sh(value, _MM_FROUND_TO_NEAREST_INT);
    ASSERT_EQ(FloatToHalfBits(value), expected) << std::hex << "float bits 0x" << bits;
    ++checked;
  }
  EXPECT_GT(checked, 1000000);
}

TEST(FloatToHalfBits, HandlesOverflowSubnormalsAndNan) {
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65519.996f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);  // tie with odd 65504: rounds to infinity
  EXPECT_EQ(FloatToHalfBits(-1e6f), 0xFC00);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(0x1p-14f), 0x0400);         // smallest normal
  EXPECT_EQ(FloatToHalfBits(0x1p-24f), 0x0001);         // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(0x1p-25f), 0x0000);         // tie: to even (zero)
  EXPECT_EQ(FloatToHalfBits(0x1.000002p-25f), 0x0001);  // just above the tie
  EXPECT_EQ(FloatToHalfBits(0x3p-25f), 0x0002);         // 1.5 units: tie to even 2
  EXPECT_EQ(FloatToHalfBits(0x1.ff8p-15f), 0x03FF);     // largest subnormal
  EXPECT_EQ(FloatToHalfBits(0x1.ffcp-15f), 0x0400);     // tie: rounds up into the normals
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(1e-30f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x1p-11f), 0x3C00);  // tie: to even
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x3p-11f), 0x3C02);  // tie: to even (up)
  // A NaN whose payload sits only in bits that do not fit stays NaN.
  EXPECT_EQ(Half(0x7F800001), 0x7E00);
  EXPECT_EQ(Half(0xFFC00000), 0xFE00);
}

TEST(HalfBitsToFloat, InvertsEveryHalfExactly) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float value = HalfBitsToFloat(static_cast<uint16_t>(bits));
    const float expected = _cvtsh_ss(static_cast<uint16_t>(bits));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(value)) << bits;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(value), std::bit_cast<uint32_t>(expected)) << bits;
      ASSERT_EQ(FloatToHalfBits(value), bits);
    }
  }
}

TEST(ConvertRows, ConvertsEveryValue) {
  const std::vector<float> values = {1.0f, -2.5f, 0x1p-30f, 70000.0f};
  std::vector<uint16_t> half(values.size());
  ConvertToHalf(values, half.data());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(half[i], FloatToHalfBits(values[i]));
}

}  // namespace
}  // namespace actex
