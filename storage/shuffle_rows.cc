#include "storage/shuffle_rows.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/float_convert.h"
#include "storage/gzip_decoder.h"
#include "storage/job_folders.h"
#include "storage/output_folder.h"
#include "storage/safetensors.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

constexpr size_t kReadChunk = size_t{1} << 20;

template <typename T>
T Load(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// Reads `path` once, checking its size and CRC-32; a gzip'd shard is inflated into
// `inflated_path` on the way.
std::expected<void, std::string> CheckAndInflate(const SourceShard& shard,
                                                 const std::string& inflated_path) {
  ScopedFd in(::open(shard.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) return std::unexpected(OsError("cannot open", shard.path, errno));
  ScopedFd out;
  GzipDecoder decoder;
  if (shard.gzip) {
    auto created = CreateFileForWrite(inflated_path);
    if (!created) return std::unexpected(created.error());
    out = std::move(*created);
  }
  std::vector<uint8_t> chunk(kReadChunk), inflated(shard.gzip ? kReadChunk : 0);
  uint32_t crc = 0;
  int64_t total = 0;
  // Inflates into the file until the decoder needs input (or, at the end, has no more).
  auto drain = [&]() -> std::expected<void, std::string> {
    for (;;) {
      auto produced = decoder.Inflate(inflated.data(), inflated.size());
      if (!produced) return std::unexpected(shard.path + ": " + produced.error());
      if (*produced == 0) return {};
      if (auto wrote = WriteAll(out.get(), inflated.data(), *produced, inflated_path, nullptr);
          !wrote) {
        return wrote;
      }
    }
  };
  for (;;) {
    const ssize_t got = ::read(in.get(), chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::unexpected(OsError("cannot read", shard.path, errno));
    if (got == 0) break;
    crc = Crc32Update(crc, chunk.data(), static_cast<size_t>(got));
    total += got;
    if (!shard.gzip) continue;
    decoder.SetInput(chunk.data(), static_cast<size_t>(got));
    if (auto drained = drain(); !drained) return drained;
  }
  if (total != shard.bytes || crc != shard.crc32) {
    return std::unexpected(shard.path + ": " + std::to_string(total) + " bytes with crc32 " +
                           FormatCrc32(crc) + ", but metadata.json lists " +
                           std::to_string(shard.bytes) + " bytes with crc32 " +
                           FormatCrc32(shard.crc32) + ": the shard is damaged or was replaced");
  }
  if (!shard.gzip) return {};
  if (auto drained = drain(); !drained) return drained;  // what the decoder still holds
  if (auto ended = decoder.Finish(); !ended) {
    return std::unexpected(shard.path + ": " + ended.error());
  }
  return out.Close(inflated_path);
}

}  // namespace

std::expected<SourceOutput, std::string> ReadSourceOutput(const std::string& dir) {
  bool single_folder = false;
  std::vector<VerifyFinding> unused_faults;  // a folder without metadata.json holds no rows
  auto folders = ListHostFolders(dir, &single_folder, &unused_faults);
  if (!folders) return std::unexpected(folders.error());
  if (single_folder) folders->front().second.clear();  // shards named as in the folder
  SourceOutput source;
  source.dir = dir;
  for (const auto& [path, label] : *folders) {
    const std::string name = label.empty() ? path : label;
    std::vector<VerifyFinding> faults;
    auto folder = ReadOutputFolder(path, name, &faults);
    if (!faults.empty() || !folder) {
      const VerifyFinding& first = faults.front();
      return std::unexpected(first.file + ": " + first.problem +
                             (faults.size() > 1 ? " (and " + std::to_string(faults.size() - 1) +
                                                      " more faults; see actex verify)"
                                                : ""));
    }
    if (!folder->complete) {
      return std::unexpected(name +
                             "/metadata.json: the run has not finished (\"complete\": "
                             "false); finish or resume it first");
    }
    for (const ShardEntry& listing : folder->shards) {
      if (source.shards.empty()) {
        source.sites = listing.sites;
        source.dtype = listing.site_dtype;
        source.saes = listing.saes;
      } else if (listing.sites != source.sites || listing.site_dtype != source.dtype) {
        return std::unexpected(name + " holds other sites or another dtype than " +
                               source.shards.front().file + ": not one extraction");
      }
      const std::string file = fs::path(listing.path).filename().string();
      source.shards.push_back({label.empty() ? file : label + "/" + file, listing.path,
                               listing.gzip, listing.bytes, listing.tokens, listing.crc32,
                               listing.first_doc_id, listing.last_doc_id});
      source.tokens += listing.tokens;
    }
  }
  if (source.shards.empty()) return std::unexpected(dir + " lists no shard: nothing to shuffle");
  return source;
}

int32_t RecordLayout::token_id(const uint8_t* record) const {
  return Load<int32_t>(record + site_bytes);
}
int64_t RecordLayout::doc_id(const uint8_t* record) const {
  return Load<int64_t>(record + site_bytes + 4);
}
int32_t RecordLayout::position(const uint8_t* record) const {
  return Load<int32_t>(record + site_bytes + 12);
}

std::expected<RecordLayout, std::string> MakeRecordLayout(const SourceOutput& source,
                                                          const std::vector<std::string>& sites,
                                                          const std::string& dtype) {
  RecordLayout layout;
  layout.dtype = dtype.empty() ? source.dtype : dtype;
  if (layout.dtype != "F32" && layout.dtype != "F16" && layout.dtype != "BF16") {
    return std::unexpected("unknown dtype " + layout.dtype + " (float32, float16 or bfloat16)");
  }
  std::vector<std::string> chosen = sites;
  if (chosen.empty()) {
    for (const StoredSite& site : source.sites) chosen.push_back(site.name);
  }
  for (const std::string& name : chosen) {
    auto found = std::find_if(source.sites.begin(), source.sites.end(),
                              [&](const StoredSite& site) { return site.name == name; });
    if (found == source.sites.end()) {
      std::string known;
      for (const StoredSite& site : source.sites) known += (known.empty() ? "" : ", ") + site.name;
      return std::unexpected("site " + name + " is not in the output (it has " + known + ")");
    }
    if (std::find(layout.sites.begin(), layout.sites.end(), *found) != layout.sites.end()) {
      return std::unexpected("site " + name + " is chosen twice");
    }
    layout.sites.push_back(*found);
    layout.source_site.push_back(static_cast<int>(found - source.sites.begin()));
    layout.site_bytes += int64_t{found->width} * SafetensorsDtypeBytes(found->Dtype(layout.dtype));
  }
  layout.record_bytes = layout.site_bytes + 16;
  return layout;
}

void ConvertFloats(const std::string& from, const uint8_t* in, const std::string& to, uint8_t* out,
                   int64_t count) {
  const int in_bytes = SafetensorsDtypeBytes(from);
  if (from == to) {
    std::memcpy(out, in, static_cast<size_t>(count * in_bytes));
    return;
  }
  float values[256];
  for (int64_t done = 0; done < count;) {
    const int64_t n = std::min<int64_t>(256, count - done);
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* at = in + (done + i) * in_bytes;
      if (from == "F32") values[i] = Load<float>(at);
      if (from == "F16") values[i] = HalfBitsToFloat(Load<uint16_t>(at));
      if (from == "BF16") values[i] = Bfloat16BitsToFloat(Load<uint16_t>(at));
    }
    const std::span<const float> span(values, static_cast<size_t>(n));
    if (to == "F32") std::memcpy(out + done * 4, values, static_cast<size_t>(n * 4));
    if (to == "F16") ConvertToHalf(span, reinterpret_cast<uint16_t*>(out + done * 2));
    if (to == "BF16") ConvertToBfloat16(span, reinterpret_cast<uint16_t*>(out + done * 2));
    done += n;
  }
}

std::expected<std::unique_ptr<SourceShardRows>, std::string> SourceShardRows::Open(
    const SourceShard& shard, const SourceOutput& source, const std::string& scratch_path) {
  std::unique_ptr<SourceShardRows> rows(new SourceShardRows());
  rows->path_ = shard.path;
  if (shard.gzip) {
    rows->scratch_path_ = scratch_path;
    rows->path_ = scratch_path;
  }
  if (auto checked = CheckAndInflate(shard, scratch_path); !checked) {
    return std::unexpected(checked.error());
  }
  auto file = SafetensorsFile::Open(rows->path_);
  if (!file) return std::unexpected(shard.path + ": " + file.error());
  const auto header = nlohmann::json::parse((*file)->header_json());
  const int64_t data_start = 8 + static_cast<int64_t>((*file)->header_json().size());
  auto tensor = [&](const std::string& name, const std::string& dtype,
                    std::vector<int64_t> shape) -> std::expected<int64_t, std::string> {
    auto found = (*file)->tensors().find(name);
    if (found == (*file)->tensors().end() || found->second.dtype != dtype ||
        found->second.shape != shape) {
      return std::unexpected(shard.path + ": tensor " + name + " is missing or not " + dtype +
                             " of the listed shape");
    }
    return data_start + header[name]["data_offsets"][0].get<int64_t>();
  };
  rows->rows_ = shard.tokens;
  rows->source_dtype_ = source.dtype;
  for (const StoredSite& site : source.sites) {
    auto offset = tensor(site.name, site.Dtype(source.dtype), {shard.tokens, site.width});
    if (!offset) return std::unexpected(offset.error());
    rows->site_offsets_.push_back(*offset);
  }
  auto token_ids = tensor("token_ids", "I32", {shard.tokens});
  auto doc_ids = tensor("doc_ids", "I64", {shard.tokens});
  auto positions = tensor("positions", "I32", {shard.tokens});
  for (const auto* offset : {&token_ids, &doc_ids, &positions}) {
    if (!*offset) return std::unexpected(offset->error());
  }
  rows->token_ids_offset_ = *token_ids;
  rows->doc_ids_offset_ = *doc_ids;
  rows->positions_offset_ = *positions;
  rows->fd_ = ::open(rows->path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (rows->fd_ < 0) return std::unexpected(OsError("cannot open", rows->path_, errno));
  return rows;
}

SourceShardRows::~SourceShardRows() {
  if (fd_ >= 0) ::close(fd_);
  if (!scratch_path_.empty()) ::unlink(scratch_path_.c_str());
}

std::expected<void, std::string> SourceShardRows::Read(int64_t begin, int64_t count,
                                                       const RecordLayout& layout,
                                                       uint8_t* records) {
  int64_t at = 0;  // byte of the record where this tensor's bytes go
  for (size_t chosen = 0; chosen < layout.sites.size(); ++chosen) {
    const StoredSite& site = layout.sites[chosen];
    const int64_t width = site.width;
    // An integer site is I32 on both sides: copied as it is.
    const std::string from = site.Dtype(source_dtype_), to = site.Dtype(layout.dtype);
    const int source_bytes = SafetensorsDtypeBytes(from);
    buffer_.resize(static_cast<size_t>(count * width * source_bytes));
    if (auto read = PreadAll(
            fd_, buffer_.data(), buffer_.size(),
            site_offsets_[layout.source_site[chosen]] + begin * width * source_bytes, path_);
        !read) {
      return read;
    }
    for (int64_t row = 0; row < count; ++row) {
      ConvertFloats(from, buffer_.data() + row * width * source_bytes, to,
                    records + row * layout.record_bytes + at, width);
    }
    at += width * SafetensorsDtypeBytes(to);
  }
  const std::pair<int64_t, int> ids[] = {
      {token_ids_offset_, 4}, {doc_ids_offset_, 8}, {positions_offset_, 4}};
  for (const auto& [offset, bytes] : ids) {
    buffer_.resize(static_cast<size_t>(count * bytes));
    if (auto read = PreadAll(fd_, buffer_.data(), buffer_.size(), offset + begin * bytes, path_);
        !read) {
      return read;
    }
    for (int64_t row = 0; row < count; ++row) {
      std::memcpy(records + row * layout.record_bytes + at, buffer_.data() + row * bytes,
                  static_cast<size_t>(bytes));
    }
    at += bytes;
  }
  return {};
}

}  // namespace actex
