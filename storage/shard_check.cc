#include "storage/shard_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <span>

#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/latent_sites.h"
#include "storage/safetensors.h"
#include "storage/shard_inflater.h"
#include "storage/shard_layout_check.h"

namespace actex {

namespace {

constexpr size_t kReadChunkBytes = size_t{1} << 20;

// Doc ids and positions token by token; see CheckShard.
void CheckDocuments(std::span<const uint8_t> doc_id_bytes, std::span<const uint8_t> position_bytes,
                    const ShardEntry& shard, ShardCheck* check) {
  const size_t tokens = doc_id_bytes.size() / sizeof(int64_t);
  bool order_reported = false, position_reported = false;
  size_t run_start = 0;
  int64_t previous = 0;
  for (size_t i = 0; i < tokens; ++i) {
    int64_t doc = 0;
    int32_t position = 0;
    std::memcpy(&doc, doc_id_bytes.data() + i * sizeof(doc), sizeof(doc));
    std::memcpy(&position, position_bytes.data() + i * sizeof(position), sizeof(position));
    if (i == 0 || doc != previous) {
      if (i > 0 && doc < previous && !order_reported) {
        check->faults.push_back("doc ids go back from " + std::to_string(previous) + " to " +
                                std::to_string(doc) + " at token " + std::to_string(i) +
                                ": documents must be whole and in increasing order");
        order_reported = true;
      }
      if (doc < 0 && !order_reported) {
        check->faults.push_back("negative doc id " + std::to_string(doc) + " at token " +
                                std::to_string(i));
        order_reported = true;
      }
      check->documents.push_back(doc);
      run_start = i;
    }
    const int64_t expected_position = static_cast<int64_t>(i - run_start);
    if (position != expected_position && !position_reported) {
      check->faults.push_back("document " + std::to_string(doc) + ": token " + std::to_string(i) +
                              " has position " + std::to_string(position) + ", expected " +
                              std::to_string(expected_position) +
                              " (positions count 0..n-1 within each document)");
      position_reported = true;
    }
    previous = doc;
  }
  const auto& documents = check->documents;
  if (static_cast<int64_t>(documents.size()) != shard.docs) {
    check->faults.push_back("holds " + std::to_string(documents.size()) +
                            " documents, metadata.json lists " + std::to_string(shard.docs));
  }
  if (!documents.empty() &&
      (documents.front() != shard.first_doc_id || documents.back() != shard.last_doc_id)) {
    check->faults.push_back("holds documents " + std::to_string(documents.front()) + ".." +
                            std::to_string(documents.back()) + ", metadata.json lists " +
                            std::to_string(shard.first_doc_id) + ".." +
                            std::to_string(shard.last_doc_id));
  }
  check->documents_read = true;
}

// Every row of each SAE's latents (storage/latent_sites.h).
void CheckLatents(const std::map<std::string, SafetensorsTensor>& tensors, const ShardEntry& shard,
                  ShardCheck* check) {
  for (const SaeRecord& sae : shard.saes) {
    if (std::string fault = CheckShardLatents(tensors, sae); !fault.empty()) {
      check->faults.push_back(std::move(fault));
    }
  }
}

// The SafetensorsFile error without the path it starts with: the caller names the file.
std::string WithoutPath(const std::string& error, const std::string& path) {
  const std::string prefix = path + ": ";
  return error.starts_with(prefix) ? error.substr(prefix.size()) : error;
}

void CheckPlainContents(const ShardEntry& shard, ShardCheck* check) {
  auto file = SafetensorsFile::Open(shard.path);
  if (!file) {
    check->faults.push_back("not a valid safetensors file: " +
                            WithoutPath(file.error(), shard.path));
    return;
  }
  if (!CheckShardLayout((*file)->header_json(), (*file)->data_bytes(), shard, &check->faults)) {
    return;
  }
  const auto& tensors = (*file)->tensors();
  CheckDocuments(tensors.at("doc_ids").bytes, tensors.at("positions").bytes, shard, check);
  CheckLatents(tensors, shard, check);
}

void CheckGzipContents(const ShardInflater& inflated, const ShardEntry& shard, ShardCheck* check) {
  if (!inflated.error().empty()) {
    check->faults.push_back(inflated.error());
    return;
  }
  if (!inflated.header_complete()) {
    check->faults.push_back("decompressed, it is " + std::to_string(inflated.inflated_bytes()) +
                            " bytes: too short for its safetensors header");
    return;
  }
  if (!CheckShardLayout(inflated.header_json(), inflated.data_bytes(), shard, &check->faults))
    return;
  CheckDocuments(inflated.doc_ids(), inflated.positions(), shard, check);
  // The latents' tensors as the header describes them, over the bytes kept of them.
  CheckLatents(inflated.CapturedTensors(), shard, check);
}

}  // namespace

ShardCheck CheckShard(const ShardEntry& shard) {
  ShardCheck check;
  int fd = ::open(shard.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    check.missing = errno == ENOENT;
    check.faults.push_back(check.missing ? "listed in metadata.json but missing"
                                         : OsError("cannot open", shard.path, errno));
    return check;
  }
  ScopedFd guard(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    check.faults.push_back("not a regular file");
    return check;
  }
  const bool size_matches = info.st_size == shard.bytes;
  if (!size_matches) {
    check.faults.push_back("is " + std::to_string(info.st_size) + " bytes, metadata.json lists " +
                           std::to_string(shard.bytes) + " (truncated or overwritten)");
  }
  // One pass over the stored bytes: the CRC, and for gzip the inflated stream.
  ShardInflater inflater;
  for (const SaeRecord& sae : shard.saes) {
    const LatentSiteNames names = LatentSiteNamesOf(sae.site);
    inflater.CaptureAlso({names.ids, names.values, names.count});
  }
  uint32_t crc = 0;
  std::vector<uint8_t> chunk(kReadChunkBytes);
  for (int64_t offset = 0; offset < info.st_size;) {
    const ssize_t got = ::pread(fd, chunk.data(), chunk.size(), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      check.faults.push_back(got < 0 ? OsError("cannot read", shard.path, errno)
                                     : "shrank while it was read");
      return check;
    }
    crc = Crc32Update(crc, chunk.data(), static_cast<size_t>(got));
    if (shard.gzip) inflater.Feed(chunk.data(), static_cast<size_t>(got));
    offset += got;
  }
  if (size_matches && crc != shard.crc32) {
    check.faults.push_back("crc32 is " + FormatCrc32(crc) + ", metadata.json lists " +
                           FormatCrc32(shard.crc32) + " (damaged bytes)");
  }
  if (shard.gzip) {
    inflater.Finish();
    CheckGzipContents(inflater, shard, &check);
  } else {
    CheckPlainContents(shard, &check);
  }
  return check;
}

}  // namespace actex
