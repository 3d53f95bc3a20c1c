// A run that rejected every document, or more than --max-reject-fraction of them,
// exits with status 3 saying why and what to check, and keeps what it wrote: the
// real binary on real corpora (a wrong --text-field, a UTF-16 file, a tokenizer
// whose ids the model does not have, a mostly good corpus).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kExitTooManyRejected = 3;

std::vector<std::string> ExtractArgs(const TempDir& dir, const std::string& corpus,
                                     const std::string& model = kTinyModelDir) {
  return {"extract", "--model",           model,      "--data", corpus,
          "--out",   dir.path() + "/out", "--layers", "0",      "--dtype",
          "float32", "--blas-threads",    "1"};
}

nlohmann::json Metadata(const TempDir& dir) {
  std::ifstream file(dir.path() + "/out/host_00/metadata.json");
  return nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
}

// `good` pre-tokenized documents and `bad` ones whose text field is a number, spread
// evenly.
std::string MixedCorpus(int good, int bad) {
  std::string corpus;
  const int lines = good + bad;
  for (int i = 0; i < lines; ++i) {
    const bool rejected = i * bad / lines != (i + 1) * bad / lines;
    corpus +=
        rejected ? "{\"text\": 42}\n" : "{\"input_ids\": [" + std::to_string(1 + i) + ", 9]}\n";
  }
  return corpus;
}

TEST(RejectedRun, WrongTextFieldExitsThreeNamingTheFieldAndRejectsJsonl) {
  TempDir dir;
  const std::string corpus = dir.Write("c.jsonl",
                                       "{\"content\": \"one\"}\n{\"content\": \"two\"}\n"
                                       "{\"content\": \"three\"}\n");
  const auto args = ExtractArgs(dir, corpus);
  ActexOutcome outcome = RunActex(dir, args);
  EXPECT_EQ(outcome.exit_code, kExitTooManyRejected) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("3 of the 3 documents this host read were rejected"));
  EXPECT_THAT(outcome.err, HasSubstr("nothing was written"));
  EXPECT_THAT(outcome.err, HasSubstr("3 like \"missing field \\\"text\\\"\""));
  EXPECT_THAT(outcome.err, HasSubstr("--text-field"));
  EXPECT_THAT(outcome.err, HasSubstr(dir.path() + "/out/host_00/rejects.jsonl"));
  // The output is valid and complete; only the exit status says the run is suspect.
  const nlohmann::json metadata = Metadata(dir);
  EXPECT_EQ(metadata["complete"], true);
  EXPECT_EQ(metadata["totals"]["docs"], 0);
  ActexOutcome verify = RunActex(dir, {"verify", dir.path() + "/out"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  // A rerun over the output counts the rejects the first run left.
  ActexOutcome again = RunActex(dir, args);
  EXPECT_EQ(again.exit_code, kExitTooManyRejected) << again.err;
  EXPECT_THAT(again.err, HasSubstr("3 of the 3 documents"));
}

TEST(RejectedRun, Utf16FileExitsThreeSayingTheCorpusMustBeUtf8) {
  TempDir dir;
  const std::string text = "{\"input_ids\": [1, 2]}\n{\"input_ids\": [3]}\n";
  std::string utf16 = "\xFF\xFE";  // the byte order mark of UTF-16LE
  for (char c : text) {
    utf16 += c;
    utf16 += '\0';
  }
  ActexOutcome outcome = RunActex(dir, ExtractArgs(dir, dir.Write("c.jsonl", utf16)));
  EXPECT_EQ(outcome.exit_code, kExitTooManyRejected) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("documents this host read were rejected"));
  EXPECT_THAT(outcome.err, HasSubstr("like \"not valid UTF-8 at byte 0\""));
  EXPECT_EQ(Metadata(dir)["totals"]["docs"], 0);
}

TEST(RejectedRun, TokenizerWithIdsBeyondTheModelsVocabularyExitsThree) {
  TempDir dir;
  const std::string model = dir.path() + "/model";
  ActexOutcome made = RunActex(
      dir, {"make-model", "--preset", "tiny", "--vocab", "16", "--layers", "1", "--out", model,
            "--tokenizer", ACTEX_FIXTURES_DIR "/tokenizers/bpe-qwen2-style/tokenizer.json"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string corpus = dir.Write(
      "c.jsonl", "{\"text\": \"The quick brown fox\"}\n{\"text\": \"jumps over the dog\"}\n");
  ActexOutcome outcome = RunActex(dir, ExtractArgs(dir, corpus, model));
  EXPECT_EQ(outcome.exit_code, kExitTooManyRejected) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("2 of the 2 documents"));
  EXPECT_THAT(outcome.err, HasSubstr("is outside the model's vocabulary of 16"));
  EXPECT_THAT(outcome.err, HasSubstr("the model folder's tokenizer is the model's own"));
}

TEST(RejectedRun, UnderTheFractionExitsZeroOverItThreeKeepingWhatWasWritten) {
  TempDir dir;
  ActexOutcome mostly_good =
      RunActex(dir, ExtractArgs(dir, dir.Write("good.jsonl", MixedCorpus(8, 2))));
  EXPECT_EQ(mostly_good.exit_code, 0) << mostly_good.err;
  EXPECT_THAT(mostly_good.err, HasSubstr("2 line(s) rejected"));

  TempDir over;
  const auto args = ExtractArgs(over, over.Write("bad.jsonl", MixedCorpus(4, 6)));
  ActexOutcome outcome = RunActex(over, args);
  EXPECT_EQ(outcome.exit_code, kExitTooManyRejected) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("6 of the 10 documents this host read were rejected (60%)"));
  EXPECT_THAT(outcome.err, HasSubstr("more than --max-reject-fraction 0.5"));
  EXPECT_THAT(outcome.err, HasSubstr("6 like \"field \\\"text\\\" is not a string\""));
  EXPECT_THAT(outcome.err, HasSubstr("The 4 document(s) written stay listed in metadata.json"));
  const nlohmann::json metadata = Metadata(over);
  EXPECT_EQ(metadata["complete"], true);
  EXPECT_EQ(metadata["totals"]["docs"], 4);
  EXPECT_FALSE(metadata["config"].contains("max_reject_fraction")) << "a run-only flag";
  EXPECT_EQ(RunActex(over, {"verify", over.path() + "/out"}).exit_code, 0);

  // A looser fraction is no resume mismatch: the rerun accepts the same folder.
  auto looser = args;
  looser.insert(looser.end(), {"--max-reject-fraction", "0.7"});
  ActexOutcome accepted = RunActex(over, looser);
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;
  EXPECT_THAT(accepted.err, Not(HasSubstr("were rejected")));
}

}  // namespace
}  // namespace actex
