#include "model/kernels/half_float.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace actex {
namespace {

TEST(HalfFloat, Float16WidensNormalsSubnormalsAndSpecials) {
  EXPECT_EQ(Float16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(Float16ToFloat(0xc000), -2.0f);
  EXPECT_EQ(Float16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(Float16ToFloat(0x0400), std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(Float16ToFloat(0x0001), std::ldexp(1.0f, -24));     // smallest subnormal
  EXPECT_EQ(Float16ToFloat(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(Float16ToFloat(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(std::bit_cast<uint32_t>(Float16ToFloat(0x8000)), 0x80000000u);  // -0
  EXPECT_EQ(Float16ToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Float16ToFloat(0x7e00)));
}

TEST(HalfFloat, EveryFloat16SurvivesARoundTrip) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float value = Float16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    EXPECT_EQ(FloatToFloat16(value), bits) << std::hex << bits;
  }
}

TEST(HalfFloat, Float16NarrowingRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even (1).
  EXPECT_EQ(FloatToFloat16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(FloatToFloat16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(FloatToFloat16(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToFloat16(65520.0f), 0x7c00);               // rounds to infinity
  EXPECT_EQ(FloatToFloat16(std::ldexp(1.0f, -25)), 0x0000);  // tie with zero: even
  EXPECT_EQ(FloatToFloat16(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(FloatToFloat16(std::ldexp(1.0f, -30)), 0x0000);
}

TEST(HalfFloat, VectorWideningAgreesWithScalarForEverySixteenBitPattern) {
  std::vector<uint16_t> patterns(0x10000);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) patterns[bits] = static_cast<uint16_t>(bits);
  std::vector<float> half(patterns.size()), brain(patterns.size());
  WidenToFloat(patterns.data(), WeightDtype::kF16, static_cast<int64_t>(patterns.size()),
               half.data());
  WidenToFloat(patterns.data(), WeightDtype::kBF16, static_cast<int64_t>(patterns.size()),
               brain.data());
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const uint16_t pattern = static_cast<uint16_t>(bits);
    const float scalar_half = Float16ToFloat(pattern);
    if (std::isnan(scalar_half)) {
      EXPECT_TRUE(std::isnan(half[bits])) << std::hex << bits;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(half[bits]), std::bit_cast<uint32_t>(scalar_half))
          << std::hex << bits;
    }
    EXPECT_EQ(std::bit_cast<uint32_t>(brain[bits]),
              std::bit_cast<uint32_t>(Bfloat16BitsToFloat(pattern)))
        << std::hex << bits;
  }
}

// 0..40 elements from an odd address: whole sixteens (AVX-512), eights (AVX2) and a
// scalar tail, in every combination either ISA's loops meet.
TEST(HalfFloat, WideningOfEveryLengthMatchesScalarAndStopsAtTheEnd) {
  std::vector<uint8_t> bytes(2 * 41 + 1);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  for (WeightDtype dtype : {WeightDtype::kBF16, WeightDtype::kF16}) {
    for (int64_t count = 0; count <= 40; ++count) {
      std::vector<float> out(count + 1, 99.0f);
      WidenToFloat(bytes.data() + 1, dtype, count, out.data());
      for (int64_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, bytes.data() + 1 + 2 * i, 2);
        const float scalar =
            dtype == WeightDtype::kBF16 ? Bfloat16BitsToFloat(bits) : Float16ToFloat(bits);
        if (std::isnan(scalar)) {  // F16C quiets signalling NaNs; NaN is all that matters
          EXPECT_TRUE(std::isnan(out[i])) << count << " " << i;
        } else {
          EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(scalar))
              << count << " " << i;
        }
      }
      EXPECT_EQ(out[count], 99.0f) << "wrote past the end at length " << count;
    }
  }
}

TEST(HalfFloat, WidenToFloatHandlesEveryDtypeAtAnyAlignment) {
  alignas(8) uint8_t bytes[16] = {};
  const uint16_t halves[2] = {0x3c00, 0x0001};  // F16 1.0 and 2^-24
  std::memcpy(bytes + 1, halves, 4);
  float out[2];
  WidenToFloat(bytes + 1, WeightDtype::kF16, 2, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], std::ldexp(1.0f, -24));
  const uint16_t brain[2] = {0x3f80, 0xc040};  // BF16 1.0 and -3.0
  std::memcpy(bytes + 3, brain, 4);
  WidenToFloat(bytes + 3, WeightDtype::kBF16, 2, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -3.0f);
  const float floats[2] = {0.5f, -7.25f};
  std::memcpy(bytes + 5, floats, 8);
  WidenToFloat(bytes + 5, WeightDtype::kF32, 2, out);
  EXPECT_EQ(out[0], 0.5f);
  EXPECT_EQ(out[1], -7.25f);
}

TEST(HalfFloat, RoundingToBFloat16MatchesScalarForEveryDtypeLengthAndAlignment) {
  // Ties both ways, subnormals (kept, not flushed), infinities, NaN, the largest finite
  // values (which round to infinity), and random bits.
  std::vector<float> floats = {1.0f,
                               std::bit_cast<float>(0x3f808000u),  // tie, rounds down to even
                               std::bit_cast<float>(0x3f818000u),  // tie, rounds up to even
                               std::bit_cast<float>(0x00000001u),  // smallest subnormal
                               std::bit_cast<float>(0x807fffffu),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               std::bit_cast<float>(0x7f800001u),  // signalling NaN
                               std::numeric_limits<float>::max(),
                               -0.0f};
  uint32_t seed = 5;
  while (floats.size() < 40) {
    seed = seed * 1664525u + 1013904223u;
    floats.push_back(std::bit_cast<float>(seed));
  }
  // At a float's alignment (4: the vector paths) and misaligned (1: through a block).
  std::vector<uint8_t> bytes(4 * floats.size() + 4);
  for (int offset : {4, 1}) {
    std::memcpy(bytes.data() + offset, floats.data(), 4 * floats.size());
    for (int64_t count = 0; count <= 40; ++count) {
      std::vector<uint16_t> out(count + 1, 0xbeef);
      RoundToBFloat16(bytes.data() + offset, WeightDtype::kF32, count, out.data());
      for (int64_t i = 0; i < count; ++i) {
        EXPECT_EQ(out[i], FloatToBfloat16Bits(floats[i])) << offset << " " << count << " " << i;
      }
      EXPECT_EQ(out[count], 0xbeef) << "wrote past the end at length " << count;
    }
  }
  // F16 through its exact widening; BF16 copied as it is.
  const uint16_t halves[3] = {0x3c01, 0x0001, 0xfc00};  // 1 + 2^-10, 2^-24, -infinity
  uint16_t rounded[3];
  RoundToBFloat16(halves, WeightDtype::kF16, 3, rounded);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rounded[i], FloatToBfloat16Bits(Float16ToFloat(halves[i])));
  RoundToBFloat16(halves, WeightDtype::kBF16, 3, rounded);
  EXPECT_EQ(std::memcmp(rounded, halves, sizeof(halves)), 0);
}

}  // namespace
}  // namespace actex
