#include "coordination/lease_log.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "base/whole_file.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using Kind = LeaseTable::Record::Kind;

std::string Contents(const std::string& path) {
  auto text = ReadWholeFile(path);
  EXPECT_TRUE(text.has_value());
  return text ? *text : "";
}

TEST(LeaseLog, ReplayingTheLogRebuildsTheTable) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  LeaseTable written;
  {
    auto log = LeaseLog::Open(path, 64, &written);
    ASSERT_TRUE(log) << log.error();
    for (const char* holder : {"a", "b", "a", "b"}) {
      ASSERT_TRUE((*log)->Append(*written.NextGrant(holder)));
    }
    ASSERT_TRUE((*log)->Append({Kind::kListed, 1, "b"}));
    ASSERT_TRUE((*log)->Append({Kind::kReleased, -1, "b"}));
    ASSERT_TRUE((*log)->Append({Kind::kEnded, 5, ""}));
  }
  EXPECT_EQ(Contents(path),
            "actex-leases 1 chunk_docs 64\ngranted 0 a\ngranted 1 b\ngranted 2 a\ngranted 3 b\n"
            "listed 1 b\nreleased b\nended 5\n");
  LeaseTable replayed;
  auto log = LeaseLog::Open(path, 64, &replayed);
  ASSERT_TRUE(log) << log.error();
  EXPECT_EQ((*log)->records(), 7);
  EXPECT_EQ(replayed.HeldBy("a"), written.HeldBy("a"));
  EXPECT_TRUE(replayed.IsListed(1));
  EXPECT_EQ(replayed.end(), 5);
  EXPECT_EQ(replayed.NextGrant("c"), written.NextGrant("c"));  // chunk 3, b's, first
}

TEST(LeaseLog, ListingAndLossRecordsReplay) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  {
    std::ofstream(path) << "actex-leases 1 chunk_docs 8\ngranted 0 host-1\ngranted 1 host-1\n"
                           "listing 1 host-1\nlost host-1\n";
  }
  LeaseTable table;
  auto log = LeaseLog::Open(path, 8, &table);
  ASSERT_TRUE(log) << log.error();
  EXPECT_EQ(table.HeldBy("host-1"), (std::vector<int64_t>{1}));
  EXPECT_EQ(table.BeingListedBy("host-1"), (std::vector<int64_t>{1}));
  EXPECT_EQ(table.NextGrant("host-2")->chunk, 0);
}

TEST(LeaseLog, ATornLastLineNeverTookEffectAndIsCutOff) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  {
    LeaseTable table;
    auto log = LeaseLog::Open(path, 8, &table);
    ASSERT_TRUE(log) << log.error();
    ASSERT_TRUE((*log)->Append(*table.NextGrant("a")));
  }
  std::ofstream(path, std::ios::app) << "granted 1";  // a crash mid-append
  LeaseTable table;
  auto log = LeaseLog::Open(path, 8, &table);
  ASSERT_TRUE(log) << log.error();
  EXPECT_EQ(table.NextGrant("b")->chunk, 1);
  ASSERT_TRUE((*log)->Append(*table.NextGrant("b")));
  EXPECT_EQ(Contents(path), "actex-leases 1 chunk_docs 8\ngranted 0 a\ngranted 1 b\n");
}

TEST(LeaseLog, RefusesAnotherChunkSizeOrAFileThatIsNoLeaseLog) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  {
    LeaseTable table;
    ASSERT_TRUE(LeaseLog::Open(path, 8, &table));
  }
  LeaseTable table;
  auto other = LeaseLog::Open(path, 64, &table);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("--chunk-docs"), std::string::npos) << other.error();
  WriteBytes(dir.File("notes.txt"), "shopping list\n");
  auto foreign = LeaseLog::Open(dir.File("notes.txt"), 8, &table);
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().find("notes.txt"), std::string::npos) << foreign.error();
}

TEST(LeaseLog, ARecordTheTableRefusesIsNamedByItsLine) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  WriteBytes(path, "actex-leases 1 chunk_docs 8\ngranted 0 a\nlisted 0 b\n");
  LeaseTable table;
  auto log = LeaseLog::Open(path, 8, &table);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().find("line 3"), std::string::npos) << log.error();
  WriteBytes(path, "actex-leases 1 chunk_docs 8\ngranted zero a\n");
  LeaseTable fresh;
  log = LeaseLog::Open(path, 8, &fresh);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().find("line 2"), std::string::npos) << log.error();
}

