#ifndef ACTEX_TESTS_STORAGE_LATENT_DOCUMENTS_H_
#define ACTEX_TESTS_STORAGE_LATENT_DOCUMENTS_H_

// Documents whose stored sites are one SAE's latents, as --sae stores them
// (S.latents.ids, S.latents.values, S.latents.count), for the tests of the latent
// examples the writer keeps and verify recomputes.

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "storage/shard_examples.h"
#include "tests/storage/shard_test_util.h"

namespace actex {

inline constexpr const char* kLatentSite = "blocks.1.hook_resid_post";
inline constexpr int64_t kSaeLatents = 11;    // d_sae
inline constexpr int64_t kStoredLatents = 4;  // K

// The latent sites of kLatentSite: ids [tokens, K] I32, values [tokens, K], count [tokens, 1] I32.
inline std::vector<StoredSite> LatentSites() {
  return StoredLatentSites(kLatentSite, static_cast<int>(kStoredLatents));
}

// A writer into `dir` of LatentSites in bfloat16 keeping 3 examples per latent.
inline ShardWriterOptions LatentWriterOptions(const std::string& dir, int64_t shard_bytes) {
  ShardWriterOptions options;
  options.dir = dir;
  options.dtype = OutputDtype::kBF16;
  options.sites = LatentSites();
  options.sae_latents = {{kLatentSite, kSaeLatents}};
  options.sae_examples = 3;
  options.shard_bytes = shard_bytes;
  return options;
}

// Document `doc_id` of `tokens` tokens: token t fires 1 + (doc + t) % K distinct latents
// with values descending in steps of 0.25 (so values tie across tokens), the unused slots
// id -1 and value 0.
inline OwnedDocument MakeLatentDocument(int64_t doc_id, int tokens) {
  OwnedDocument document;
  document.doc_id = doc_id;
  document.sites.resize(3);
  document.integers.resize(3);
  for (int t = 0; t < tokens; ++t) {
    document.token_ids.push_back(static_cast<int32_t>(doc_id * 31 + t));
    document.positions.push_back(t);
    const int64_t firing = 1 + (doc_id + t) % kStoredLatents;
    for (int64_t k = 0; k < kStoredLatents; ++k) {
      const bool fires = k < firing;
      document.integers[0].push_back(
          fires ? static_cast<int32_t>((doc_id * 5 + t * 3 + k * 7) % kSaeLatents) : -1);
      document.sites[1].push_back(
          fires ? 0.25f * static_cast<float>(1 + (doc_id * 3 + t * 5) % 5 + (kStoredLatents - k)) +
                      1e-3f * static_cast<float>(doc_id % 3)
                : 0.0f);
    }
    document.integers[2].push_back(static_cast<int32_t>(firing));
  }
  return document;
}

// Adds `document`'s tokens to `examples` as a shard of `dtype` stores their values.
inline void AddAsStored(LatentExamples& examples, const OwnedDocument& document,
                        OutputDtype dtype) {
  const size_t k = static_cast<size_t>(kStoredLatents);
  for (size_t t = 0; t < document.positions.size(); ++t) {
    std::vector<float> values(k);
    for (size_t i = 0; i < k; ++i) values[i] = AsStored(document.sites[1][t * k + i], dtype);
    const std::span<const int32_t> ids(document.integers[0].data() + t * k, k);
    ASSERT_TRUE(examples.AddToken(document.doc_id, document.positions[t], ids, values));
  }
}

}  // namespace actex

#endif  // ACTEX_TESTS_STORAGE_LATENT_DOCUMENTS_H_
