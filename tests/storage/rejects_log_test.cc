#include "storage/rejects_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/test_files.h"

namespace actex {
namespace {

std::vector<nlohmann::json> ReadLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(ReadBytes(path));
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(RejectsLog, WritesOneJsonObjectPerRejectVisibleImmediately) {
  TempDir dir;
  const std::string path = dir.File("host_00/rejects.jsonl");  // parent created on open
  auto log = RejectsLog::Open(path);
  ASSERT_TRUE(log.has_value()) << log.error();
  ASSERT_TRUE((*log)->Add(3, "corpus/a.jsonl", 4, "blank line").has_value());
  // Read while the log is still open: nothing waits in a user-space buffer.
  auto lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            nlohmann::json::parse(
                R"({"doc_id":3,"file":"corpus/a.jsonl","line":4,"reason":"blank line"})"));
  ASSERT_TRUE((*log)->Add(9, "b \"q\".jsonl", 1, "invalid JSON: x\ny").has_value());
  lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["file"], "b \"q\".jsonl");
  EXPECT_EQ(lines[1]["reason"], "invalid JSON: x\ny");
  EXPECT_EQ((*log)->count(), 2);
}

TEST(RejectsLog, AppendsToAnExistingLog) {
  TempDir dir;
  const std::string path = dir.File("rejects.jsonl");
  {
    auto log = RejectsLog::Open(path);
    ASSERT_TRUE(log.has_value()) << log.error();
    ASSERT_TRUE((*log)->Add(1, "a", 1, "r1").has_value());
  }
  auto log = RejectsLog::Open(path);
  ASSERT_TRUE(log.has_value()) << log.error();
  ASSERT_TRUE((*log)->Add(2, "a", 2, "r2").has_value());
  EXPECT_EQ((*log)->count(), 1);
  auto lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["doc_id"], 1);
  EXPECT_EQ(lines[1]["doc_id"], 2);
}

TEST(RejectsLog, KeepsLogValidJsonForFileNamesThatAreNotUtf8) {
  TempDir dir;
  auto log = RejectsLog::Open(dir.File("rejects.jsonl"));
  ASSERT_TRUE(log.has_value()) << log.error();
  ASSERT_TRUE((*log)->Add(0, "caf\xE9.jsonl", 1, "blank line").has_value());
  auto lines = ReadLines(dir.File("rejects.jsonl"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["file"], "caf\xEF\xBF\xBD.jsonl");
}

TEST(RejectsLog, ReportsUnopenablePath) {
  TempDir dir;
  WriteBytes(dir.File("file"), "x");
  auto log = RejectsLog::Open(dir.File("file/rejects.jsonl"));
  ASSERT_FALSE(log.has_value());
  EXPECT_THAT(log.error(), ::testing::HasSubstr(dir.File("file")));
}

}  // namespace
}  // namespace actex
