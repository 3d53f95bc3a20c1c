// End to end through the real pipeline: loader -> tokenizer -> device shards over
// ZeroMQ inproc -> writer -> safetensors shards, compared with what HuggingFace
// transformers computed for the same token ids (tests/fixtures/qwen2-tiny).
#include "actors/node.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

const std::string kFixtures = ACTEX_FIXTURES_DIR "/qwen2-tiny";

struct Reference {
  std::string case_prefix;  // "len7." or "padbatch.row1."
  std::vector<int32_t> ids;
};

// The fixture's seven sequences: four single cases and the three rows of padbatch.
std::vector<Reference> References(const std::string& model_dir) {
  const std::string expected = model_dir + "/expected.safetensors";
  std::vector<Reference> references;
  for (const char* name : {"len1", "len7", "len33", "len128"}) {
    references.push_back(
        {std::string(name) + ".", FixtureIds(expected, std::string(name) + ".input_ids")});
  }
  auto padded = FixtureIds(expected, "padbatch.input_ids");  // [3, 40]
  auto lengths = FixtureIds(expected, "padbatch.lengths");
  for (int row = 0; row < 3; ++row) {
    references.push_back({"padbatch.row" + std::to_string(row) + ".",
                          {padded.begin() + row * 40, padded.begin() + row * 40 + lengths[row]}});
  }
  return references;
}

std::string PretokenizedCorpus(const std::vector<Reference>& references) {
  std::ostringstream corpus;
  for (const Reference& reference : references) {
    corpus << nlohmann::json{{"input_ids", reference.ids}}.dump() << '\n';
  }
  return corpus.str();
}

ExtractOptions Options(const TempDir& dir, const std::string& model_dir, const std::string& corpus,
                       int shards) {
  ExtractOptions options;
  options.model_dir = model_dir;
  options.data = {dir.Write("corpus.jsonl", corpus)};
  options.out_dir = dir.path() + "/out";
  options.layers = {0, 1};
  options.sites = {"embed", "resid_post", "ln_final"};
  options.shards = shards;
  options.dtype = "float32";
  options.blas_threads = 1;
  return options;
}

struct ParityCase {
  std::string model_dir;
  int shards;
  friend void PrintTo(const ParityCase& c, std::ostream* os) {
    *os << c.model_dir.substr(c.model_dir.rfind('/') + 1) << " shards=" << c.shards;
  }
};

class ExtractionParity : public testing::TestWithParam<ParityCase> {};

