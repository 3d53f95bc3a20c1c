#ifndef ACTEX_STORAGE_SHARD_WRITER_H_
#define ACTEX_STORAGE_SHARD_WRITER_H_

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace actex {

enum class OutputDtype { kF32, kF16, kBF16 };

struct ShardWriterOptions {
  std::string dir;                      // OUT/host_NN, created if missing
  int64_t shard_bytes = int64_t{1} << 30;  // close a shard once its tensors reach this
  bool gzip = false;                    // shard_NNNNNN.safetensors.gz
  OutputDtype dtype = OutputDtype::kF32;
  std::vector<std::pair<std::string, int>> sites;  // (hook name, width), tensor order
  std::map<std::string, std::string> tensor_metadata;  // safetensors __metadata__
  nlohmann::json run_config;            // stored under "config" in metadata.json
};

// One whole document's activations. Spans point into the caller's buffers.
struct DocumentActivations {
  int64_t doc_id = 0;
  std::span<const int32_t> token_ids;   // [tokens]
  std::span<const int32_t> positions;   // [tokens] position within the document
  std::vector<std::span<const float>> sites;  // per site, [tokens, width]
};

struct ShardStats {
  int64_t shards = 0, docs = 0, tokens = 0, bytes = 0;
};

// Writes documents into shard_000001.safetensors, shard_000002..., each holding whole
// documents: tensors per site [tokens, width] in the output dtype, plus token_ids
// I32, doc_ids I64 and positions I32. Memory stays flat whatever the shard size:
// rows are spilled to temporary files and the shard is assembled on close under a
// temporary name, fsynced and renamed; then metadata.json (shards with first/last
// doc id, docs, tokens, bytes, crc32, plus run config) is replaced atomically.
// A shard not yet closed is never listed; an error (disk full) names the path and
// the OS error and leaves every listed shard valid.
class ShardWriter {
 public:
  static std::expected<std::unique_ptr<ShardWriter>, std::string> Open(ShardWriterOptions options);

  std::expected<void, std::string> Add(const DocumentActivations& document);
  // Closes the open shard (if it has any document) and writes metadata.json with
  // "complete": true.
  std::expected<void, std::string> Finish();

  const ShardStats& stats() const;
  ~ShardWriter();

 private:
  ShardWriter();
  struct State;
  std::unique_ptr<State> state_;
};

// Parses "1GB", "512MB", "64KB", "1000" (bytes); binary multiples (1KB = 1024).
std::expected<int64_t, std::string> ParseByteSize(const std::string& text);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_WRITER_H_
