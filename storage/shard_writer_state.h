#ifndef ACTEX_STORAGE_SHARD_WRITER_STATE_H_
#define ACTEX_STORAGE_SHARD_WRITER_STATE_H_

// The inside of a ShardWriter, shared by its files: shard_writer.cc (the calls, what
// they check), shard_writer_sites.cc (a document's sites into the spill, on the spill
// threads) and shard_writer_state.cc (opening, closing and listing shards).

#include <chrono>
#include <cstdint>
#include <deque>
#include <expected>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "storage/file_io.h"
#include "storage/host_folder_files.h"
#include "storage/safetensors.h"
#include "storage/shard_examples.h"
#include "storage/shard_listing.h"
#include "storage/shard_spill.h"
#include "storage/shard_writer_options.h"
#include "storage/side_thread.h"
#include "storage/site_statistics.h"

namespace actex {

inline constexpr size_t kCopyChunkBytes = size_t{1} << 20;
inline constexpr const char* kIdTensors[] = {"token_ids", "doc_ids", "positions"};
// The room left for a shard's header (written last, before its first tensor, which is
// written in place) fits a shard of up to this many tokens: a shard closes once its
// bytes reach shard_bytes, so only a single document of 10^12 tokens could pass it.
inline constexpr int64_t kMostShardTokens = 999'999'999'999;

struct ShardWriterState {
  ShardWriterOptions options;
  WriteBudget budget;
  std::optional<ShardSpill> spill;  // the open shard: sites in order, then kIdTensors
  int64_t header_room = 0;          // the open shard's header, padded to it
  std::vector<uint8_t> scratch;     // spill bytes on their way into a shard
  // Each document's stored sites are rounded and spilled in groups, one a thread: group
  // 0 on the writer's own, group g on spill_threads[g - 1]. spill_group[site] is the
  // site's group (unused for a statistics-only site); converted[g] holds group g's
  // half-precision rows on their way into the spill.
  std::vector<size_t> spill_group;
  std::vector<std::vector<uint16_t>> converted;
  // The open shard (when spill holds one): its ended chunks, then maybe an open one.
  int shard_number = 0;
  int64_t shard_docs = 0, shard_tokens = 0;
  int64_t first_doc_id = 0, last_doc_id = -1;
  std::vector<SiteStatistics> open_statistics;  // per site, over the shard's ended chunks
  nlohmann::ordered_json ended_chunks =
      nlohmann::ordered_json::array();  // [chunk, documents, digest]
  // The chunk whose documents are coming (-1: none), and the shard as it was before
  // its first document, to cut back to if it never ends.
  int64_t open_chunk = -1;
  struct Boundary {
    std::vector<int64_t> spill_mark;
    int64_t docs = 0, tokens = 0, last_doc_id = -1;
  } boundary;
  std::vector<SiteStatistics> chunk_statistics;  // per site, over the open chunk
  ShardExamples examples;         // per SAE, over the open shard's ended chunks and the open chunk
  std::set<int64_t> chunks_seen;  // listed, ended or open
  std::optional<ShardListing> listing;
  // Shard files closed (written, fsynced, renamed) but not yet listed: listed
  // together once options.listing_interval passed since the last listing.
  struct Sealed {
    nlohmann::ordered_json entry;            // as metadata.json will list it
    std::vector<SiteStatistics> statistics;  // per site
  };
  std::vector<Sealed> sealed;
  // A closed shard sealed on seal_thread (options.seal_in_background); the job
  // touches only spill, path, header, scratch and result.
  struct Sealing {
    ShardSpill spill;
    std::string path, header;
    nlohmann::ordered_json entry;  // its bytes and crc32 filled in once sealed
    std::vector<SiteStatistics> statistics;
    std::vector<uint8_t> scratch = std::vector<uint8_t>(kCopyChunkBytes);
    std::expected<ShardSpill::Sealed, std::string> result{};
  };
  std::chrono::steady_clock::time_point last_listing = std::chrono::steady_clock::now();
  bool finished = false;
  std::string failure;           // set by the first error; every later call reports it
  SideThread statistics_thread;  // a large document's statistics, beside its spilling
  SideThread seal_thread;
  std::deque<SideThread> spill_threads;
  std::unique_ptr<Sealing> sealing;  // one at a time
  // Declared last: destroyed first, it waits for the seal that uses `sealing`.
  std::optional<SideThread::Running> sealing_run;

  // Whether the writer may write from more than its own thread: a test's write budget
  // counts the bytes of one.
  bool WritesBeside() const { return options.fail_after_bytes < 0; }
  bool SealsInBackground() const { return options.seal_in_background && WritesBeside(); }

  std::string PathOf(const std::string& name) const { return options.dir + "/" + name; }
  std::expected<void, std::string> WriteMetadata(bool complete);
  // The open shard's tensors (fill unused) and header metadata, for `tokens` tokens.
  std::vector<TensorToWrite> ShardLayout(int64_t tokens) const;
  std::map<std::string, std::string> ShardMetadata() const;
  std::expected<void, std::string> OpenShard();
  // Shares the stored sites out into the groups of options.spill_threads.
  void GroupSites();
  // Appends the document's rows of every stored site and its id tensors to the spill,
  // each group of sites on its thread when `beside` (else all on the caller's); the
  // first error in site order, if any.
  std::expected<void, std::string> SpillDocument(const DocumentActivations& document, bool beside);
  // One site's rows, rounded through `rounded` (its group's converted).
  std::expected<void, std::string> SpillRows(const DocumentActivations& document, size_t site,
                                             std::span<uint16_t> rounded);
  // Seals the open shard (or starts sealing it: SealsInBackground) and lists the
  // sealed ones when due.
  std::expected<void, std::string> CloseShard();
  // Takes the shard sealed in the background into `sealed` once its seal is done
  // (`wait`: waits for it); its error, if it failed.
  std::expected<void, std::string> CollectSealing(bool wait);
  std::expected<void, std::string> CutBackOpenChunk();
  // Asks options.before_listing about `chunks` ([chunk, documents] pairs).
  std::expected<void, std::string> AllowListing(const nlohmann::ordered_json& chunks);
  // Lists the sealed shards, and `without_documents` chunks, in one metadata.json.
  std::expected<void, std::string> ListSealed(const nlohmann::ordered_json& without_documents);
  // ListSealed once listing_interval passed since the last listing.
  std::expected<void, std::string> ListSealedWhenDue();
  // Closes the open shard (if it holds documents) and lists the chunks ended since.
  std::expected<void, std::string> ListEnded();
  std::expected<void, std::string> Fail(std::string message) {
    failure = std::move(message);
    return std::unexpected(failure);
  }
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_WRITER_STATE_H_
