// One bad document never ends a run: the real actex binary on a corpus holding a
// line too long for a message, a GPT-2 document longer than its learned positions,
// and a Parquet file with damaged data behind an intact footer. Each run ends 0
// with every other document written, the bad one listed in rejects.jsonl (or cut
// per --overflow), and `actex verify` passes.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "storage/corpus_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using nlohmann::json;

ActexOutcome RunActexAs(const TempDir& dir, const std::string& name,
                        std::vector<std::string> args) {
  return RunActex(dir.path() + "/" + name, std::move(args), std::chrono::seconds(240));
}

std::vector<json> ReadJsonLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

void ExpectVerified(const TempDir& dir, const std::string& out) {
  ActexOutcome verify = RunActexAs(dir, "verify", {"verify", out});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("OK"), std::string::npos) << verify.out;
}

// A tiny model with a byte-level BPE tokenizer, so that text documents are read.
std::string MakeModel(const TempDir& dir) {
  ActexOutcome made =
      RunActexAs(dir, "make-model",
                 {"make-model", "--preset", "tiny", "--vocab", "3259", "--seed", "7", "--tokenizer",
                  ACTEX_FIXTURES_DIR "/tokenizers/bpe-qwen2-style/tokenizer.json", "--out",
                  dir.path() + "/model"});
  EXPECT_EQ(made.exit_code, 0) << made.err;
  return dir.path() + "/model";
}

// {"text": "<n bytes of words>"} of exactly `line_bytes` bytes.
std::string LineOfBytes(int64_t line_bytes) {
  const std::string head = "{\"text\": \"", tail = "\"}";
  std::string text;
  const int64_t text_bytes = line_bytes - static_cast<int64_t>(head.size() + tail.size());
  text.reserve(text_bytes);
  while (static_cast<int64_t>(text.size()) < text_bytes) text += "word ";
  text.resize(text_bytes);
  text.back() = 'x';
  return head + text + tail;
}

