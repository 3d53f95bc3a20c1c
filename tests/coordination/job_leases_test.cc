#include "coordination/job_leases.h"

#include <gtest/gtest.h>

#include "tests/actors/extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

std::unique_ptr<JobLeases> OpenOrDie(const std::string& path) {
  auto leases = JobLeases::Open(path, 4);
  EXPECT_TRUE(leases) << leases.error();
  return leases ? std::move(*leases) : nullptr;
}

int64_t GrantOrDie(JobLeases& leases, int host, int64_t corpus_chunks = -1) {
  auto granted = leases.Grant(host, corpus_chunks);
  EXPECT_TRUE(granted) << granted.error();
  return granted && *granted ? **granted : -1;
}

TEST(JobLeases, ChunkListsAreRunsOfAscendingNumbers) {
  EXPECT_EQ(JobLeases::FormatChunks({0, 1, 2, 4, 7, 8, 9}), "0-2,4,7-9");
  EXPECT_EQ(JobLeases::FormatChunks({}), "");
  EXPECT_EQ(JobLeases::ParseChunks("0-2,4,7-9"), (std::vector<int64_t>{0, 1, 2, 4, 7, 8, 9}));
  EXPECT_EQ(JobLeases::ParseChunks(""), std::vector<int64_t>{});
  for (const char* bad : {"3,1", "2-1", "1,,2", "x", "-1", "1-2-3"}) {
    EXPECT_FALSE(JobLeases::ParseChunks(bad)) << bad;
  }
}

// A restarted job: what the folders list stays listed, every other lease of the
// earlier run is void, and a chunk a folder lists that the log never heard of (the
// report was lost with its host) is not given out again.
TEST(JobLeases, ARestartKeepsWhatTheFoldersListAndGrantsTheRestAnew) {
  TempDir dir;
  const std::string log = dir.path() + "/leases.log";
  {
    auto first = OpenOrDie(log);
    for (int host : {0, 1, 0, 1}) GrantOrDie(*first, host);  // 0,2 to host 0; 1,3 to host 1
    ASSERT_TRUE(first->List(0, {0}));
    ASSERT_TRUE(first->BeginListing(1, {1}).value_or(false));
  }
  auto second = OpenOrDie(log);
  ASSERT_TRUE(second->Begin({{JobLeases::ListedKey(0), "0"}, {JobLeases::ListedKey(1), "1"}}));
  EXPECT_EQ(GrantOrDie(*second, 0), 2);
  EXPECT_EQ(GrantOrDie(*second, 0), 3);
  EXPECT_EQ(GrantOrDie(*second, 0, /*corpus_chunks=*/4), -1);
  EXPECT_FALSE(second->finished());
  ASSERT_TRUE(second->List(0, {2, 3}));
  EXPECT_TRUE(second->finished());
  EXPECT_EQ(second->Progress(), "4 of 4 chunks listed");
}

// A lost host's chunks go to the others, but those it was listing wait for its
// folder: if none else is left, the job is stalled, not finished, and says why.
TEST(JobLeases, ALostHostsListingWaitsForItsFolder) {
  TempDir dir;
  auto leases = OpenOrDie(dir.path() + "/leases.log");
  EXPECT_EQ(GrantOrDie(*leases, 1), 0);
  EXPECT_EQ(GrantOrDie(*leases, 1), 1);
  EXPECT_EQ(leases->BeginListing(2, {0}), false) << "host 2 does not hold chunk 0";
  ASSERT_TRUE(leases->BeginListing(1, {0}).value_or(false));
  ASSERT_TRUE(leases->Lose(1));
  EXPECT_EQ(GrantOrDie(*leases, 2, /*corpus_chunks=*/2), 1);
  ASSERT_TRUE(leases->List(2, {1}));
  EXPECT_TRUE(leases->stalled());
  EXPECT_FALSE(leases->finished());
  EXPECT_EQ(leases->Progress(),
            "1 of 2 chunks listed; chunks 0 wait for host-1's folder (it was lost while "
            "listing them)");
  // Its command again: its folder lists chunk 0 after all.
  ASSERT_TRUE(leases->Rejoin(1, {{JobLeases::ListedKey(1), "0"}}));
  EXPECT_TRUE(leases->finished());
}

}  // namespace
}  // namespace actex
