#include "transport/lease_log.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/whole_file.h"
#include "tests/storage/temp_dir.h"

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

TEST(LeaseLog, AnAppendTheTableRefusesWritesNothing) {
  TempDir dir;
  const std::string path = dir.File("leases.log");
  LeaseTable table;
  auto log = LeaseLog::Open(path, 8, &table);
  ASSERT_TRUE(log) << log.error();
  EXPECT_FALSE((*log)->Append({Kind::kListed, 0, "a"}));
  EXPECT_EQ(Contents(path), "actex-leases 1 chunk_docs 8\n");
  EXPECT_EQ((*log)->records(), 0);
}

}  // namespace
}  // namespace actex