TEST_P(ExtractionParity, WrittenActivationsMatchHuggingFace) {
  const ParityCase& parity = GetParam();
  TempDir dir;
  auto references = References(parity.model_dir);
  auto summary =
      RunExtraction(Options(dir, parity.model_dir, PretokenizedCorpus(references), parity.shards));
  ASSERT_TRUE(summary) << summary.error();
  EXPECT_EQ(summary->docs, 7);
  auto documents = ReadHostFolder(summary->host_dir);
  ASSERT_EQ(documents.size(), references.size());
  const std::string expected = parity.model_dir + "/expected.safetensors";
  // Site -> the fixture tensor HF computed for it (see tests/fixtures/qwen2-tiny/README.md).
  const std::vector<std::pair<std::string, std::string>> sites = {
      {"hook_embed", "hidden_states.0"},
      {"blocks.0.hook_resid_post", "hidden_states.1"},
      {"blocks.1.hook_resid_post", "last_layer_pre_norm"},
      {"ln_final.hook_normalized", "hidden_states.2"}};
  for (size_t doc = 0; doc < references.size(); ++doc) {
    const DocumentRows& rows = documents[doc];
    EXPECT_EQ(rows.token_ids, references[doc].ids);
    for (const auto& [site, tensor] : sites) {
      auto reference = FixtureTensor(expected, references[doc].case_prefix + tensor);
      Deviation deviation = Compare(rows.sites.at(site), reference);
      EXPECT_LE(deviation.max_abs_error, 2e-5 * deviation.max_abs_reference)
          << references[doc].case_prefix << site;
      EXPECT_LE(deviation.max_abs_error, 1e-4) << references[doc].case_prefix << site;
      RecordProperty(references[doc].case_prefix + site, std::to_string(deviation.max_abs_error));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(F32AndBF16Weights, ExtractionParity,
                         testing::Values(ParityCase{kFixtures, 1}, ParityCase{kFixtures, 2},
                                         ParityCase{kFixtures, 3},
                                         ParityCase{kFixtures + "/model-bf16", 1},
                                         ParityCase{kFixtures + "/model-bf16", 2},
                                         ParityCase{kFixtures + "/model-bf16", 3}),
                         [](const testing::TestParamInfo<ParityCase>& info) {
                           return std::string(info.param.model_dir.ends_with("bf16") ? "BF16"
                                                                                     : "F32") +
                                  "Shards" + std::to_string(info.param.shards);
                         });

TEST(Extraction, EveryShardCountAgreesWithOneShardOnEverySite) {
  auto references = References(kFixtures);
  std::map<int64_t, DocumentRows> single;
  for (int shards = 1; shards <= 4; ++shards) {
    TempDir dir;
    ExtractOptions options = Options(dir, kFixtures, PretokenizedCorpus(references), shards);
    options.sites = {"resid_pre", "attn_out", "resid_mid", "mlp_post", "mlp_out", "resid_post"};
    auto summary = RunExtraction(options);
    ASSERT_TRUE(summary) << summary.error();
    auto documents = ReadHostFolder(summary->host_dir);
    if (shards == 1) {
      single = documents;
      ASSERT_EQ(single.at(0).sites.size(), 12u);
      continue;
    }
    for (const auto& [doc, rows] : single) {
      for (const auto& [site, values] : rows.sites) {
        Deviation deviation = Compare(documents.at(doc).sites.at(site), values);
        EXPECT_LE(deviation.max_abs_error, 1e-5 * deviation.max_abs_reference)
            << "shards " << shards << " doc " << doc << " " << site;
      }
    }
  }
}

TEST(Extraction, SplitOverflowKeepsEveryTokenWithItsDocumentPosition) {
  TempDir dir;
  auto references = References(kFixtures);
  ExtractOptions options = Options(dir, kFixtures, PretokenizedCorpus({references[3]}), 2);
  options.max_seq_len = 16;
  options.overflow = Overflow::kSplit;
  options.batch_tokens = 40;  // windows of one document land in different batches
  auto summary = RunExtraction(options);
  ASSERT_TRUE(summary) << summary.error();
  auto documents = ReadHostFolder(summary->host_dir);
  const DocumentRows& rows = documents.at(0);
  ASSERT_EQ(rows.token_ids, references[3].ids);
  for (int32_t i = 0; i < 128; ++i) ASSERT_EQ(rows.positions[i], i);
  // Attention is causal, so the first window equals the first 16 rows of the full run.
  auto reference = FixtureTensor(kFixtures + "/expected.safetensors", "len128.hidden_states.1");
  const auto& first = rows.sites.at("blocks.0.hook_resid_post");
  Deviation deviation = Compare({first.begin(), first.begin() + 16 * 64},
                                {reference.begin(), reference.begin() + 16 * 64});
  EXPECT_LE(deviation.max_abs_error, 1e-4);
}

TEST(Extraction, TruncationKeepsOnlyTheFirstMaxSeqLenTokens) {
  TempDir dir;
  auto references = References(kFixtures);
  ExtractOptions options = Options(dir, kFixtures, PretokenizedCorpus({references[2]}), 1);
  options.max_seq_len = 10;
  auto summary = RunExtraction(options);
  ASSERT_TRUE(summary) << summary.error();
  auto documents = ReadHostFolder(summary->host_dir);
  EXPECT_EQ(documents.at(0).token_ids,
            std::vector<int32_t>(references[2].ids.begin(), references[2].ids.begin() + 10));
}

}  // namespace
}  // namespace actex
