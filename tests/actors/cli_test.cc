// The actex binary as a user runs it: refused flags, tokenize, inspect, and memory
// that stays flat when the corpus is much larger than the pipeline's queues.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "actex_process.h"
#include "extraction_reader.h"
#include "storage/shard_writer.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/parquet_test_writer.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

std::vector<std::string> ExtractArgs(const TempDir& dir, const std::string& corpus) {
  return {"extract",           "--model",  kTinyModelDir, "--data",  corpus,    "--out",
          dir.path() + "/out", "--layers", "0,1",         "--dtype", "bfloat16"};
}

TEST(Cli, UnknownFlagIsRefusedNamingIt) {
  TempDir dir;
  auto args = ExtractArgs(dir, dir.Write("c.jsonl", "{\"input_ids\":[1]}\n"));
  args.push_back("--frobnicate");
  ActexOutcome outcome = RunActex(dir, args);
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_NE((outcome.err + outcome.out).find("--frobnicate"), std::string::npos) << outcome.err;
}

TEST(Cli, EveryParseErrorExitsWithTheUsageCodeTwo) {
  TempDir dir;
  const auto base = ExtractArgs(dir, dir.Write("c.jsonl", "{\"input_ids\":[1]}\n"));
  const std::vector<std::vector<std::string>> cases = {
      {"--frobnicate"},               // unknown flag
      {"--max-seq-len", "0"},         // fails a check
      {"--max-seq-len", "many"},      // not a number
      {"--overflow", "wrap"},         // not one of the choices
      {"--shards"},                   // flag without its value
      {"--blas-threads", "100000"},   // a typo that would start 100000 threads
      {"--upload-timeout", "1e300"},  // a wait past what milliseconds hold
  };
  for (const auto& extra : cases) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    ActexOutcome outcome = RunActex(dir, args);
    EXPECT_EQ(outcome.exit_code, 2) << extra.front() << ": " << outcome.err;
    EXPECT_NE((outcome.err + outcome.out).find(extra.front()), std::string::npos) << outcome.err;
  }
  EXPECT_EQ(RunActex(dir, {"extract", "--out", dir.path() + "/out"}).exit_code, 2)
      << "required flags missing";
  EXPECT_EQ(RunActex(dir, {"frobnicate"}).exit_code, 2) << "unknown command";
  auto node = base;
  node[0] = "node";
  node.insert(node.end(), {"--num-hosts", "1", "--host-id", "0", "--coordinator", "127.0.0.1:1",
                           "--heartbeat-timeout", "1e300"});
  ActexOutcome outcome = RunActex(dir, node);
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_NE(outcome.err.find("--heartbeat-timeout"), std::string::npos) << outcome.err;
  EXPECT_EQ(RunActex(dir, {"extract", "--help"}).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out"));
}

TEST(Cli, LayerBeyondTheModelIsRefusedNamingTheFlag) {
  TempDir dir;
  auto args = ExtractArgs(dir, dir.Write("c.jsonl", "{\"input_ids\":[1]}\n"));
  args[8] = "0,7";
  ActexOutcome outcome = RunActex(dir, args);
  EXPECT_EQ(outcome.exit_code, 2) << "a usage error: the same command cannot succeed";
  EXPECT_NE(outcome.err.find("--layers 0,7: layer 7 is not in the model"), std::string::npos)
      << outcome.err;
}

TEST(Cli, ABatchPastTheMachinesMemoryIsRefusedBeforeAnyWork) {
  TempDir dir;
  auto args = ExtractArgs(dir, dir.Write("c.jsonl", "{\"input_ids\":[1]}\n"));
  args.insert(args.end(), {"--batch-tokens", "1000000000000"});
  ActexOutcome outcome = RunActex(dir, args);
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_NE(outcome.err.find("--batch-tokens 1000000000000: a batch of 1000000000000 tokens "
                             "takes at least "),
            std::string::npos)
      << outcome.err;
  EXPECT_NE(outcome.err.find("give at most "), std::string::npos) << outcome.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out"));
}

