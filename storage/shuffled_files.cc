#include "storage/shuffled_files.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "storage/crc32.h"
#include "storage/safetensors.h"
#include "storage/shuffled_output.h"

namespace actex {

ShuffledFileWriter::ShuffledFileWriter(std::string dir, const RecordLayout& layout, int64_t rows,
                                       int64_t rows_per_file, uint64_t seed, int64_t staging_bytes,
                                       WriteBudget* budget, std::set<int64_t> listed)
    : dir_(std::move(dir)),
      layout_(layout),
      rows_(rows),
      rows_per_file_(rows_per_file),
      seed_(seed),
      staging_bytes_(staging_bytes),
      budget_(budget),
      listed_(std::move(listed)) {
  int64_t at = 0;
  for (const StoredSite& site : layout_.sites) {
    tensor_parts_.emplace_back(
        at, int64_t{site.width} * SafetensorsDtypeBytes(site.Dtype(layout_.dtype)));
    at += tensor_parts_.back().second;
  }
  for (int64_t bytes : {4, 8, 4}) {
    tensor_parts_.emplace_back(at, bytes);
    at += bytes;
  }
}

std::string ShuffledFileWriter::TmpPath(int64_t file) const {
  return AtomicWriteTempPath(dir_ + "/" + ShuffledFileName(file));
}

std::expected<int, std::string> ShuffledFileWriter::Open(int64_t file) {
  if (auto open = open_.find(file); open != open_.end()) return open->second.fd.get();
  const std::string tmp = TmpPath(file);
  std::vector<TensorToWrite> tensors;
  for (const StoredSite& site : layout_.sites) {
    tensors.push_back({site.name, site.Dtype(layout_.dtype), {FileRows(file), site.width}, {}});
  }
  tensors.push_back({"token_ids", "I32", {FileRows(file)}, {}});
  tensors.push_back({"doc_ids", "I64", {FileRows(file)}, {}});
  tensors.push_back({"positions", "I32", {FileRows(file)}, {}});
  auto header =
      EncodeSafetensorsHeader(tensors, {{"format", "pt"}, {"shuffle_seed", std::to_string(seed_)}});
  if (!header) return std::unexpected(header.error());
  const int64_t size = static_cast<int64_t>(header->size()) + FileRows(file) * layout_.record_bytes;
  // Renamed but not yet listed when a run stopped: it holds every row, take it back.
  const std::string done = dir_ + "/" + ShuffledFileName(file);
  if (::access(tmp.c_str(), F_OK) != 0 && ::access(done.c_str(), F_OK) == 0 &&
      ::rename(done.c_str(), tmp.c_str()) != 0) {
    return std::unexpected(OsError("cannot rename", done, errno));
  }
  ScopedFd fd(::open(tmp.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) return std::unexpected(OsError("cannot open", tmp, errno));
  OpenFile open;
  open.data_start = static_cast<int64_t>(header->size());
  // A resumed file keeps the rows earlier buckets wrote; a new one gets its header.
  if (::lseek(fd.get(), 0, SEEK_END) != size) {
    open.crc_known = true;
    open.header_crc = Crc32Update(0, header->data(), header->size());
    open.part_crc.assign(tensor_parts_.size(), 0);
    open.part_written.assign(tensor_parts_.size(), 0);
    if (::ftruncate(fd.get(), 0) != 0 || ::lseek(fd.get(), 0, SEEK_SET) != 0) {
      return std::unexpected(OsError("cannot truncate", tmp, errno));
    }
    if (auto wrote = WriteAll(fd.get(), header->data(), header->size(), tmp, budget_); !wrote) {
      return std::unexpected(wrote.error());
    }
    if (::ftruncate(fd.get(), size) != 0)
      return std::unexpected(OsError("cannot size", tmp, errno));
  }
  const int raw = fd.get();
  open.fd = std::move(fd);
  open_.emplace(file, std::move(open));
  return raw;
}

std::expected<void, std::string> ShuffledFileWriter::Write(
    const std::vector<uint8_t>& entries, const std::vector<std::pair<uint64_t, uint32_t>>& order,
    int64_t first_row) {
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t entry_bytes = layout_.record_bytes + 8;
  int64_t widest = 8;
  for (const auto& part : tensor_parts_) widest = std::max(widest, part.second);
  const int64_t staging_rows = std::max<int64_t>(1, staging_bytes_ / widest);
  std::vector<uint8_t> staging;
  for (int64_t begin = 0; begin < n;) {
    const int64_t file = (first_row + begin) / rows_per_file_;
    const int64_t end = std::min(n, (file + 1) * rows_per_file_ - first_row);
    if (listed_.count(file)) {  // written and listed before a resume
      begin = end;
      continue;
    }
    auto fd = Open(file);
    if (!fd) return std::unexpected(fd.error());
    const std::string tmp = TmpPath(file);
    OpenFile& open = open_.at(file);
    int64_t tensor_start = open.data_start;
    const int64_t row_in_file = first_row + begin - file * rows_per_file_;
    for (size_t part = 0; part < tensor_parts_.size(); ++part) {
      const auto [at, bytes] = tensor_parts_[part];
      for (int64_t chunk = begin; chunk < end; chunk += staging_rows) {
        const int64_t count = std::min(staging_rows, end - chunk);
        staging.resize(static_cast<size_t>(count * bytes));
        for (int64_t i = 0; i < count; ++i) {
          const uint8_t* entry = entries.data() + order[chunk + i].second * entry_bytes;
          std::memcpy(staging.data() + i * bytes, entry + 8 + at, static_cast<size_t>(bytes));
        }
        const int64_t offset = tensor_start + (row_in_file + chunk - begin) * bytes;
        if (::lseek(*fd, offset, SEEK_SET) != offset) {
          return std::unexpected(OsError("cannot seek in", tmp, errno));
        }
        if (auto wrote = WriteAll(*fd, staging.data(), staging.size(), tmp, budget_); !wrote) {
          return wrote;
        }
        StartWriteback(*fd);
        if (open.crc_known && offset - tensor_start == open.part_written[part]) {
          open.part_crc[part] = Crc32Update(open.part_crc[part], staging.data(), staging.size());
          open.part_written[part] += static_cast<int64_t>(staging.size());
        } else {
          open.crc_known = false;  // not in file order: read the file back at the end
        }
      }
      tensor_start += FileRows(file) * bytes;
    }
    if (first_row + end == file * rows_per_file_ + FileRows(file)) {
      written_open_.push_back(file);
      if (auto closed = CloseOldestWritten(); !closed) return closed;
    }
    begin = end;
  }
  return {};
}

std::expected<void, std::string> ShuffledFileWriter::CloseOldestWritten() {
  if (written_open_.size() <= kMaxWrittenOpen) return {};
  const int64_t file = written_open_.front();
  written_open_.pop_front();
  OpenFile& open = open_.at(file);
  const std::string tmp = TmpPath(file);
  if (auto synced = SyncFile(open.fd.get(), tmp); !synced) return synced;
  return open.fd.Close(tmp);
}

std::expected<std::vector<ShuffledFileWriter::Finished>, std::string> ShuffledFileWriter::Sync(
    int64_t rows_done) {
  std::vector<Finished> finished;
  for (auto it = open_.begin(); it != open_.end();) {
    const int64_t file = it->first;
    const std::string tmp = TmpPath(file);
    OpenFile& open = it->second;
    if (open.fd.get() < 0) {
      // Synced and closed while the bucket was written.
    } else if (auto synced = SyncFile(open.fd.get(), tmp); !synced) {
      return std::unexpected(synced.error());
    }
    if (file * rows_per_file_ + FileRows(file) > rows_done) {
      ++it;
      continue;
    }
    if (open.fd.get() >= 0) {
      if (auto closed = open.fd.Close(tmp); !closed) return std::unexpected(closed.error());
    }
    std::expected<std::pair<int64_t, uint32_t>, std::string> crc;
    if (open.crc_known) {
      crc = std::make_pair(open.data_start, open.header_crc);
      for (size_t part = 0; part < tensor_parts_.size(); ++part) {
        crc->second = static_cast<uint32_t>(
            crc32_combine(crc->second, open.part_crc[part], open.part_written[part]));
        crc->first += open.part_written[part];
      }
    } else {
      crc = FileCrc32(tmp);  // begun by an earlier run: read back, from the page cache
    }
    it = open_.erase(it);
    std::erase(written_open_, file);
    if (!crc) return std::unexpected(crc.error());
    const std::string name = ShuffledFileName(file);
    if (auto renamed = CommitRename(tmp, dir_ + "/" + name); !renamed) {
      return std::unexpected(renamed.error());
    }
    listed_.insert(file);
    finished.push_back({file, name, FileRows(file), crc->first, crc->second});
  }
  return finished;
}

}  // namespace actex
