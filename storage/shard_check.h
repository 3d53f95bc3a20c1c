#ifndef ACTEX_STORAGE_SHARD_CHECK_H_
#define ACTEX_STORAGE_SHARD_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/sae_record.h"
#include "storage/shard_writer_options.h"
#include "storage/stored_site.h"

namespace actex {

// What metadata.json says about one shard, and what every shard of its host folder
// must hold. An internal part of the output verifier (storage/output_verifier.h);
// not ShardWriter's ListedShard (storage/shard_writer.h), which only names a file.
struct ShardEntry {
  std::string path;   // the file on disk
  bool gzip = false;  // listed as .safetensors.gz: the file is one gzip stream
  int64_t bytes = 0;
  uint32_t crc32 = 0;
  int64_t first_doc_id = 0, last_doc_id = 0, docs = 0, tokens = 0;
  std::vector<int64_t> chunks;    // the chunks it holds; empty in an older output's listing
  std::vector<StoredSite> sites;  // from metadata "sites"
  std::string site_dtype;         // of its float sites: "F32", "F16" or "BF16"
  // Its latent examples file (storage/latent_examples.h) as listed, beside it; none when
  // the run had no SAE.
  std::optional<ListedShard> examples;
  std::vector<SaeRecord> saes;  // metadata config.saes: whose latents it holds
};

// What reading the shard found.
struct ShardCheck {
  std::vector<std::string> faults;  // each says what is wrong; the caller names the file
  bool missing = false;             // the file does not exist (the only fault then)
  bool documents_read = false;      // doc ids could be read: `documents` is what the file holds
  std::vector<int64_t> documents;   // distinct doc ids, in the order the file holds them
};

// Re-reads the whole shard once: size and CRC-32 of the bytes as stored; the
// safetensors header (plain files through SafetensorsFile's mapping; gzip'd ones
// inflated as a stream, so only the header and the doc_ids and positions tensors
// are ever held in memory); exactly the site tensors [tokens, width] in
// `site_dtype` (I32 for an integer site) plus token_ids I32, doc_ids I64 and positions I32
// [tokens], tiling the data section; doc ids in increasing runs (a document is contiguous) whose
// positions count 0..n-1; tokens, docs, first and last doc id as listed; and every row
// of each SAE's latents (storage/latent_sites.h; a gzip'd shard keeps their bytes too).
// Every fault found is reported, not only the first.
ShardCheck CheckShard(const ShardEntry& shard);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_CHECK_H_
