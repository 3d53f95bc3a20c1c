#ifndef ACTEX_STORAGE_SHARD_EXAMPLES_H_
#define ACTEX_STORAGE_SHARD_EXAMPLES_H_

// The latent examples (latent_examples.h) the shard writer keeps for the shard it
// writes, and that verify recomputes from a shard: which stored sites are an SAE's
// latents, and their tokens fed in as the shard stores them.

#include <cstdint>
#include <expected>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "storage/file_io.h"
#include "storage/latent_examples.h"
#include "storage/latent_sites.h"
#include "storage/safetensors.h"
#include "storage/shard_writer_options.h"

namespace actex {

// Where one SAE's latents are among a shard's sites.
struct LatentColumns {
  std::string site;            // S
  size_t ids = 0, values = 0;  // indices into the sites
  int64_t stored = 0;          // K
};

// The SAE sites S among `sites` (their latents as storage/latent_sites.h names them:
// S.latents.ids an integer site, S.latents.values a float one of the same width), by S.
std::map<std::string, LatentColumns> FindLatentColumns(const std::vector<StoredSite>& sites);

// `value` as the output stores it in `dtype`, widened back to float32.
float AsStored(float value, OutputDtype dtype);

// The latent examples of the tokens a shard holds, from its `tensors` (as the writer
// wrote them: the SAE sites' S.latents.ids and S.latents.values, doc_ids, positions;
// a plain shard's SafetensorsFile tensors, or those a gzip'd one's ShardInflater kept),
// for each site of `like` with its number of latents and examples: what the shard's
// examples file must hold. A tensor missing or of another dtype or shape, or an id out of
// range, is an error naming it and the shard (`path`).
std::expected<LatentExamplesBySite, std::string> RecomputeShardExamples(
    const std::map<std::string, SafetensorsTensor>& tensors, const std::string& path,
    const LatentExamplesBySite& like);

// The examples of the shard being written and of its open chunk, per SAE.
class ShardExamples {
 public:
  // One LatentExamples per entry of `sae_latents` (site S -> d_sae), keeping `examples`
  // per latent. Refused: an SAE whose latents are not among `sites` (naming the stored
  // sites it needs), fewer than 1 latent or example.
  static std::expected<ShardExamples, std::string> Create(
      const std::vector<StoredSite>& sites, const std::map<std::string, int64_t>& sae_latents,
      int64_t examples, OutputDtype dtype);
  // The memory Create allocates for `sae_latents`' SAEs at `examples` each: the open
  // shard's and the open chunk's LatentExamples of every SAE.
  // In a double, which no number of latents or examples overflows.
  static double BytesFor(const std::map<std::string, int64_t>& sae_latents, int64_t examples);
  // Refuses, naming --sae-examples and the memory, what BytesFor puts past
  // kMaxExamplesBytes: a typo of 2e9 examples would otherwise abort on the allocation.
  static constexpr int64_t kMaxExamplesBytes = int64_t{4} << 30;
  static std::expected<void, std::string> CheckMemory(
      const std::map<std::string, int64_t>& sae_latents, int64_t examples);

  bool empty() const { return saes_.empty(); }
  // Adds `document`'s tokens to the open chunk's examples, values rounded as stored.
  std::expected<void, std::string> AddDocument(const DocumentActivations& document);
  // The open chunk ended: its examples join the shard's.
  void EndChunk();
  // The open chunk never ended: its examples are dropped.
  void DropChunk();
  // Writes the shard's examples to `path` (tmp, fsync, rename, within `budget`), and
  // starts the next shard's. The file as metadata.json lists it, named `name`.
  std::expected<ListedShard, std::string> Save(const std::string& path, const std::string& name,
                                               WriteBudget* budget);

 private:
  struct Sae {
    LatentColumns columns;
    LatentExamples shard, chunk;
  };
  std::vector<Sae> saes_;
  OutputDtype dtype_ = OutputDtype::kF32;
  std::vector<float> stored_;  // [K] one token's values as stored
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_EXAMPLES_H_
