// Corpus reading speed: the same FineWeb-Edu-shaped documents read by CorpusReader
// from a snappy Parquet file (text column among FineWeb-Edu's other string columns,
// row groups of 1000 rows) and from JSONL, in the same run. Prints MB/s of text (the
// bytes of the documents' text delivered) for each and their ratio, with the CPU.
//
//   build/bench/bench_corpus_read [--docs N] [--repeats R] [--dir DIR]

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "storage/corpus_reader.h"
#include "tests/support/parquet_test_writer.h"

namespace actex {
namespace {

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string model = "unknown CPU", flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) model = line.substr(line.find(':') + 2);
    if (line.starts_with("flags")) flags = line;
    if (!flags.empty() && model != "unknown CPU") break;
  }
  std::string isa;
  for (const char* feature : {" avx2", " avx512f", " avx512bw"}) {
    if (flags.find(std::string(feature) + " ") != std::string::npos) isa += feature;
  }
  return model + " (" + (isa.empty() ? std::string(" no AVX2") : isa.substr(1)) + ")";
}

// English-like paragraphs of FineWeb-Edu's length spread (a few hundred bytes to
// ~20 kB, ~3 kB typical), so snappy compresses them about as much as real text.
std::vector<std::optional<std::string>> Documents(int count) {
  static const char* kWords[] = {
      "the",         "of",         "and",         "to",         "in",
      "a",           "is",         "that",        "for",        "it",
      "as",          "was",        "with",        "be",         "by",
      "on",          "not",        "he",          "this",       "are",
      "or",          "his",        "from",        "at",         "which",
      "but",         "have",       "an",          "had",        "they",
      "you",         "were",       "their",       "one",        "all",
      "we",          "can",        "her",         "has",        "there",
      "been",        "if",         "more",        "when",       "will",
      "would",       "who",        "so",          "students",   "learning",
      "energy",      "water",      "history",     "cells",      "climate",
      "system",      "research",   "children",    "teachers",   "important",
      "understand",  "different",  "example",     "process",    "development",
      "information", "experiment", "population",  "government", "photosynthesis",
      "mathematics", "revolution", "temperature", "community",  "health"};
  constexpr int kWordCount = sizeof(kWords) / sizeof(kWords[0]);
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> length(7.8, 0.7);  // median ~2.4 kB
  std::vector<std::optional<std::string>> documents;
  documents.reserve(count);
  for (int i = 0; i < count; ++i) {
    const size_t target = std::min<size_t>(60000, static_cast<size_t>(length(random)) + 50);
    std::string text;
    int in_sentence = 0;
    while (text.size() < target) {
      std::string word = kWords[random() % kWordCount];
      if (in_sentence == 0) word[0] = static_cast<char>(std::toupper(word[0]));
      text += word;
      ++in_sentence;
      if (in_sentence > 8 && random() % 10 == 0) {
        text += random() % 6 == 0 ? ".\n\n" : ". ";
        in_sentence = 0;
      } else {
        text += random() % 15 == 0 ? ", " : " ";
      }
    }
    documents.push_back(std::move(text));
  }
  return documents;
}

struct Reading {
  double seconds = 0;
  int64_t text_bytes = 0, documents = 0;
};

Reading ReadCorpus(const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  auto reader = CorpusReader::Open({.inputs = {path}});
  if (!reader) throw std::runtime_error(reader.error());
  Reading reading;
  while (true) {
    auto record = (*reader)->Next();
    if (!record) throw std::runtime_error(record.error());
    if (!*record) break;
    reading.text_bytes += static_cast<int64_t>((*record)->text.size());
    ++reading.documents;
  }
  reading.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return reading;
}

int Main(int argc, char** argv) {
  int docs = 40000, repeats = 3;
  std::string dir = "/tmp/actex-bench-corpus";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--docs"))
      docs = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeats"))
      repeats = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
  }
  std::filesystem::create_directories(dir);
  const auto documents = Documents(docs);
  const std::string parquet = dir + "/fineweb-shaped.parquet",
                    jsonl = dir + "/fineweb-shaped.jsonl";
  {
    std::ofstream(parquet, std::ios::binary) << test_support::ParquetWithText(
        documents, "text",
        {.rows_per_group = 1000,
         .snappy = true,
         .other_columns = {"id", "dump", "url", "file_path", "language"}});
    std::ofstream out(jsonl, std::ios::binary);
    for (const auto& text : documents) {
      out << nlohmann::json{{"text", *text}, {"id", "x"}}.dump() << '\n';
    }
  }
  std::printf("CPU: %s\n", CpuModel().c_str());
  std::printf(
      "corpus: %d documents; parquet %.1f MB (snappy, 1000-row groups, 6 columns), "
      "jsonl %.1f MB\n",
      docs, std::filesystem::file_size(parquet) / 1e6, std::filesystem::file_size(jsonl) / 1e6);
  double best_parquet = 0, best_jsonl = 0;
  for (int r = 0; r < repeats; ++r) {
    // Alternated in one run, so background load hits both alike; best of the repeats.
    Reading from_parquet = ReadCorpus(parquet);
    Reading from_jsonl = ReadCorpus(jsonl);
    if (from_parquet.text_bytes != from_jsonl.text_bytes) {
      std::fprintf(stderr, "the two files read differently\n");
      return 1;
    }
    const double parquet_rate = from_parquet.text_bytes / from_parquet.seconds / 1e6;
    const double jsonl_rate = from_jsonl.text_bytes / from_jsonl.seconds / 1e6;
    std::printf("repeat %d: %.1f MB of text; parquet %.0f MB/s, jsonl %.0f MB/s\n", r + 1,
                from_parquet.text_bytes / 1e6, parquet_rate, jsonl_rate);
    best_parquet = std::max(best_parquet, parquet_rate);
    best_jsonl = std::max(best_jsonl, jsonl_rate);
  }
  std::printf("best: parquet %.0f MB/s of text, jsonl %.0f MB/s, parquet/jsonl %.2f (one core)\n",
              best_parquet, best_jsonl, best_parquet / best_jsonl);
  return 0;
}

}  // namespace
}  // namespace actex

int main(int argc, char** argv) { return actex::Main(argc, argv); }
