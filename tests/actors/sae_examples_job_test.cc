// The latents' top examples and density of a leased job of several `actex node`
// processes with --sae, killed mid-run and finished by fewer hosts: host 0 ends the job
// writing a latents.safetensors equal to one process's to the bit, and `actex inspect
// --latents` writes the same again.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "actex_process.h"
#include "actors/node.h"
#include "base/whole_file.h"
#include "manual_job.h"
#include "run_support.h"
#include "storage/job_latents.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kSae =
    "blocks.1.hook_resid_post=" + std::string(ACTEX_FIXTURES_DIR) + "/sae/saelens-topk";

void WithSae(ExtractOptions& extract) {
  extract.saes = {kSae};
  extract.sae_examples = 5;
}

// `actex inspect --latents OUT`'s latents.safetensors (run in a folder of `dir`).
std::string MergedLatents(const TempDir& dir, const std::string& out) {
  ActexProcess inspect(dir.path() + "/inspect", {"inspect", "--latents", out});
  EXPECT_EQ(inspect.Wait(seconds(60)), 0) << inspect.out() << inspect.err();
  EXPECT_NE(inspect.out().find("dead (never fired)"), std::string::npos) << inspect.out();
  std::printf("%s", inspect.out().substr(0, inspect.out().find('\n') + 1).c_str());
  return ReadWholeFile(out + "/" + kJobLatentsFile).value_or("");
}

TEST(SaeExamplesJob, KilledAndFinishedByFewerHostsMergesToOneProcesssLatentsBitForBit) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(1200, 48));
  const std::string single = dir.path() + "/single", out = dir.path() + "/out";
  ExtractOptions options = TinyModelOptions(corpus, single, 1);
  WithSae(options);
  auto extracted = RunExtraction(options);
  ASSERT_TRUE(extracted) << extracted.error();

  const auto with_sae = [](NodeOptions& node) { WithSae(node.extract); };
  {  // three hosts, all killed once host 1 listed a shard
    ManualJob job(dir);
    std::vector<ActexProcess*> nodes = job.StartAll(3, corpus, "2d", with_sae);
    ASSERT_TRUE(WaitForFirstShard(out + "/host_01", seconds(60))) << nodes[1]->err();
    std::this_thread::sleep_for(milliseconds(100));
    for (ActexProcess* node : nodes) node->Signal(SIGKILL);
    for (ActexProcess* node : nodes) EXPECT_NE(node->Wait(seconds(10)), 0);
  }
  // Two hosts finish it (the three hosts' commands when a killed host was listing).
  auto run = [&](int hosts) {
    ManualJob job(dir);
    std::vector<ActexProcess*> nodes = job.StartAll(hosts, corpus, "2d", with_sae);
    for (int host = 1; host < hosts; ++host) EXPECT_EQ(nodes[host]->Wait(seconds(120)), 0);
    return nodes[0]->Wait(seconds(120));
  };
  if (run(2) != 0) {
    EXPECT_EQ(run(3), 0);
  }
  const std::string at_the_end = ReadWholeFile(out + "/" + kJobLatentsFile).value_or("");
  const std::string single_at_the_end = ReadWholeFile(single + "/" + kJobLatentsFile).value_or("");
  ASSERT_FALSE(at_the_end.empty()) << "the job's end wrote no " << kJobLatentsFile;
  EXPECT_TRUE(at_the_end == single_at_the_end) << "the job's latents differ from one process's";
  const std::string merged = MergedLatents(dir, out);
  EXPECT_TRUE(merged == at_the_end) << "inspect --latents merged other bits than the job's end";
  ExpectVerified(dir, out);  // latents.safetensors beside the host folders included
  ASSERT_FALSE(merged.empty());
  EXPECT_TRUE(merged == MergedLatents(dir, single))
      << "the job's latents differ from one process's";
}

}  // namespace
}  // namespace actex
