#include "base/absolute_path.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

TEST(AbsolutePath, SpellingsOfOneFolderAgree) {
  EXPECT_EQ(AbsolutePath("m/", "/abs"), "/abs/m");
  EXPECT_EQ(AbsolutePath("./m", "/abs"), "/abs/m");
  EXPECT_EQ(AbsolutePath("/abs/m", "/elsewhere"), "/abs/m");
  EXPECT_EQ(AbsolutePath("../abs/./m//", "/elsewhere"), "/abs/m");
  EXPECT_EQ(AbsolutePath("/", "/abs"), "/");
}

TEST(AbsolutePath, GlobsKeepTheirWildcardsAndRelativePathsTakeTheCurrentDirectory) {
  EXPECT_EQ(AbsolutePath("data/*.jsonl", "/abs"), "/abs/data/*.jsonl");
  EXPECT_EQ(AbsolutePath("c.jsonl"), CurrentDirectory() + "/c.jsonl");
}

}  // namespace
}  // namespace actex
