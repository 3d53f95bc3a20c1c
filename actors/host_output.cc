#include "actors/host_output.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "storage/earlier_output.h"

namespace actex {

std::expected<ReplicaStart, std::string> PrepareOutput(const ExtractOptions& extract,
                                                       WriterConfig& writer) {
  const std::string& dir = writer.shards.dir;
  if (std::error_code error; extract.overwrite && std::filesystem::exists(dir, error)) {
    std::filesystem::remove_all(dir, error);
    if (error) return std::unexpected("--overwrite: cannot remove " + dir + ": " + error.message());
  }
  auto earlier = ReadEarlierOutput(dir);
  if (!earlier) return std::unexpected(earlier.error());
  auto start = StartAfter(*earlier);
  if (!start || !*earlier) return start;
  const EarlierOutput& found = **earlier;
  if (auto same = CheckSameRun(dir, found.metadata["config"], writer.shards.run_config); !same) {
    return std::unexpected(same.error());
  }
  auto removed = DiscardUnlisted(dir, found);
  if (!removed) return std::unexpected(removed.error());
  if (auto kept = TruncateRejects(dir + "/rejects.jsonl", start->written_through); !kept) {
    return std::unexpected(kept.error());
  }
  writer.shards.continue_from = found.metadata;
  spdlog::info("{}: {}; {} shard(s) kept, {} unfinished file(s) removed", dir,
               start->complete
                   ? "already complete"
                   : "resuming after document " + std::to_string(start->written_through),
               found.metadata["shards"].size(), removed->size());
  return start;
}

UploaderConfig MakeUploaderConfig(const UploadOptions& upload, int host_id, WriterConfig& writer) {
  UploaderConfig uploader;
  uploader.upload = upload;
  uploader.host_dir = writer.shards.dir;
  uploader.host_id = host_id;
  uploader.requests_endpoint = "inproc://uploads";
  uploader.events_endpoint = writer.events_endpoint;
  writer.uploads_endpoint = uploader.requests_endpoint;
  if (writer.shards.continue_from.is_object()) {
    for (const auto& shard : writer.shards.continue_from["shards"]) {
      uploader.earlier_shards.push_back(
          {shard.value("file", ""), shard.value("bytes", int64_t{0}), shard.value("crc32", "")});
    }
  }
  return uploader;
}

}  // namespace actex
