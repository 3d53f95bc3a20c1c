#ifndef ACTEX_STORAGE_SHARD_WRITER_OPTIONS_H_
#define ACTEX_STORAGE_SHARD_WRITER_OPTIONS_H_

// What a ShardWriter (shard_writer.h) is given and what it tells: shared with its
// inside (shard_writer_state.h) and the listing it keeps (shard_listing.h).

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "storage/chunk_rule.h"
#include "storage/stored_site.h"

namespace actex {

enum class OutputDtype { kF32, kF16, kBF16 };

struct ShardWriterOptions {
  std::string dir;                         // OUT/host_NN, created if missing
  int64_t shard_bytes = int64_t{1} << 30;  // close a shard once its tensors reach this
  bool gzip = false;                       // shard_NNNNNN.safetensors.gz
  OutputDtype dtype = OutputDtype::kF32;
  std::vector<StoredSite> sites;                         // tensor order
  std::map<std::string, std::string> tensor_metadata{};  // safetensors __metadata__
  nlohmann::json run_config{};                           // stored under "config" in metadata.json
  // For tests only: once the writer has written this many bytes (spills, shards,
  // metadata.json together), writes fail with ENOSPC as on a full disk. -1: never.
  int64_t fail_after_bytes = -1;
  // How documents come in chunks of consecutive ids; a shard holds whole chunks only.
  ChunkRule chunks;
  // Not null: the metadata.json of an earlier, interrupted run in `dir` (see
  // storage/earlier_output.h). Its listed shards are kept, numbering continues after
  // them, and its listed chunks are refused if they come again.
  nlohmann::json continue_from{};
  // Not null: asked before metadata.json lists more chunks (a leased job's coordinator
  // must know first); an error is final, and the chunks are not listed.
  std::function<std::expected<void, std::string>(const std::vector<int64_t>& chunks)>
      before_listing{};
  // Closed shards are listed together once this long passed since the last listing
  // (at a chunk's end), and always by ListEnded and Finish. Listing less often costs a
  // crash at most this much work, and in a leased job shortens the time a host spends
  // between asking to list and having listed (which a lost host's chunks wait out).
  std::chrono::milliseconds listing_interval{0};
  // A closed shard is sealed (its header written, its other tensors copied after the
  // first, fsynced, named) on a thread of its own while the next one fills, and
  // listed at the first chunk end (or ListEnded, Finish) after that: a shard of
  // several sites copies most of its bytes there. Ignored with fail_after_bytes (its
  // budget counts the bytes of one thread).
  bool seal_in_background = false;
  // Threads that round and spill each document's stored sites, the writer's own among
  // them (at most one a stored site): the sites are shared out by width, so that a
  // shard of several sites is not held to one core's rate. 1: all on the writer's
  // thread. Ignored with fail_after_bytes, as seal_in_background.
  int spill_threads = 1;
  // The SAEs whose latents are among `sites` (S.latents.ids and S.latents.values,
  // storage/shard_examples.h): SAE site S -> its latent count d_sae. With each shard the
  // writer writes and lists the latents' examples over its tokens
  // (shard_NNNNNN.examples.safetensors, storage/latent_examples.h), keeping
  // `sae_examples` per latent (--sae-examples).
  std::map<std::string, int64_t> sae_latents{};
  int64_t sae_examples = 32;
};

// One whole document's activations. Spans point into the caller's buffers.
struct DocumentActivations {
  int64_t doc_id = 0;
  std::span<const int32_t> token_ids;  // [tokens]
  std::span<const int32_t> positions;  // [tokens] position within the document
  std::vector<SiteRows> sites;         // per site, [tokens, width], as its StoredSite says
};

// Totals over the shards closed so far (after Finish: over everything added);
// bytes are shard file bytes as written (compressed when gzip).
struct ShardStats {
  int64_t shards = 0, docs = 0, tokens = 0, bytes = 0;
  // The documents of the listed chunks, computed (in `docs`) or rejected: what the
  // folder answers for. A stop keeps them; a chunk not listed is computed again.
  int64_t chunk_docs = 0;
};

// A shard as metadata.json lists it.
struct ListedShard {
  std::string file;  // name inside the host folder
  int64_t bytes = 0;
  std::string crc32;  // 8 lowercase hex digits
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_WRITER_OPTIONS_H_
