#include "base/whole_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace actex {
namespace {

TEST(ReadWholeFile, ReadsEveryByteAndNamesAMissingFile) {
  const std::string path = testing::TempDir() + "/whole_file_test.bin";
  const std::string bytes("a\0b\nc", 5);
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(ReadWholeFile(path), bytes);
  std::filesystem::remove(path);
  auto missing = ReadWholeFile(path);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error(), "cannot open " + path + ": No such file or directory");
}

}  // namespace
}  // namespace actex
