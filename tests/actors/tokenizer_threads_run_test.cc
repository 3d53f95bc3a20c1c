// --tokenizer-threads end to end: the real actex binary extracting a text corpus with
// one tokenizer thread and with four writes the same shards and the same rejects, byte
// for byte (every document once, in order), and `actex verify` passes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "actex_process.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TokenizerThreadsRun, FourTokenizerThreadsWriteTheShardsAndRejectsOfOne) {
  TempDir dir;
  const auto run = [&](const std::string& name, std::vector<std::string> args) {
    return RunActex(dir.path() + "/" + name, std::move(args), std::chrono::seconds(240));
  };
  ActexOutcome made = run(
      "make-model", {"make-model", "--preset", "tiny", "--vocab", "3259", "--seed", "7",
                     "--tokenizer", ACTEX_FIXTURES_DIR "/tokenizers/bpe-qwen2-style/tokenizer.json",
                     "--out", dir.path() + "/model"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // The demo corpus three times over, with rejects among the documents.
  const std::string corpus = dir.path() + "/corpus.jsonl";
  {
    const std::string demo = ReadFile(ACTEX_SOURCE_DIR "/scripts/demo/corpus.jsonl");
    std::ofstream out(corpus);
    for (int copy = 0; copy < 3; ++copy) out << demo << "\n{\"text\": \"\"}\n{\"text\": 7}\n";
  }
  for (const std::string threads : {"1", "4"}) {
    ActexOutcome extracted = run("extract-" + threads, {"extract",
                                                        "--model",
                                                        dir.path() + "/model",
                                                        "--data",
                                                        corpus,
                                                        "--out",
                                                        dir.path() + "/out-" + threads,
                                                        "--layers",
                                                        "0,1",
                                                        "--sites",
                                                        "resid_post",
                                                        "--dtype",
                                                        "bfloat16",
                                                        "--max-seq-len",
                                                        "48",
                                                        "--overflow",
                                                        "split",
                                                        "--batch-tokens",
                                                        "160",
                                                        "--chunk-docs",
                                                        "5",
                                                        "--tokenizer-threads",
                                                        threads});
    ASSERT_EQ(extracted.exit_code, 0) << extracted.out << extracted.err;
    ActexOutcome verified = run("verify-" + threads, {"verify", dir.path() + "/out-" + threads});
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  }
  const std::string one = dir.path() + "/out-1/host_00", four = dir.path() + "/out-4/host_00";
  int shards = 0;
  for (const auto& entry : std::filesystem::directory_iterator(one)) {
    const std::string name = entry.path().filename();
    if (!name.starts_with("shard_")) continue;
    ++shards;
    EXPECT_EQ(ReadFile(one + "/" + name), ReadFile(four + "/" + name)) << name;
  }
  EXPECT_GT(shards, 0);
  const std::string rejects = ReadFile(one + "/rejects.jsonl");
  EXPECT_NE(rejects.find("\"doc_id\""), std::string::npos) << rejects;
  EXPECT_EQ(ReadFile(four + "/rejects.jsonl"), rejects);
}

}  // namespace
}  // namespace actex
