#ifndef ACTEX_TESTS_STORAGE_SYNTHETIC_OUTPUT_H_
#define ACTEX_TESTS_STORAGE_SYNTHETIC_OUTPUT_H_

// An extraction's output written by ShardWriter without a model: host folders
// host_00.. of `hosts` replicas (host h holds the documents with doc_id % hosts ==
// h), documents of 1 to 40 tokens whose values ActivationValue gives.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"

namespace actex {

struct SyntheticOutput {
  int hosts = 2;
  int documents = 200;
  std::vector<StoredSite> sites = {{"blocks.0.hook_resid_post", 64},
                                   {"blocks.1.hook_resid_post", 64}};
  OutputDtype dtype = OutputDtype::kBF16;
  int64_t shard_bytes = 64 << 10;
  bool gzip_odd_hosts = false;                       // host_01, host_03, ... write .safetensors.gz
  nlohmann::json config = nlohmann::json::object();  // more of metadata.json's config
};

inline int SyntheticTokens(int64_t doc_id) { return 1 + static_cast<int>((doc_id * 37) % 40); }

inline void WriteSyntheticOutput(const std::string& out, const SyntheticOutput& spec) {
  for (int host = 0; host < spec.hosts; ++host) {
    ShardWriterOptions options;
    options.dir = out + "/host_0" + std::to_string(host);
    options.shard_bytes = spec.shard_bytes;
    options.gzip = spec.gzip_odd_hosts && host % 2 == 1;
    options.dtype = spec.dtype;
    options.sites = spec.sites;
    options.tensor_metadata = {{"model", "test"}};
    options.run_config = spec.config;
    options.run_config["host_id"] = host;
    options.run_config["num_hosts"] = spec.hosts;
    auto writer = ShardWriter::Open(options);
    ASSERT_TRUE(writer.has_value()) << writer.error();
    for (int64_t doc_id = host; doc_id < spec.documents; doc_id += spec.hosts) {
      auto added = AddWhole(**writer, MakeDocument(doc_id, SyntheticTokens(doc_id), spec.sites));
      ASSERT_TRUE(added.has_value()) << added.error();
    }
    ASSERT_TRUE((*writer)->Finish().has_value());
  }
}

inline int64_t SyntheticRows(const SyntheticOutput& spec) {
  int64_t rows = 0;
  for (int64_t doc_id = 0; doc_id < spec.documents; ++doc_id) rows += SyntheticTokens(doc_id);
  return rows;
}

}  // namespace actex

#endif  // ACTEX_TESTS_STORAGE_SYNTHETIC_OUTPUT_H_
