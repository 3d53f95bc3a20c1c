// The start every leased-job test shares: a corpus of 4800 documents and one
// process's extraction of it, which the jobs must equal.
#ifndef ACTEX_TESTS_ACTORS_LEASED_JOB_FIXTURE_H_
#define ACTEX_TESTS_ACTORS_LEASED_JOB_FIXTURE_H_

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actex_process.h"
#include "actors/node.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {

// Every leased-job test starts from a corpus of 4800 documents and one process's extraction
// of it (`single`), which it must equal; jobs write `out`.
struct LeasedJobFixture : testing::Test {
  void SetUp() override {
    auto extracted = RunExtraction(TinyModelOptions(corpus, single, 1));
    ASSERT_TRUE(extracted) << extracted.error();
  }
  // Starts `hosts` hosts of a 2d job and kills them all with SIGKILL mid-run, once
  // host `watched` listed a shard.
  void KillAllOnceListed(int hosts, int watched) {
    ManualJob job(dir);
    std::vector<ActexProcess*> nodes = job.StartAll(hosts, corpus, "2d");
    const std::string folder = out + "/host_0" + std::to_string(watched);
    ASSERT_TRUE(WaitForFirstShard(folder, std::chrono::seconds(60))) << nodes[watched]->err();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (ActexProcess* node : nodes) node->Signal(SIGKILL);
    for (ActexProcess* node : nodes) EXPECT_NE(node->Wait(std::chrono::seconds(10)), 0);
  }

  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(4800, 48));
  const std::string single = dir.path() + "/single";
  const std::string out = dir.path() + "/out";
};

}  // namespace actex

#endif  // ACTEX_TESTS_ACTORS_LEASED_JOB_FIXTURE_H_
