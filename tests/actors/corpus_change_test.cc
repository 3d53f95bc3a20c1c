// A corpus changed between a run and its resume (or its verify): the listed chunks'
// digests tell, so the resume is refused naming the file and `actex verify` faults
// the output, instead of mixing two corpora's documents under one doc id numbering.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "actex_process.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "manual_job.h"
#include "run_support.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

// Swaps lines `a` and `b` (0-based) of `path`: the file keeps its size in bytes, so
// the corpus_size recorded at the run's start cannot tell.
void SwapLines(const std::string& path, size_t a, size_t b) {
  std::vector<std::string> lines = Lines(path);
  ASSERT_NE(lines[a], lines[b]);
  const auto size = fs::file_size(path);
  std::swap(lines[a], lines[b]);
  std::ofstream file(path, std::ios::trunc);
  for (const std::string& line : lines) file << line << '\n';
  file.close();
  ASSERT_EQ(fs::file_size(path), size);
}

TEST(CorpusChange, EveryListedChunkCarriesTheDigestOfWhatTheLoaderRead) {
  TempDir dir;
  const ExtractOptions options =
      SmallShardOptions(dir.Write("corpus.jsonl", Corpus(30)), dir.path() + "/out");
  ASSERT_TRUE(RunExtraction(options));
  const nlohmann::json metadata = Metadata(options.out_dir + "/host_00");
  int chunks = 0;
  for (const auto& shard : metadata["shards"]) {
    for (const auto& chunk : shard["chunks"]) {
      ASSERT_EQ(chunk.size(), 3u) << chunk.dump();
      EXPECT_THAT(chunk[2].get<std::string>(), MatchesRegex("[0-9a-f]{32}"));
      ++chunks;
    }
  }
  EXPECT_EQ(chunks, 8);  // 30 documents in chunks of 4
}

TEST(CorpusChange, AResumeOverLinesReorderedSinceIsRefusedNamingTheFileAndChunk) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(300));
  ExtractOptions options = SmallShardOptions(corpus, dir.path() + "/out");
  options.fail_after_bytes = 400 << 10;  // the disk fills: an unfinished output
  ASSERT_FALSE(RunExtraction(options));
  const std::string host_dir = options.out_dir + "/host_00";
  const nlohmann::json before = Metadata(host_dir);
  ASSERT_FALSE(before["shards"].empty());

  SwapLines(corpus, 1, 2);  // both in chunk 0, which is listed
  options.fail_after_bytes = -1;
  ActexProcess resume(dir.path() + "/resume", ExtractArgs(options));
  EXPECT_EQ(resume.Wait(seconds(120)), 1) << resume.err();
  EXPECT_THAT(resume.err(), HasSubstr("--data"));
  EXPECT_THAT(resume.err(), HasSubstr("chunk 0 (lines 1-4 of " + corpus + ")"));
  EXPECT_THAT(resume.err(), HasSubstr("--overwrite"));
  EXPECT_EQ(Metadata(host_dir), before) << "the refused resume must change nothing";

  SwapLines(corpus, 1, 2);  // the corpus it was written from: the resume goes on
  ActexProcess again(dir.path() + "/again", ExtractArgs(options));
  EXPECT_EQ(again.Wait(seconds(120)), 0) << again.err();
  ActexProcess verify(dir.path() + "/verify", {"verify", options.out_dir});
  EXPECT_EQ(verify.Wait(seconds(60)), 0) << verify.out() << verify.err();
}

TEST(CorpusChange, VerifyFaultsAnOutputWhoseCorpusWasReorderedSince) {
  TempDir dir;
  const std::string corpus = dir.Write("corpus.jsonl", Corpus(30));
  const ExtractOptions options = SmallShardOptions(corpus, dir.path() + "/out");
  ASSERT_TRUE(RunExtraction(options));
  ActexProcess clean(dir.path() + "/clean", {"verify", options.out_dir});
  ASSERT_EQ(clean.Wait(seconds(60)), 0) << clean.out() << clean.err();

  SwapLines(corpus, 20, 24);  // chunks 5 and 6
  ActexProcess verify(dir.path() + "/verify", {"verify", options.out_dir});
  EXPECT_EQ(verify.Wait(seconds(60)), 1) << verify.out() << verify.err();
  const std::string said = verify.out() + verify.err();
  EXPECT_THAT(said, HasSubstr("host_00/metadata.json"));
  EXPECT_THAT(said, HasSubstr("chunk 5 (lines 21-24 of " + corpus + ") reads differently now"));
  EXPECT_THAT(said, HasSubstr("chunk 6 (lines 25-28 of " + corpus + ")"));
}

}  // namespace
}  // namespace actex