TEST(Cli, UploadFlagsThatCannotWorkAreRefusedBeforeAnyWork) {
  TempDir dir;
  const auto base = ExtractArgs(dir, dir.Write("c.jsonl", "{\"input_ids\":[1]}\n"));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--delete-after-upload"}, "--delete-after-upload needs --upload-cmd"},
      {{"--upload-cmd", "gsutil cp x gs://b/{name}"}, "has no {path}"},
      {{"--upload-cmd", "cp {path} /r/{hostdir}/{name}"}, "unknown placeholder {hostdir}"},
      {{"--upload-cmd", "cp {path} /r", "--upload-timeout", "0"}, "--upload-timeout"},
      {{"--upload-cmd", "cp {path} /r", "--upload-retries", "-1"}, "--upload-retries"}};
  for (const auto& [flags, message] : cases) {
    auto args = base;
    args.insert(args.end(), flags.begin(), flags.end());
    ActexOutcome outcome = RunActex(dir, args);
    EXPECT_NE(outcome.exit_code, 0) << message;
    EXPECT_NE(outcome.err.find(message), std::string::npos) << outcome.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out")) << message;
  }
}

TEST(Cli, ExtractThenInspectReportsWhatWasWritten) {
  TempDir dir;
  ActexOutcome extract = RunActex(
      dir,
      ExtractArgs(dir, dir.Write("c.jsonl", "{\"input_ids\":[1,2,3]}\n{\"input_ids\":[4]}\n")));
  ASSERT_EQ(extract.exit_code, 0) << extract.err;
  ActexOutcome inspect = RunActex(dir, {"inspect", dir.path() + "/out"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("2 docs, 4 tokens"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("blocks.1.hook_resid_post[64]"), std::string::npos) << inspect.out;
}

TEST(Cli, InspectMarksAnIntegerSiteI32AndGivesStatisticsOfFloatSitesOnly) {
  TempDir dir;
  ShardWriterOptions options;
  options.dir = dir.path() + "/out/host_00";
  options.sites = {{"blocks.0.hook_resid_post", 2}, {"blocks.0.mlp.hook_expert_indices", 2, true}};
  options.run_config = nlohmann::json::object();
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer) << writer.error();
  const std::vector<float> values = {1, 2};     // [1 token, 2]
  const std::vector<int32_t> experts = {3, 0};  // [1 token, top_k 2]
  const std::vector<int32_t> tokens = {5}, positions = {0};
  ASSERT_TRUE((*writer)->Add({0, tokens, positions, {SiteRows(values), SiteRows(experts)}}));
  ASSERT_TRUE((*writer)->EndChunk(0, 1));
  ASSERT_TRUE((*writer)->Finish());
  ActexOutcome inspect = RunActex(dir, {"inspect", dir.path() + "/out"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("blocks.0.hook_resid_post[2] blocks.0.mlp.hook_expert_indices[2] I32"),
            std::string::npos)
      << inspect.out;
  ActexOutcome stats = RunActex(dir, {"inspect", dir.path() + "/out", "--stats"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("blocks.0.hook_resid_post [2]: 1 rows"), std::string::npos) << stats.out;
  EXPECT_EQ(stats.out.find("hook_expert_indices"), std::string::npos) << stats.out;
}

TEST(Cli, RerunOverAFinishedOutputSaysSoInsteadOfATokenRate) {
  TempDir dir;
  const auto args =
      ExtractArgs(dir, dir.Write("c.jsonl", "{\"input_ids\":[1,2,3]}\n{\"input_ids\":[4]}\n"));
  ActexOutcome first = RunActex(dir, args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("tokens/s"), std::string::npos) << first.err;
  ActexOutcome again = RunActex(dir, args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("was already complete: 2 documents (4 tokens) in 1 shard(s); nothing "
                           "left to compute"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(again.err.find("tokens/s"), std::string::npos) << again.err;
}

TEST(Cli, TokenizePrintsFixtureIdsForTextAndForStdin) {
  TempDir dir;
  const std::string tokenizer = ACTEX_FIXTURES_DIR "/tokenizers/bpe-qwen2-style";
  std::ifstream cases(tokenizer + "/cases.jsonl");
  std::string first_line;
  std::getline(cases, first_line);
  auto expected = nlohmann::json::parse(first_line);
  ActexOutcome single = RunActex(
      dir, {"tokenize", "--tokenizer", tokenizer, "--text", expected["text"].get<std::string>()});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_EQ(nlohmann::json::parse(single.out)["ids"], expected["ids"]);

  ActexOutcome piped = RunActex(dir, {"tokenize", "--tokenizer", tokenizer},
                                dir.Write("in.jsonl", first_line + "\nnot json\n"));
  EXPECT_EQ(piped.exit_code, 1) << "a bad stdin line must show in the exit code";
  EXPECT_EQ(nlohmann::json::parse(piped.out.substr(0, piped.out.find('\n')))["ids"],
            expected["ids"]);
  EXPECT_NE(piped.err.find("line 2"), std::string::npos) << piped.err;
}

// Writes `documents` pre-tokenized lines of 400 tokens each (about 1.6 kB a line).
std::string LargeCorpus(const TempDir& dir, const std::string& name, int documents) {
  std::ofstream corpus(dir.path() + "/" + name);
  for (int doc = 0; doc < documents; ++doc) {
    corpus << "{\"input_ids\":[";
    for (int i = 0; i < 400; ++i) corpus << (i ? "," : "") << (doc * 7 + i * 13) % 512;
    corpus << "]}\n";
  }
  return dir.path() + "/" + name;
}

TEST(Cli, MemoryStaysFlatWhenTheCorpusIsFarLargerThanTheQueues) {
  TempDir dir;
  auto run = [&](const std::string& corpus) {
    auto args = ExtractArgs(dir, corpus);
    // Truncation keeps the output small while the loader still reads every line.
    args.insert(args.end(), {"--batch-tokens", "512", "--shard-size", "4MB", "--max-seq-len", "8"});
    args[8] = "0";
    std::filesystem::remove_all(dir.path() + "/out");
    ActexOutcome outcome = RunActex(dir, args);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    return outcome.max_rss_kb;
  };
  long small = run(LargeCorpus(dir, "small.jsonl", 200));
  long large = run(LargeCorpus(dir, "large.jsonl", 40000));  // ~64 MB of JSON
  RecordProperty("max_rss_kb_small", std::to_string(small));
  RecordProperty("max_rss_kb_large", std::to_string(large));
  EXPECT_LT(large, small + 16 * 1024)
      << "peak RSS grew from " << small << " kB to " << large << " kB with the corpus";
}

// The tiny model has no tokenizer, so its Parquet corpora are pre-tokenized.
TEST(Cli, ExtractsFromParquetAndFromParquetMixedWithJsonlGz) {
  TempDir dir;
  const std::string parquet =
      dir.Write("c.parquet",
                test_support::ParquetWithInputIds({{1, 2, 3}, {}, {4, 5}, {6}},
                                                  {.rows_per_group = 2, .other_columns = {"id"}}));
  ActexOutcome extract = RunActex(dir, ExtractArgs(dir, parquet));
  ASSERT_EQ(extract.exit_code, 0) << extract.err;
  ActexOutcome inspect = RunActex(dir, {"inspect", dir.path() + "/out"});
  EXPECT_NE(inspect.out.find("3 docs, 6 tokens"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("corpus: 1 Parquet files (4 rows), 0 JSONL files (0 bytes), 4 "
                             "documents in all"),
            std::string::npos)
      << inspect.out;
  std::ifstream rejects(dir.path() + "/out/host_00/rejects.jsonl");
  std::string reject;
  std::getline(rejects, reject);
  EXPECT_EQ(nlohmann::json::parse(reject)["reason"], "input_ids is empty") << reject;
  EXPECT_EQ(nlohmann::json::parse(reject)["doc_id"], 1) << reject;

  const std::string gz = dir.path() + "/d.jsonl.gz";
  const std::string lines = "{\"input_ids\":[7,8]}\n{\"input_ids\":[9]}\n";
  gzFile file = gzopen(gz.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, lines.data(), static_cast<unsigned>(lines.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
  std::filesystem::remove_all(dir.path() + "/out");
  auto args = ExtractArgs(dir, parquet);
  args.insert(args.begin() + 5, gz);  // --data c.parquet d.jsonl.gz
  extract = RunActex(dir, args);
  ASSERT_EQ(extract.exit_code, 0) << extract.err;
  inspect = RunActex(dir, {"inspect", dir.path() + "/out"});
  EXPECT_NE(inspect.out.find("5 docs, 9 tokens"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("1 JSONL files (" + std::to_string(std::filesystem::file_size(gz)) +
                             " bytes), unknown documents"),
            std::string::npos)
      << inspect.out;
}

TEST(Cli, BrokenParquetFailsNamingTheFileAndTheCause) {
  TempDir dir;
  const std::string fixtures = ACTEX_FIXTURES_DIR "/parquet/";
  for (const auto& [name, cause] : std::vector<std::pair<std::string, std::string>>{
           {"broken-text-int64.parquet", "column \"text\" has physical type INT64"},
           {"broken-bad-magic.parquet", "not a Parquet file: bad magic"}}) {
    std::filesystem::remove_all(dir.path() + "/out");
    ActexOutcome extract = RunActex(dir, ExtractArgs(dir, fixtures + name));
    EXPECT_NE(extract.exit_code, 0) << name;
    EXPECT_NE(extract.err.find("parquet file " + fixtures + name + ": " + cause), std::string::npos)
        << extract.err;
  }
}

}  // namespace
}  // namespace actex