TEST(LeaseLog, EveryWordOfEveryLineEditedCarelesslyIsReplayedOrRefusedNamingTheLine) {
  // A log as actex writes it; each word of each line in turn is replaced, dropped or
  // doubled. Replaying must never crash: it either takes the edited log as records
  // the table accepts, or refuses it naming the file and the line.
  const std::vector<std::string> lines = {"actex-leases 1 chunk_docs 8",
                                          "granted 0 a",
                                          "granted 1 b",
                                          "listing 1 b",
                                          "listed 1 b",
                                          "lost a",
                                          "released a",
                                          "ended 5"};
  const std::vector<std::string> words = {
      "", "-1", "x", "99999999999999999999", "null", "1.5", "{}", "0x10", " ", "\xff"};
  TempDir dir;
  const std::string path = dir.File("leases.log");
  int edits = 0, refused = 0;
  for (size_t line = 0; line < lines.size(); ++line) {
    std::vector<std::string> parts;
    for (size_t start = 0; start <= lines[line].size();) {
      const size_t space = std::min(lines[line].find(' ', start), lines[line].size());
      parts.push_back(lines[line].substr(start, space - start));
      start = space + 1;
    }
    for (size_t word = 0; word <= parts.size(); ++word) {
      for (const std::string& replacement : words) {
        std::vector<std::string> edited_parts = parts;
        if (word < parts.size()) {
          edited_parts[word] = replacement;
        } else {
          edited_parts.push_back(replacement);  // a word too many
        }
        std::string text;
        for (size_t i = 0; i < lines.size(); ++i) {
          std::string this_line;
          for (const std::string& part : i == line ? edited_parts : std::vector{lines[i]}) {
            this_line += (this_line.empty() ? "" : " ") + part;
          }
          text += this_line + "\n";
        }
        WriteBytes(path, text);
        LeaseTable table;
        auto log = LeaseLog::Open(path, 8, &table);
        ++edits;
        if (log) continue;
        ++refused;
        EXPECT_NE(log.error().find(path), std::string::npos) << text << log.error();
        EXPECT_TRUE(line == 0 || log.error().find("line ") != std::string::npos)
            << text << log.error();
      }
    }
  }
  EXPECT_GT(refused, edits / 2);
}

TEST(LeaseLog, AnAppendTheTableRefusesWritesNothing) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  LeaseTable table;
  auto log = LeaseLog::Open(path, 8, &table);
  ASSERT_TRUE(log) << log.error();
  EXPECT_FALSE((*log)->Append({Kind::kListing, 0, "a"}));  // never granted
  EXPECT_EQ(Contents(path), "actex-leases 1 chunk_docs 8\n");
  EXPECT_EQ((*log)->records(), 0);
}

// A standby's batch goes in whole or not at all: one record the table refuses after
// the ones before it leaves the file, the table and the lines as they were.
TEST(LeaseLog, ABatchIsAppendedWholeOrNotAtAll) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  LeaseTable table;
  auto log = LeaseLog::Open(path, 8, &table);
  ASSERT_TRUE(log) << log.error();
  ASSERT_TRUE((*log)->AppendAll({{Kind::kGranted, 0, "a"}, {Kind::kListing, 0, "a"}}));
  EXPECT_FALSE((*log)->AppendAll({{Kind::kListed, 0, "a"}, {Kind::kGranted, 5, "b"}}));
  EXPECT_EQ(Contents(path), "actex-leases 1 chunk_docs 8\ngranted 0 a\nlisting 0 a\n");
  EXPECT_EQ((*log)->lines(), (std::vector<std::string>{"granted 0 a", "listing 0 a"}));
  EXPECT_FALSE(table.IsListed(0));
  LeaseTable replayed;
  auto reopened = LeaseLog::Open(path, 8, &replayed);
  ASSERT_TRUE(reopened) << reopened.error();
  EXPECT_EQ(replayed.BeingListedBy("a"), (std::vector<int64_t>{0}));
}

// A full disk (here: a file size limit, which fails writes with EFBIG as ENOSPC fails
// them) ends an append with an error naming the log, and leaves no partial record:
// the log replays to exactly the table the appends that succeeded built.
TEST(LeaseLog, AFullDiskFailsTheAppendAndLeavesOnlyWholeRecords) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child runs against the limit alone; it reports by its exit code.
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{200, 200};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    LeaseTable table;
    auto log = LeaseLog::Open(path, 8, &table);
    if (!log) _exit(11);
    std::expected<void, std::string> appended;
    int64_t granted = 0;
    while (appended) {
      appended = (*log)->Append(*table.NextGrant("replica-with-a-long-name"));
      if (appended) ++granted;
    }
    if (appended.error().find(path) == std::string::npos) _exit(12);
    if (table.NextGrant("x")->chunk != granted) _exit(13);  // the failed grant never applied
    LeaseTable replayed;
    if (!LeaseLog::Open(path, 8, &replayed)) _exit(14);
    if (replayed.NextGrant("x")->chunk != granted || granted == 0) _exit(15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the check that failed: see the exit codes above";
  const std::string text = Contents(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_LE(text.size(), 200u);
}

}  // namespace
}  // namespace actex
