#include "bench/bench_corpora.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <vector>

#include "tests/support/parquet_test_writer.h"

namespace actex {
namespace {

std::expected<std::ofstream, std::string> OpenForWriting(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return std::unexpected("cannot write " + path + ": " + std::strerror(errno));
  return out;
}

}  // namespace

std::expected<void, std::string> WritePretokenizedCorpus(const std::string& path, int64_t documents,
                                                         int tokens_per_document, int vocab) {
  auto out = OpenForWriting(path);
  if (!out) return std::unexpected(out.error());
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> id(0, vocab - 1);
  for (int64_t doc = 0; doc < documents; ++doc) {
    *out << "{\"input_ids\": [";
    for (int t = 0; t < tokens_per_document; ++t) *out << (t ? "," : "") << id(rng);
    *out << "]}\n";
  }
  if (!out->flush()) return std::unexpected("cannot write " + path + ": " + std::strerror(errno));
  return {};
}

namespace {

// English-like documents of 400 words (about 960 tokens), the same for every format.
std::vector<std::optional<std::string>> TextDocuments(int64_t documents) {
  static constexpr const char* kWords[] = {
      "the",     "model",    "reads",    "a",        "corpus",   "of",     "documents",   "and",
      "writes",  "every",    "layer's",  "residual", "stream",   "to",     "disk",        "while",
      "sparse",  "auto",     "encoders", "learn",    "features", "from",   "activations", "in",
      "float32", "exactly",  "as",       "HF",       "computes", "them,",  "which",       "matters",
      "for",     "research", "on",       "language", "models.",  "Tokens", "flow",        "through",
      "shards",  "that",     "split",    "heads",    "columns",  "across", "cores",       "hosts."};
  constexpr int kWordCount = sizeof(kWords) / sizeof(kWords[0]);
  std::mt19937 rng(2);
  std::uniform_int_distribution<int> word(0, kWordCount - 1);
  std::vector<std::optional<std::string>> texts;
  for (int64_t doc = 0; doc < documents; ++doc) {
    std::string text = "Document " + std::to_string(doc) + ":";
    for (int w = 0; w < 400; ++w) text += std::string(" ") + kWords[word(rng)];
    texts.push_back(std::move(text));
  }
  return texts;
}

}  // namespace

std::expected<void, std::string> WriteTextCorpus(const std::string& path, int64_t documents) {
  auto out = OpenForWriting(path);
  if (!out) return std::unexpected(out.error());
  for (const auto& text : TextDocuments(documents)) *out << "{\"text\": \"" << *text << "\"}\n";
  if (!out->flush()) return std::unexpected("cannot write " + path + ": " + std::strerror(errno));
  return {};
}

std::expected<void, std::string> WriteTextParquet(const std::string& path, int64_t documents) {
  auto out = OpenForWriting(path);
  if (!out) return std::unexpected(out.error());
  *out << test_support::ParquetWithText(
      TextDocuments(documents), "text",
      {.rows_per_group = 1000,
       .snappy = true,
       .other_columns = {"id", "dump", "url", "file_path", "language"}});
  if (!out->flush()) return std::unexpected("cannot write " + path + ": " + std::strerror(errno));
  return {};
}

}  // namespace actex
