#include "storage/earlier_output.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/whole_file.h"
#include "storage/file_io.h"
#include "storage/json_field.h"
#include "storage/shard_listing.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// The damage is the file's, not the command's: say how to look at it and the ways on.
std::string Damaged(const std::string& problem) {
  return problem +
         "; the output was damaged after it was written: see actex verify, then repair the "
         "file or give --overwrite to start anew";
}

// One "shards" entry; its "chunks" only when `with_chunks` (an older actex's entries
// are well-formed without them).
std::expected<void, std::string> CheckShardEntry(const nlohmann::json& shard,
                                                 const JsonPlace& place, bool with_chunks) {
  if (!shard.is_object()) return std::unexpected(JsonTypeError(place, &shard, "an object"));
  for (const char* key : {"file", "crc32"}) {
    if (auto text = JsonStringField(shard, place, key); !text) {
      return std::unexpected(text.error());
    }
  }
  for (const char* key : {"first_doc_id", "last_doc_id", "docs", "tokens", "bytes"}) {
    if (auto number = JsonIntField(shard, place, key, 0); !number) {
      return std::unexpected(number.error());
    }
  }
  if (auto files = ListedFilesOf(shard, place); !files) return std::unexpected(files.error());
  if (!with_chunks) return {};
  if (auto chunks = JsonArrayField(shard, place, "chunks"); !chunks) {
    return std::unexpected(chunks.error());
  }
  return {};
}

}  // namespace

std::expected<void, std::string> CheckContinuable(const nlohmann::json& metadata,
                                                  const std::string& file) {
  const JsonPlace top{file, ""};
  if (!metadata.is_object()) return std::unexpected(JsonTypeError(top, &metadata, "an object"));
  if (auto complete = JsonBoolField(metadata, top, "complete"); !complete) {
    return std::unexpected(complete.error());
  }
  // The run's configuration, compared with this run's (null: written without one).
  if (auto config = metadata.find("config");
      config == metadata.end() || (!config->is_object() && !config->is_null())) {
    return std::unexpected(JsonTypeError(
        top.Member("config"), config == metadata.end() ? nullptr : &*config, "an object"));
  }
  auto shards = JsonArrayField(metadata, top, "shards");
  if (!shards) return std::unexpected(shards.error());
  for (size_t i = 0; i < shards->get().size(); ++i) {
    const JsonPlace place = top.Member("shards").Element(i);
    if (auto checked = CheckShardEntry(shards->get()[i], place, true); !checked) return checked;
  }
  auto without = metadata.find("chunks_without_documents");
  if (without != metadata.end() && !without->is_null() && !without->is_array()) {
    return std::unexpected(JsonTypeError(top.Member("chunks_without_documents"), &*without,
                                         "an array of [chunk, documents] or null"));
  }
  auto statistics = metadata.find("statistics");
  if (statistics == metadata.end() || statistics->is_null()) return {};
  if (!statistics->is_object()) {
    return std::unexpected(
        JsonTypeError(top.Member("statistics"), &*statistics, "an object or null"));
  }
  for (const auto& [name, site] : statistics->items()) {
    if (auto parsed = SiteStatistics::FromJson(site); !parsed) {
      return std::unexpected(top.Member("statistics").Describe() + "[\"" + name +
                             "\"]: " + parsed.error());
    }
  }
  return {};
}

std::expected<std::optional<EarlierOutput>, std::string> ReadEarlierOutput(const std::string& dir) {
  const fs::path path = fs::path(dir) / "metadata.json";
  std::error_code error;
  if (!fs::exists(path, error)) return std::nullopt;
  // A regular file of a sane size (a FIFO or device put there would block a stream).
  auto text = ReadWholeFile(path.string());
  if (!text) return std::unexpected(text.error() + "; remove the folder or give --overwrite");
  EarlierOutput earlier;
  earlier.metadata = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (earlier.metadata.is_discarded() || !earlier.metadata.is_object() ||
      JsonStringField(earlier.metadata, {}, "format").value_or("") != "actex-activations") {
    return std::unexpected(path.string() + " is not an actex metadata.json; remove the folder " +
                           "or give --overwrite");
  }
  const nlohmann::json& metadata = earlier.metadata;
  if (auto shards = metadata.find("shards"); shards != metadata.end() && shards->is_array()) {
    for (const auto& shard : *shards) {
      const bool older = CheckShardEntry(shard, {}, /*with_chunks=*/false).has_value() &&
                         !shard.contains("chunks");
      if (!older) continue;
      const std::string name = shard["file"].get<std::string>();
      return std::unexpected(path.string() + " lists " + name +
                             " without the chunks it holds: it was written by an older actex, "
                             "whose shards could end inside a chunk; finish it with that "
                             "version, or give --overwrite to start anew");
    }
  }
  if (auto checked = CheckContinuable(metadata, path.string()); !checked) {
    return std::unexpected(Damaged(checked.error()));
  }
  earlier.complete = metadata["complete"].get<bool>();
  auto uploads = UploadLedger::Read(dir);
  if (!uploads) return std::unexpected(uploads.error());
  earlier.uploads = std::move(*uploads);
  for (const auto& shard : metadata["shards"]) {
    earlier.last_doc_id = shard["last_doc_id"].get<int64_t>();
    // CheckContinuable read the shard's files: the shard and its latent examples file.
    const std::vector<ListedShard> files = ListedFilesOf(shard, {}).value();
    for (const auto& [name, bytes, crc32] : files) {
      const fs::path file_path = fs::path(dir) / name;
      earlier.listed_files.insert(name);
      const bool present = fs::exists(file_path, error);
      if (!present && UploadedAndDeleted(earlier.uploads, name, bytes, crc32)) continue;
      const auto size = fs::file_size(file_path, error);
      if (error || static_cast<int64_t>(size) != bytes) {
        return std::unexpected(file_path.string() +
                               " is listed in metadata.json but is missing or has another size; "
                               "the output was damaged after it was written (see actex verify)");
      }
    }
  }
  auto chunks = ListedChunks(metadata);
  if (!chunks) return std::unexpected(Damaged(path.string() + ": " + chunks.error()));
  earlier.chunks = std::move(*chunks);
  return earlier;
}

std::expected<void, std::string> KeepRejectsOfListedChunks(const std::string& path,
                                                           const std::set<int64_t>& listed,
                                                           ChunkRule chunks) {
  std::ifstream file(path);
  if (!file) return {};
  std::ostringstream kept;
  for (std::string line; std::getline(file, line);) {
    auto reject = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    // A torn last line (the process died while appending) is dropped with the rest.
    if (!reject.is_object() || !reject.contains("doc_id") ||
        !reject["doc_id"].is_number_integer()) {
      continue;
    }
    if (listed.contains(chunks.ChunkOf(reject["doc_id"].get<int64_t>()))) kept << line << '\n';
  }
  return WriteFileAtomically(path, kept.str(), nullptr);
}

}  // namespace actex
