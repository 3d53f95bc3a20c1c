#include "base/bfloat16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace actex {
namespace {

uint16_t Bf16(uint32_t float_bits) { return FloatToBfloat16Bits(std::bit_cast<float>(float_bits)); }

// The bfloat16 nearest to `bits` by direct comparison of the two candidates in double
// precision, where both distances are exact; ties to the even one.
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
  const auto low_bits = static_cast<uint16_t>(below >> 16);
  if (to_low < to_high) return low_bits;
  if (to_high < to_low) return static_cast<uint16_t>(low_bits + 1);
  return (low_bits & 1) ? static_cast<uint16_t>(low_bits + 1) : low_bits;
}

// Every sign and exponent (subnormals, the largest binade and its overflow included)
// with kept mantissas of both parities and the dropped halves around every rounding
// boundary: below, at and above the tie, zero and all ones.
std::vector<uint32_t> RoundingCases() {
  std::vector<uint32_t> patterns;
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exponent = 0; exponent < 255; ++exponent) {
      for (uint32_t kept : {0x00u, 0x01u, 0x02u, 0x3Fu, 0x40u, 0x55u, 0x7Eu, 0x7Fu}) {
        for (uint32_t dropped : {0x0000u, 0x0001u, 0x4000u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
          patterns.push_back((sign << 31) | (exponent << 23) | (kept << 16) | dropped);
        }
      }
    }
  }
  return patterns;
}

TEST(FloatToBfloat16Bits, MatchesNearestEvenReference) {
  for (uint32_t bits : RoundingCases()) {
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
  EXPECT_EQ(Bf16(0x007FFFFF), 0x0080);  // the largest subnormal rounds to the smallest normal
  EXPECT_EQ(Bf16(0x80000000), 0x8000);
  // NaN stays NaN even when its payload is only in the dropped bits.
  EXPECT_EQ(Bf16(0x7F800001), 0x7FC0);
  EXPECT_EQ(Bf16(0x7FC00000), 0x7FC0);
  EXPECT_EQ(Bf16(0xFFA50000), 0xFFE5);
}

TEST(Bfloat16BitsToFloat, WidensByShifting) {
  EXPECT_EQ(Bfloat16BitsToFloat(0x3F80), 1.0f);
  EXPECT_EQ(Bfloat16BitsToFloat(0xC040), -3.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(Bfloat16BitsToFloat(0x1234)), 0x12340000u);
  EXPECT_TRUE(std::isinf(Bfloat16BitsToFloat(0x7F80)));
}

// The vector paths (ctest runs this a second time as avx2.*) round as the one-value
// rule does: every rounding case above, and 2^28 patterns spread over all 2^32 (every
// top 28 bits, the low four varying: they decide only exact ties, which the cases
// above hold at every exponent).
TEST(ConvertToBfloat16, RoundsAsTheOneValueRule) {
  const std::vector<uint32_t> cases = RoundingCases();
  std::vector<float> values(cases.size());
  std::vector<uint16_t> rounded(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) values[i] = std::bit_cast<float>(cases[i]);
  ConvertToBfloat16(values, rounded.data());
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(rounded[i], Bf16(cases[i])) << std::hex << "float bits 0x" << cases[i];
  }
  constexpr uint32_t kChunk = uint32_t{1} << 20;
  values.resize(kChunk);
  rounded.resize(kChunk);
  uint64_t differing = 0;
  for (uint64_t first = 0; first < (uint64_t{1} << 28); first += kChunk) {
    auto pattern = [&](uint32_t i) {
      const auto high = static_cast<uint32_t>(first + i);
      return (high << 4) | ((high * 7) & 15);
    };
    for (uint32_t i = 0; i < kChunk; ++i) values[i] = std::bit_cast<float>(pattern(i));
    ConvertToBfloat16(values, rounded.data());
    for (uint32_t i = 0; i < kChunk; ++i) {
      if (rounded[i] != Bf16(pattern(i)) && ++differing <= 5) {
        ADD_FAILURE() << std::hex << "float bits 0x" << pattern(i) << ": " << rounded[i] << ", not "
                      << Bf16(pattern(i));
      }
    }
  }
  EXPECT_EQ(differing, 0u);
}

// A subnormal at any place of a group of normal values (VCVTNE2PS2BF16 would flush it),
// at every length and alignment: the whole groups, the sixteens and the tail alike.
TEST(ConvertToBfloat16, KeepsSubnormalsAtAnyPlaceLengthAndAlignment) {
  for (int offset = 0; offset < 3; ++offset) {
    for (int count = 0; count <= 100; ++count) {
      for (int subnormal = 0; subnormal < count; subnormal += 7) {
        std::vector<float> values(static_cast<size_t>(count + offset));
        for (int i = 0; i < count + offset; ++i) values[i] = 1.0f + 0x1.01p-9f * i;
        values[static_cast<size_t>(offset + subnormal)] = std::bit_cast<float>(0x00018000u);
        std::vector<uint16_t> rounded(static_cast<size_t>(count + offset + 1), 0xABCD);
        ConvertToBfloat16({values.data() + offset, static_cast<size_t>(count)},
                          rounded.data() + offset);
        for (int i = 0; i < count; ++i) {
          ASSERT_EQ(rounded[offset + i], FloatToBfloat16Bits(values[offset + i]))
              << "offset " << offset << ", count " << count << ", value " << i;
        }
        ASSERT_EQ(rounded[offset + count], 0xABCD) << "written past the end";
      }
    }
  }
}

}  // namespace
}  // namespace actex
