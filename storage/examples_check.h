#ifndef ACTEX_STORAGE_EXAMPLES_CHECK_H_
#define ACTEX_STORAGE_EXAMPLES_CHECK_H_

#include <string>
#include <vector>

#include "storage/shard_check.h"

namespace actex {

// What re-reading a shard's latent examples file found. An internal part of the output
// verifier (storage/output_verifier.h).
struct ExamplesCheck {
  bool missing = false;             // the file does not exist (the only fault then)
  std::vector<std::string> faults;  // each says what is wrong; the caller names the file
};

// Re-reads `shard`'s listed latent examples file (shard.examples, beside the shard):
// its bytes and crc32 as listed; the file well formed (LoadLatentExamples); its sites
// exactly the SAE sites among the shard's; and, when `recompute` (the shard's own check
// passed), exactly what the shard's latent tensors give (RecomputeShardExamples): a
// plain shard mapped, a gzip'd one inflated again keeping only the ids, positions and
// latents.
ExamplesCheck CheckShardExamples(const ShardEntry& shard, bool recompute);

}  // namespace actex

#endif  // ACTEX_STORAGE_EXAMPLES_CHECK_H_
