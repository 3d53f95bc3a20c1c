#ifndef ACTEX_STORAGE_SHARD_LISTING_H_
#define ACTEX_STORAGE_SHARD_LISTING_H_

#include <cstdint>
#include <expected>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/json_field.h"
#include "storage/shard_writer_options.h"
#include "storage/site_statistics.h"

namespace actex {

// What a host folder's metadata.json says about its shards: each listed shard
// (file, first and last doc id, docs, tokens, bytes, crc32, and the chunks whose
// documents it holds, as [chunk, documents in the chunk, digest of what the corpus
// held for it] entries), the chunks listed
// without a shard ("chunks_without_documents": every document of theirs was
// rejected), totals, and per-site statistics over exactly the listed rows, so a
// resumed run continues them from what is listed and nothing else (float sites
// only: an integer site has none). A chunk is
// listed whole or not at all: its documents are in that one shard, and its rejects
// in the folder's rejects.jsonl.
class ShardListing {
 public:
  explicit ShardListing(std::vector<StoredSite> sites);

  // Takes over an earlier run's metadata.json: its shards stay listed first. Its
  // statistics become unknown (null) when it has none for a listed site.
  void ContinueFrom(const nlohmann::json& earlier);

  // Lists a shard just written (its "chunks" among its fields); `rows` are its
  // per-site statistics.
  void List(nlohmann::ordered_json shard, const std::vector<SiteStatistics>& rows);
  // Lists chunks, [chunk, documents] pairs, that left no document to write.
  void ListWithoutDocuments(const nlohmann::ordered_json& chunks);

  // metadata.json as it stands, "complete": `complete`.
  std::string MetadataText(bool complete, const nlohmann::json& run_config,
                           const char* dtype) const;

  const ShardStats& stats() const { return stats_; }
  const nlohmann::ordered_json& shards() const { return shards_; }
  int64_t last_doc_id() const { return last_doc_id_; }  // -1: none listed
  const std::set<int64_t>& listed_chunks() const { return listed_chunks_; }

 private:
  std::vector<StoredSite> sites_;
  nlohmann::ordered_json shards_ = nlohmann::ordered_json::array();
  ShardStats stats_;
  int64_t last_doc_id_ = -1;
  std::set<int64_t> listed_chunks_;
  nlohmann::ordered_json chunks_without_documents_ = nlohmann::ordered_json::array();
  std::vector<SiteStatistics> statistics_;
  bool statistics_known_ = true;  // false when continuing an output written without them
};

// The chunks a metadata.json lists, in its shards and without documents, each with
// the number of documents it has (its chunk size, or fewer at the corpus's end).
// Refused: an entry that is not [chunk, documents] or [chunk, documents, digest]
// (a chunk >= 0, a count >= 1, ChunkDigest's 32 hex digits), or a chunk listed twice.
std::expected<std::map<int64_t, int64_t>, std::string> ListedChunks(const nlohmann::json& metadata);

// The digests (storage/chunk_digest.h) of the chunks that `metadata` lists with one:
// chunk -> digest. Outputs written before chunks had digests list none. Call on a
// metadata.json that ListedChunks accepts.
std::map<int64_t, std::string> ListedChunkDigests(const nlohmann::json& metadata);

// The files one metadata.json "shards" entry (at `place`) lists, each with its bytes
// and crc32: the shard, then the latent examples file it was written with
// ("examples": {"file", "bytes", "crc32"}) when it has one. Resume, verify, cleanup and
// upload take a shard's files from here. A field missing or of another type is an
// error naming it.
std::expected<std::vector<ListedShard>, std::string> ListedFilesOf(const nlohmann::json& shard,
                                                                   const JsonPlace& place);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_LISTING_H_
