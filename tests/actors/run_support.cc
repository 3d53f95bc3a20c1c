#include "run_support.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "actors/extract_flag_table.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"

namespace actex {

using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {}  // namespace

std::string Corpus(int documents) {
  std::ostringstream corpus;
  for (int doc = 0; doc < documents; ++doc) {
    if (doc % 23 == 7) {
      corpus << "{\"text\": 42}\n";  // wrong field type: rejected
      continue;
    }
    std::vector<int> ids;
    for (int i = 0; i < 10 + (doc * 37) % 61; ++i) ids.push_back((doc * 97 + i * 31) % 512);
    corpus << nlohmann::json{{"input_ids", ids}}.dump() << '\n';
  }
  return corpus.str();
}

ExtractOptions SmallShardOptions(const std::string& corpus, const std::string& out) {
  ExtractOptions options;
  options.model_dir = kTinyModelDir;
  options.data = {corpus};
  options.out_dir = out;
  options.layers = {0, 1};
  options.sites = {"resid_post", "attn_out"};
  options.dtype = "float32";
  options.max_seq_len = 32;
  options.overflow = Overflow::kSplit;
  options.batch_tokens = 100;
  options.shard_bytes = 48 << 10;
  options.chunk_docs = 4;  // a shard closes where a chunk ends: every few documents
  options.blas_threads = 1;
  return options;
}

std::vector<std::string> ExtractArgs(const ExtractOptions& options) {
  std::vector<std::string> args = {"extract"};
  for (std::string& arg : ExtractOptionsToArgs(options)) {
    args.push_back(arg == "--shards-per-host" ? "--shards" : arg);
  }
  return args;
}

void ExpectIdentical(const std::string& out, const std::string& reference_out) {
  auto actual = ReadJob(out);
  auto reference = ReadJob(reference_out);
  ASSERT_EQ(actual.size(), reference.size());
  for (const auto& [doc, rows] : reference) {
    ASSERT_TRUE(actual.contains(doc)) << "document " << doc << " missing";
    EXPECT_EQ(actual[doc].token_ids, rows.token_ids) << doc;
    EXPECT_EQ(actual[doc].positions, rows.positions) << doc;
    for (const auto& [site, values] : rows.sites) {
      const auto& got = actual[doc].sites[site];
      ASSERT_EQ(got.size(), values.size());
      EXPECT_EQ(std::memcmp(got.data(), values.data(), values.size() * sizeof(float)), 0)
          << "document " << doc << " " << site << " differs from the uninterrupted run";
    }
  }
  EXPECT_EQ(RejectedIds(out), RejectedIds(reference_out));
}

int KillUntilDone(const std::function<std::vector<std::unique_ptr<ActexProcess>>()>& start,
                  std::chrono::milliseconds uninterrupted, std::mt19937& random, int max_kills) {
  const auto shortest = std::max<int64_t>(10, uninterrupted.count() / 50);
  std::uniform_int_distribution<int64_t> delay(shortest,
                                               std::max(shortest, uninterrupted.count() / 8));
  int kills = 0;
  while (true) {
    auto processes = start();
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(delay(random));
    bool ended = false;
    while (!ended && std::chrono::steady_clock::now() < deadline) {
      ended = true;
      for (auto& process : processes) ended = ended && process->Poll().has_value();
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (ended || kills >= max_kills) {
      for (auto& process : processes) {
        EXPECT_EQ(process->Wait(seconds(120)), 0) << process->err();
      }
      return kills;
    }
    for (auto& process : processes) process->Signal(SIGKILL);
    for (auto& process : processes) process->Wait(seconds(10));
    ++kills;
  }
}

bool WaitForFirstShard(const std::string& host_dir, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream file(host_dir + "/metadata.json");
    auto metadata = nlohmann::json::parse(file, nullptr, false);
    if (!metadata.is_discarded() && !metadata["shards"].empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace actex
