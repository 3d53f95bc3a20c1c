// Bad input never stops a run silently nor loses what was written: lines that are
// not documents are listed in rejects.jsonl, impossible options are refused before
// any work, and a corpus the model cannot read fails with the line named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actors/node.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

ExtractOptions Options(const TempDir& dir, const std::string& corpus) {
  ExtractOptions options;
  options.model_dir = kTinyModelDir;
  options.data = {dir.Write("corpus.jsonl", corpus)};
  options.out_dir = dir.path() + "/out";
  options.layers = {0};
  options.dtype = "float32";
  options.blas_threads = 1;
  return options;
}

std::vector<nlohmann::json> ReadRejects(const std::string& host_dir) {
  std::vector<nlohmann::json> rejects;
  std::ifstream file(host_dir + "/rejects.jsonl");
  for (std::string line; std::getline(file, line);) rejects.push_back(nlohmann::json::parse(line));
  return rejects;
}

TEST(ExtractionErrors, BadLinesAreListedInRejectsAndTheRunGoesOn) {
  TempDir dir;
  std::string corpus =
      "{\"input_ids\": [1, 2, 3]}\n"
      "{\"input_ids\": [1, 2\n"            // not JSON
      "{\"title\": \"no text field\"}\n"   // missing field
      "{\"text\": \"\xff\xfe broken\"}\n"  // not UTF-8
      "{\"input_ids\": [4, 99999]}\n"      // beyond the vocabulary of 512
      "{\"input_ids\": [5, 6]}\n";
  auto summary = RunExtraction(Options(dir, corpus));
  ASSERT_TRUE(summary) << summary.error();
  EXPECT_EQ(summary->docs, 2);
  EXPECT_EQ(summary->rejected, 4);
  auto documents = ReadHostFolder(summary->host_dir);
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_TRUE(documents.contains(0));
  EXPECT_TRUE(documents.contains(5));  // ids keep the line's position
  auto rejects = ReadRejects(summary->host_dir);
  ASSERT_EQ(rejects.size(), 4u);
  std::map<int64_t, nlohmann::json> by_doc;
  for (const auto& reject : rejects) by_doc[reject["doc_id"].get<int64_t>()] = reject;
  for (int64_t doc : {1, 2, 3, 4}) {
    ASSERT_TRUE(by_doc.contains(doc)) << doc;
    EXPECT_EQ(by_doc[doc]["line"], doc + 1);
    EXPECT_TRUE(by_doc[doc]["file"].get<std::string>().ends_with("corpus.jsonl"));
    EXPECT_FALSE(by_doc[doc]["reason"].get<std::string>().empty());
  }
  EXPECT_NE(by_doc[4]["reason"].get<std::string>().find("vocabulary"), std::string::npos);
}

TEST(ExtractionErrors, TextWithoutTokenizerFailsNamingFileAndLine) {
  TempDir dir;
  auto summary = RunExtraction(Options(dir, "{\"input_ids\": [1]}\n{\"text\": \"hello\"}\n"));
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().find("corpus.jsonl line 2"), std::string::npos) << summary.error();
  EXPECT_NE(summary.error().find("tokenizer"), std::string::npos) << summary.error();
}

TEST(ExtractionErrors, MissingCorpusFileIsNamed) {
  TempDir dir;
  ExtractOptions options = Options(dir, "");
  options.data = {dir.path() + "/nowhere.jsonl"};
  auto summary = RunExtraction(options);
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().find("nowhere.jsonl"), std::string::npos) << summary.error();
}

struct RefusedOption {
  std::string name;
  std::function<void(ExtractOptions&)> change;
  std::string flag;
  friend void PrintTo(const RefusedOption& option, std::ostream* os) { *os << option.name; }
};

class ExtractionRefuses : public testing::TestWithParam<RefusedOption> {};

TEST_P(ExtractionRefuses, ImpossibleOptionBeforeAnyWork) {
  TempDir dir;
  ExtractOptions options = Options(dir, "{\"input_ids\": [1]}\n");
  GetParam().change(options);
  auto summary = RunExtraction(options);
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().find(GetParam().flag), std::string::npos) << summary.error();
  EXPECT_FALSE(std::filesystem::exists(options.out_dir)) << "work started before refusing";
}

INSTANTIATE_TEST_SUITE_P(
    Flags, ExtractionRefuses,
    testing::Values(
        RefusedOption{"LayerOutOfRange", [](ExtractOptions& o) { o.layers = {2}; }, "--layers"},
        RefusedOption{"NegativeLayer", [](ExtractOptions& o) { o.layers = {-1}; }, "--layers"},
        RefusedOption{"MoreShardsThanHeads", [](ExtractOptions& o) { o.shards = 5; }, "--shards"},
        RefusedOption{"UnknownSite", [](ExtractOptions& o) { o.sites = {"resid_sideways"}; },
                      "--sites"},
        RefusedOption{"UnknownDtype", [](ExtractOptions& o) { o.dtype = "int8"; }, "--dtype"},
        RefusedOption{"BosWithoutBosId", [](ExtractOptions& o) { o.bos = "yes"; }, "--bos yes"}),
    [](const testing::TestParamInfo<RefusedOption>& info) { return info.param.name; });

}  // namespace
}  // namespace actex
