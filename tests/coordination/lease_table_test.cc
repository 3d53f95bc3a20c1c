#include "coordination/lease_table.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

using Kind = LeaseTable::Record::Kind;

LeaseTable::Record Granted(int64_t chunk, const std::string& holder) {
  return {Kind::kGranted, chunk, holder};
}
LeaseTable::Record Listed(int64_t chunk, const std::string& holder) {
  return {Kind::kListed, chunk, holder};
}
LeaseTable::Record Released(const std::string& holder) { return {Kind::kReleased, -1, holder}; }
LeaseTable::Record Ended(int64_t chunk) { return {Kind::kEnded, chunk, ""}; }

// Grants the next free chunk to `holder` and returns it.
int64_t GrantNext(LeaseTable& table, const std::string& holder) {
  auto grant = table.NextGrant(holder);
  EXPECT_TRUE(grant.has_value());
  if (!grant) return -1;
  EXPECT_TRUE(table.Apply(*grant).has_value());
  return grant->chunk;
}

TEST(LeaseTable, GrantsTheLowestFreeChunkToWhoeverAsksFirst) {
  LeaseTable table;
  EXPECT_EQ(GrantNext(table, "replica-0"), 0);
  EXPECT_EQ(GrantNext(table, "replica-1"), 1);
  EXPECT_EQ(GrantNext(table, "replica-0"), 2);
  EXPECT_EQ(table.HeldBy("replica-0"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(table.HolderOf(1), "replica-1");
  ASSERT_TRUE(table.Apply(Listed(0, "replica-0")));
  EXPECT_TRUE(table.IsListed(0));
  EXPECT_EQ(table.HeldBy("replica-0"), (std::vector<int64_t>{2}));
}

// Machine 1 of 3 independent jobs of one corpus leases chunks 1, 4, 7, ... only,
// lists no other, and finishes once those below the end are listed.
TEST(LeaseTable, AShareOfIndependentJobsLeasesAndListsOnlyItsOwnChunks) {
  LeaseTable table(LeaseTable::Share{1, 3});
  EXPECT_EQ(GrantNext(table, "host-0"), 1);
  EXPECT_EQ(GrantNext(table, "host-1"), 4);
  ASSERT_TRUE(table.Apply(Listed(7, "host-0"))) << "a folder may list a chunk ungranted";
  EXPECT_EQ(GrantNext(table, "host-0"), 10) << "7 is listed: passed over";
  auto foreign = table.Apply(Listed(3, "host-0"));
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().find("c % 3 == 1"), std::string::npos) << foreign.error();
  EXPECT_FALSE(table.Apply(Granted(12, "host-1"))) << "not the next free chunk of the share";
  ASSERT_TRUE(table.Apply(Ended(11)));  // the corpus has chunks 0-10
  EXPECT_FALSE(table.NextGrant("host-1"));
  for (auto [chunk, holder] : {std::pair{1, "host-0"}, {4, "host-1"}}) {
    EXPECT_FALSE(table.finished());
    ASSERT_TRUE(table.Apply(Listed(chunk, holder)));
  }
  EXPECT_FALSE(table.finished()) << "chunk 10 is not listed yet";
  ASSERT_TRUE(table.Apply(Listed(10, "host-0")));
  EXPECT_TRUE(table.finished());
}

TEST(LeaseTable, ALostHoldersUnlistedChunksGoOutAgainFirstAndItsListedOnesNever) {
  LeaseTable table;
  for (int i = 0; i < 4; ++i) GrantNext(table, i % 2 == 0 ? "a" : "b");  // a: 0, 2; b: 1, 3
  ASSERT_TRUE(table.Apply(Listed(1, "b")));
  ASSERT_TRUE(table.Apply(Released("b")));
  EXPECT_TRUE(table.HeldBy("b").empty());
  EXPECT_TRUE(table.IsListed(1));
  EXPECT_EQ(GrantNext(table, "a"), 3);  // b's unlisted chunk, before any fresh one
  EXPECT_EQ(GrantNext(table, "a"), 4);
  EXPECT_FALSE(table.Check(Granted(1, "a")));
}

TEST(LeaseTable, RefusesWhatWouldWriteAChunkTwiceOrLoseOne) {
  LeaseTable table;
  GrantNext(table, "a");
  EXPECT_FALSE(table.Apply(Granted(0, "b")));           // granted already
  EXPECT_FALSE(table.Apply(Granted(5, "b")));           // not the next free chunk
  EXPECT_FALSE(table.Apply(Listed(0, "b")));            // not b's
  EXPECT_FALSE(table.Apply({Kind::kListing, 1, "a"}));  // never granted
  EXPECT_FALSE(table.Apply(Granted(-1, "a")));          // negative
  EXPECT_FALSE(table.Apply(Granted(1, "")));            // no holder
  EXPECT_FALSE(table.Apply(Granted(1, "two words")));
  ASSERT_TRUE(table.Apply(Listed(0, "a")));
  EXPECT_FALSE(table.Apply(Listed(0, "a")));  // listed already
  EXPECT_FALSE(table.Apply(Granted(0, "a")));
  EXPECT_EQ(table.listed_chunks(), 1);
  EXPECT_EQ(table.NextGrant("b")->chunk, 1);  // the refusals changed nothing
}

TEST(LeaseTable, TheCorpusEndStopsGrantsAndTheTableFinishesWhenAllBelowItAreListed) {
  LeaseTable table;
  for (int i = 0; i < 3; ++i) GrantNext(table, "a");
  ASSERT_TRUE(table.Apply(Ended(2)));  // chunk 2 holds no document
  EXPECT_FALSE(table.NextGrant("a").has_value());
  EXPECT_FALSE(table.Apply(Ended(3)));  // the end is known
  ASSERT_TRUE(table.Apply(Listed(0, "a")));
  EXPECT_FALSE(table.finished());
  ASSERT_TRUE(table.Apply(Released("a")));  // chunk 1 goes out again, chunk 2 does not
  EXPECT_EQ(GrantNext(table, "b"), 1);
  EXPECT_FALSE(table.NextGrant("b").has_value());
  ASSERT_TRUE(table.Apply(Listed(1, "b")));
  EXPECT_TRUE(table.finished());
}

TEST(LeaseTable, DescribesEachRecordAsTheLogWritesIt) {
  EXPECT_EQ(DescribeRecord(Granted(12, "replica-1")), "granted 12 replica-1");
  EXPECT_EQ(DescribeRecord(Listed(12, "replica-1")), "listed 12 replica-1");
  EXPECT_EQ(DescribeRecord(Released("replica-1")), "released replica-1");
  EXPECT_EQ(DescribeRecord(Ended(37)), "ended 37");
}

TEST(LeaseTable, ALostHolderKeepsTheChunksItWasListingUntilItIsReleased) {
  LeaseTable table;
  EXPECT_EQ(GrantNext(table, "host-1"), 0);
  EXPECT_EQ(GrantNext(table, "host-1"), 1);
  ASSERT_TRUE(table.Apply({Kind::kListing, 1, "host-1"}));
  ASSERT_TRUE(table.Apply({Kind::kLost, -1, "host-1"}));
  // Chunk 0 is free again; chunk 1 may be in host-1's folder, so it waits for it.
  EXPECT_EQ(GrantNext(table, "host-2"), 0);
  EXPECT_EQ(table.HolderOf(1), "host-1");
  EXPECT_EQ(table.BeingListedBy("host-1"), (std::vector<int64_t>{1}));
  ASSERT_TRUE(table.Apply(Released("host-1")));  // its folder was seen without it
  EXPECT_EQ(GrantNext(table, "host-2"), 1);
  EXPECT_FALSE(table.Apply({Kind::kListing, 1, "host-3"})) << "host-3 does not hold chunk 1";
}

TEST(LeaseTable, AChunkAFolderListsWithoutAGrantIsListedAndPassedOver) {
  LeaseTable table;
  ASSERT_TRUE(table.Apply(Listed(1, "host-0")));
  ASSERT_TRUE(table.Apply(Listed(2, "host-1")));
  EXPECT_EQ(GrantNext(table, "host-0"), 0);
  EXPECT_EQ(GrantNext(table, "host-0"), 3);
  EXPECT_FALSE(table.Apply(Listed(2, "host-0"))) << "listed already";
  EXPECT_FALSE(table.Apply(Listed(3, "host-1"))) << "granted to host-0";
  EXPECT_FALSE(table.Apply(Granted(5, "host-1"))) << "not the next free chunk";
}

}  // namespace
}  // namespace actex
