#include "base/whole_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace actex {
namespace {

TEST(ReadWholeFile, ReadsEveryByteAndNamesAMissingFile) {
  const std::string path = ::testing::TempDir() + "/whole_file_test.bin";
  const std::string bytes("a\0b\nc", 5);
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(ReadWholeFile(path), bytes);
  std::filesystem::remove(path);
  auto missing = ReadWholeFile(path);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error(), "cannot open " + path + ": No such file or directory");
}

// A FIFO would block open(2) and read(2) forever; it must be refused at once.
TEST(ReadWholeFile, RefusesAFifoADeviceAndADirectoryNamingWhatTheyAre) {
  const std::string dir = ::testing::TempDir() + "/whole_file_kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  EXPECT_EQ(ReadWholeFile(dir + "/fifo").error(),
            dir + "/fifo is a FIFO (named pipe), not a regular file");
  std::filesystem::create_symlink("/dev/zero", dir + "/zero");
  EXPECT_EQ(ReadWholeFile(dir + "/zero").error(),
            dir + "/zero is a character device, not a regular file");
  EXPECT_EQ(ReadWholeFile(dir).error(), dir + " is a directory, not a regular file");
  std::filesystem::remove_all(dir);
}

TEST(ReadWholeFile, RefusesAFileOverTheBoundUnread) {
  const std::string path = ::testing::TempDir() + "/whole_file_big";
  std::ofstream(path) << "0123456789";
  EXPECT_EQ(ReadWholeFile(path, 10), "0123456789");
  EXPECT_EQ(ReadWholeFile(path, 9).error(),
            path +
                " is 10 bytes, more than the 9 bytes actex reads of such a file; is it the "
                "right file?");
  std::filesystem::remove(path);
}

TEST(ReadWholeFile, SaysWhereADanglingOrLoopingSymlinkPoints) {
  const std::string dir = ::testing::TempDir() + "/whole_file_links";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  std::filesystem::create_symlink(dir + "/gone", dir + "/dangling");
  EXPECT_EQ(ReadWholeFile(dir + "/dangling").error(),
            dir + "/dangling is a symbolic link to " + dir +
                "/gone, which does not exist; point it at the file or copy the file there");
  std::filesystem::create_symlink("loop", dir + "/loop");
  EXPECT_NE(ReadWholeFile(dir + "/loop")
                .error()
                .find(dir + "/loop is a symbolic link to loop that loops"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace actex
