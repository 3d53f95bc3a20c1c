#include "model/kernels/rotary.h"

#include <gtest/gtest.h>

#include <cmath>

namespace actex {
namespace {

TEST(RotaryTable, BuildsHfTablesInFloat32) {
  RotaryTable table(16, 1e6f);
  table.Reserve(300);
  EXPECT_EQ(table.size(), 300);
  for (int64_t position : {0, 1, 7, 299}) {
    for (int j = 0; j < 8; ++j) {
      const float inv_freq = 1.0f / std::pow(1e6f, static_cast<float>(2 * j) / 16.0f);
      const float angle = static_cast<float>(position) * inv_freq;
      EXPECT_EQ(table.cos(position)[j], std::cos(angle)) << position << " " << j;
      EXPECT_EQ(table.sin(position)[j], std::sin(angle)) << position << " " << j;
    }
  }
  table.Reserve(10);  // never shrinks
  EXPECT_EQ(table.size(), 300);
}

TEST(ApplyRotary, RotatesPairsJAndJPlusHalfByThePositionAngle) {
  const int dim = 8, heads = 2;
  RotaryTable table(dim, 10000.0f);
  table.Reserve(50);
  const int64_t ld = heads * dim + 3;
  std::vector<float> rows(2 * ld);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.1f * static_cast<float>(i) - 1.0f;
  const std::vector<float> original = rows;
  const int32_t positions[2] = {0, 42};
  ApplyRotary(rows.data(), 2, ld, heads, dim, positions, table);
  for (int h = 0; h < heads; ++h) {
    for (int j = 0; j < dim; ++j) {
      EXPECT_EQ(rows[h * dim + j], original[h * dim + j]);  // position 0: identity
    }
    for (int j = 0; j < dim / 2; ++j) {
      const double angle = 42.0 * std::pow(10000.0, -2.0 * j / dim);
      const double a = original[ld + h * dim + j], b = original[ld + h * dim + j + dim / 2];
      EXPECT_NEAR(rows[ld + h * dim + j], a * std::cos(angle) - b * std::sin(angle), 1e-5);
      EXPECT_NEAR(rows[ld + h * dim + j + dim / 2], b * std::cos(angle) + a * std::sin(angle),
                  1e-5);
    }
  }
  for (int64_t i = heads * dim; i < ld; ++i) EXPECT_EQ(rows[ld + i], original[ld + i]);
}

}  // namespace
}  // namespace actex