// A line longer than any message can carry was a failed send that ended the run
// (exit 1, no file or line named) and ended every rerun the same way.
TEST(BadDocumentRuns, LineLongerThanTheLimitIsARejectedDocument) {
  TempDir dir;
  const std::string model = MakeModel(dir);
  const int64_t limit = kDefaultMaxLineBytes;
  const std::string lines = "{\"text\": \"first words\"}\n" + LineOfBytes(limit + 1) + "\n" +
                            LineOfBytes(limit) + "\n{\"text\": \"last words\"}\n";
  for (bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    const std::string corpus = dir.path() + (gzip ? "/long.jsonl.gz" : "/long.jsonl");
    if (gzip) {
      gzFile file = gzopen(corpus.c_str(), "wb1");
      ASSERT_NE(file, nullptr);
      ASSERT_EQ(gzwrite(file, lines.data(), static_cast<unsigned>(lines.size())),
                static_cast<int>(lines.size()));
      ASSERT_EQ(gzclose(file), Z_OK);
    } else {
      std::ofstream(corpus) << lines;
    }
    const std::string out = dir.path() + (gzip ? "/out-gz" : "/out");
    ActexOutcome run = RunActexAs(dir, "extract",
                                  {"extract", "--model", model, "--data", corpus, "--out", out,
                                   "--layers", "0", "--max-seq-len", "16"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::vector<json> rejects = ReadJsonLines(out + "/host_00/rejects.jsonl");
    ASSERT_EQ(rejects.size(), 1u);
    EXPECT_EQ(rejects[0]["doc_id"], 1);
    EXPECT_EQ(rejects[0]["file"], corpus);
    EXPECT_EQ(rejects[0]["line"], 2);
    EXPECT_EQ(rejects[0]["reason"], "line longer than " + std::to_string(limit) + " bytes (" +
                                        std::to_string(limit + 1) + ")");
    const json metadata = ReadJson(out + "/host_00/metadata.json");
    EXPECT_EQ(metadata["complete"], true);
    EXPECT_EQ(metadata["totals"]["docs"], 3);  // a line of exactly the limit is read
    ExpectVerified(dir, out);
  }
}

// GPT-2 has learned positions: a document past n_positions (256 in the fixture)
// failed the run mid-way with the default --max-seq-len of 2048.
TEST(BadDocumentRuns, Gpt2DocumentPastNPositionsIsCutPerOverflow) {
  TempDir dir;
  const std::string model = ACTEX_FIXTURES_DIR "/model-families/gpt2";
  json long_doc, short_doc;
  for (int i = 0; i < 600; ++i) long_doc["input_ids"].push_back(i % 512);
  for (int i = 0; i < 10; ++i) short_doc["input_ids"].push_back(i);
  const std::string corpus = dir.path() + "/gpt2.jsonl";
  std::ofstream(corpus) << short_doc.dump() << "\n" << long_doc.dump() << "\n";
  for (const std::string overflow : {"truncate", "split"}) {
    SCOPED_TRACE(overflow);
    const std::string out = dir.path() + "/out-" + overflow;
    ActexOutcome run = RunActexAs(dir, "extract",
                                  {"extract", "--model", model, "--data", corpus, "--out", out,
                                   "--layers", "0", "--overflow", overflow});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("--max-seq-len 256: gpt2 has learned positions: n_positions 256 in "
                           "config.json, fewer than the default 2048"),
              std::string::npos)
        << run.err;
    const json metadata = ReadJson(out + "/host_00/metadata.json");
    EXPECT_EQ(metadata["complete"], true);
    EXPECT_EQ(metadata["config"]["max_seq_len"], 256);
    EXPECT_EQ(metadata["totals"]["docs"], 2);
    EXPECT_EQ(metadata["totals"]["tokens"], overflow == "split" ? 610 : 266);
    ExpectVerified(dir, out);
  }
  // A length the user asked for that the model cannot hold is refused before any work.
  ActexOutcome refused =
      RunActexAs(dir, "refused",
                 {"extract", "--model", model, "--data", corpus, "--out",
                  dir.path() + "/out-refused", "--layers", "0", "--max-seq-len", "300"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--max-seq-len 300: gpt2 has learned positions: n_positions 256 in "
                             "config.json; give at most 256"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out-refused/host_00/metadata.json"));
}

// The fixture's text chunk of row group 2 reaches past its data: the run stopped
// there (complete: false) and lost the rows of the chunk in progress.
TEST(BadDocumentRuns, DamagedParquetRowsAreRejectsAndEveryReadableRowIsWritten) {
  TempDir dir;
  const std::string model = MakeModel(dir);
  const std::string corpus = ACTEX_FIXTURES_DIR "/parquet/broken-truncated-footer-intact.parquet";
  const std::string out = dir.path() + "/out";
  ActexOutcome run = RunActexAs(dir, "extract",
                                {"extract", "--model", model, "--data", corpus, "--out", out,
                                 "--layers", "0", "--max-seq-len", "16"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json metadata = ReadJson(out + "/host_00/metadata.json");
  EXPECT_EQ(metadata["complete"], true);
  int64_t damaged = 0, other = 0;
  for (const json& reject : ReadJsonLines(out + "/host_00/rejects.jsonl")) {
    EXPECT_EQ(reject["file"], corpus);
    EXPECT_EQ(reject["line"].get<int64_t>(), reject["doc_id"].get<int64_t>() + 1);
    const std::string reason = reject["reason"];
    if (reason.starts_with("damaged Parquet data: row group 2, column \"text\"")) {
      EXPECT_GE(reject["doc_id"].get<int64_t>(), 200);
      ++damaged;
    } else {
      ++other;  // null and empty texts of the intact rows
    }
  }
  // Rows 200..238 at most lie wholly before the cut (the fixture's README); some do.
  EXPECT_GE(damaged, 61);
  EXPECT_LT(damaged, 100);
  EXPECT_EQ(metadata["totals"]["docs"].get<int64_t>() + damaged + other, 300);
  ExpectVerified(dir, out);
}

}  // namespace
}  // namespace actex
