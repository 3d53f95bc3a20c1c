#include "storage/earlier_output.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "storage/file_io.h"
#include "storage/shard_listing.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

bool IsShardFile(const std::string& name) {
  return name.starts_with("shard_") &&
         (name.ends_with(".safetensors") || name.ends_with(".safetensors.gz"));
}

}  // namespace

std::expected<std::optional<EarlierOutput>, std::string> ReadEarlierOutput(const std::string& dir) {
  const fs::path path = fs::path(dir) / "metadata.json";
  std::error_code error;
  if (!fs::exists(path, error)) return std::nullopt;
  std::ifstream file(path);
  EarlierOutput earlier;
  earlier.metadata = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (earlier.metadata.is_discarded() || !earlier.metadata.is_object() ||
      earlier.metadata.value("format", "") != "actex-activations" ||
      !earlier.metadata["shards"].is_array()) {
    return std::unexpected(path.string() + " is not an actex metadata.json; remove the folder " +
                           "or give --overwrite");
  }
  earlier.complete = earlier.metadata.value("complete", false);
  auto uploads = UploadLedger::Read(dir);
  if (!uploads) return std::unexpected(uploads.error());
  earlier.uploads = std::move(*uploads);
  for (const auto& shard : earlier.metadata["shards"]) {
    const bool well_formed = shard.is_object() && shard.contains("file") &&
                             shard["file"].is_string() && shard.contains("bytes") &&
                             shard["bytes"].is_number_integer() && shard.contains("last_doc_id") &&
                             shard["last_doc_id"].is_number_integer() &&
                             (!shard.contains("crc32") || shard["crc32"].is_string());
    if (!well_formed) {
      return std::unexpected(path.string() + " lists a malformed shard entry; the output was " +
                             "damaged after it was written (see actex verify)");
    }
    const std::string name = shard.value("file", "");
    const int64_t bytes = shard.value("bytes", int64_t{-1});
    const fs::path shard_path = fs::path(dir) / name;
    earlier.last_doc_id = shard.value("last_doc_id", int64_t{-1});
    const bool present = fs::exists(shard_path, error);
    if (!present && UploadedAndDeleted(earlier.uploads, name, bytes, shard.value("crc32", ""))) {
      continue;
    }
    const auto size = fs::file_size(shard_path, error);
    if (error || static_cast<int64_t>(size) != bytes) {
      return std::unexpected(shard_path.string() +
                             " is listed in metadata.json but is missing or has another size; "
                             "the output was damaged after it was written (see actex verify)");
    }
  }
  for (const auto& shard : earlier.metadata["shards"]) {
    if (shard.contains("chunks")) continue;
    return std::unexpected(path.string() + " lists " + shard.value("file", "a shard") +
                           " without the chunks it holds: it was written by an older actex, "
                           "whose shards could end inside a chunk; finish it with that version, "
                           "or give --overwrite to start anew");
  }
  auto chunks = ListedChunks(earlier.metadata);
  if (!chunks) {
    return std::unexpected(path.string() + ": " + chunks.error() +
                           "; the output was damaged after it was written (see actex verify)");
  }
  earlier.chunks = std::move(*chunks);
  return earlier;
}

std::expected<std::vector<std::string>, std::string> DiscardUnlisted(const std::string& dir,
                                                                     const EarlierOutput& earlier) {
  std::set<std::string> listed;
  for (const auto& shard : earlier.metadata["shards"]) listed.insert(shard.value("file", ""));
  std::vector<std::string> removed;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const bool leftover = (IsShardFile(name) && !listed.contains(name)) || name.ends_with(".tmp");
    if (!leftover) continue;
    if (!fs::remove(entry.path(), error)) {
      return std::unexpected("cannot remove " + entry.path().string() + ": " + error.message());
    }
    removed.push_back(name);
  }
  if (error) return std::unexpected("cannot list " + dir + ": " + error.message());
  return removed;
}

std::expected<void, std::string> KeepRejectsOfListedChunks(const std::string& path,
                                                           const std::set<int64_t>& listed,
                                                           int64_t chunk_docs) {
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
    if (listed.contains(reject["doc_id"].get<int64_t>() / chunk_docs)) kept << line << '\n';
  }
  return WriteFileAtomically(path, kept.str(), nullptr);
}

}  // namespace actex
