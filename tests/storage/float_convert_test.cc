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
uint16_t Bf16(uint32_t float_bits) { return FloatToBfloat16Bits(std::bit_cast<float>(float_bits)); }

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

// The bfloat16 nearest to `bits` by direct comparison of the two candidates in
// double precision, where both distances are exact.
uint16_t ReferenceBf16(uint32_t bits) {
  const float value = std::bit_cast<float>(bits);
  const uint32_t below = bits & 0xFFFF0000u;  // toward zero
  const double low = std::bit_cast<float>(below);
  // The next bfloat16 away from zero; past the largest finite one, the rounding
  // boundary is 2^128 as if the exponent were unbounded.
  const double high = (below & 0x7FFFFFFF) == 0x7F7F0000
                          ? std::copysign(std::ldexp(1.0, 128), value)
                          : static_cast<double>(std::bit_cast<float>(below + 0x10000));
  const double to_low = std::fabs(static_cast<double>(value) - low);
  const double to_high = std::fabs(high - static_cast<double>(value));
  const uint16_t low_bits = static_cast<uint16_t>(below >> 16);
  if (to_low < to_high) return low_bits;
  if (to_high < to_low) return static_cast<uint16_t>(low_bits + 1);
  return (low_bits & 1) ? static_cast<uint16_t>(low_bits + 1) : low_bits;
}

TEST(FloatToBfloat16Bits, MatchesNearestEvenReference) {
  for (uint32_t bits : InterestingFloats()) {
    if ((bits & 0x7FFFFFFF) >= 0x7F800000) continue;  // inf and NaN: below
    ASSERT_EQ(Bf16(bits), ReferenceBf16(bits)) << std::hex << "float bits 0x" << bits;
  }
}

TEST(FloatToBfloat16Bits, HandlesTiesOverflowSubnormalsAndNan) {
  EXPECT_EQ(Bf16(0x3F800000), 0x3F80);  // 1.0
  EXPECT_EQ(Bf16(0x3F808000), 0x3F80);  // tie: to even
  EXPECT_EQ(Bf16(0x3F818000), 0x3F82);  // tie: to even (up)
  EXPECT_EQ(Bf16(0x3F808001), 0x3F81);
  EXPECT_EQ(Bf16(0x3F807FFF), 0x3F80);
  EXPECT_EQ(Bf16(0x7F7FFFFF), 0x7F80);  // largest float rounds to infinity
  EXPECT_EQ(Bf16(0x7F7F7FFF), 0x7F7F);
  EXPECT_EQ(Bf16(0xFF7FFFFF), 0xFF80);
  EXPECT_EQ(Bf16(0x7F800000), 0x7F80);
  EXPECT_EQ(Bf16(0x00018000), 0x0002);  // subnormal tie: to even
  EXPECT_EQ(Bf16(0x80000000), 0x8000);
  // NaN stays NaN even when its payload is only in the dropped bits.
  EXPECT_EQ(Bf16(0x7F800001), 0x7FC0);
  EXPECT_EQ(Bf16(0x7FC00000), 0x7FC0);
  EXPECT_EQ(Bf16(0xFFA50000), 0xFFE5);
}

TEST(Bfloat16BitsToFloat, WidensByShifting) {
  EXPECT_EQ(Bfloat16BitsToFloat(0x3F80), 1.0f);
  EXPECT_EQ(Bfloat16BitsToFloat(0xC040), -3.0f);
  EXPECT_TRUE(std::isinf(Bfloat16BitsToFloat(0x7F80)));
}

TEST(ConvertRows, ConvertsEveryValue) {
  const std::vector<float> values = {1.0f, -2.5f, 0x1p-30f, 70000.0f};
  std::vector<uint16_t> half(values.size()), bf16(values.size());
  ConvertToHalf(values, half.data());
  ConvertToBfloat16(values, bf16.data());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(half[i], FloatToHalfBits(values[i]));
    EXPECT_EQ(bf16[i], FloatToBfloat16Bits(values[i]));
  }
}

// The row converter (vector code) rounds every pattern as the one-value converter does:
// ties, overflow to infinity, subnormals, both infinities and NaNs with any payload, so
// an output's bytes are those of earlier versions.
TEST(ConvertRows, Bfloat16RowsAreTheOneValueConverterToTheBit) {
  std::vector<uint32_t> patterns = InterestingFloats();
  for (uint32_t special :
       {0x7F800000u, 0xFF800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0x7FC00000u,
        0xFFC00001u, 0x7F800001u, 0xFFFFFFFFu, 0x80000000u, 0x00008000u, 0x00018000u}) {
    patterns.push_back(special);
  }
  std::vector<float> values(patterns.size());
  for (size_t i = 0; i < patterns.size(); ++i) values[i] = std::bit_cast<float>(patterns[i]);
  std::vector<uint16_t> rows(values.size());
  ConvertToBfloat16(values, rows.data());
  size_t differing = 0;
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (rows[i] != Bf16(patterns[i]) && ++differing <= 5) {
      ADD_FAILURE() << std::hex << patterns[i] << ": rows " << rows[i] << ", one value "
                    << Bf16(patterns[i]);
    }
  }
  EXPECT_EQ(differing, 0u);
}

}  // namespace
}  // namespace actex
