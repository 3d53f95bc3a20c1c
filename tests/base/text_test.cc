#include "base/text.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

TEST(DescribeJson, ShowsFlatValuesAsWrittenAndNestedOnesBySize) {
  EXPECT_EQ(DescribeJson(nlohmann::json("F32")), "\"F32\"");
  EXPECT_EQ(DescribeJson(nlohmann::json::array({1, 2, 3})), "[1,2,3]");
  EXPECT_EQ(DescribeJson(nlohmann::json::array({{1}, {2}})), "an array of 2 elements");
  EXPECT_EQ(DescribeJson(nlohmann::json{{"a", 1}}), "an object of 1 members");
  EXPECT_EQ(DescribeJson(
                nlohmann::json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})),
            "an array of 17 elements");
}

TEST(DescribeJson, CutsLongValuesAndNeverRecursesIntoDeepOnes) {
  const std::string shown = DescribeJson(nlohmann::json(std::string(1000, 'x')));
  EXPECT_EQ(shown.size(), 203u);
  EXPECT_TRUE(shown.ends_with("..."));
  nlohmann::json deep = nlohmann::json::array();
  for (int level = 0; level < 100000; ++level) deep = nlohmann::json::array({std::move(deep)});
  EXPECT_EQ(DescribeJson(deep), "an array of 1 elements");
  // Let the deep value go one level at a time: its own destructor would recurse.
  while (deep.is_array() && !deep.empty()) {
    nlohmann::json inner = std::move(deep[0]);
    deep = std::move(inner);
  }
}

TEST(ShapeText, WritesAShapeAsPeopleDo) {
  EXPECT_EQ(ShapeText({896, 4864}), "[896, 4864]");
  EXPECT_EQ(ShapeText({}), "[]");
}

TEST(BytesText, WritesThreeFiguresInTheLargestUnitBelowTheValue) {
  EXPECT_EQ(BytesText(512), "512 bytes");
  EXPECT_EQ(BytesText(3328), "3.25 KiB");
  EXPECT_EQ(BytesText(23.4 * (1 << 30)), "23.4 GiB");
  EXPECT_EQ(BytesText(1e30), "8.88e+14 PiB");
}

}  // namespace
}  // namespace actex
