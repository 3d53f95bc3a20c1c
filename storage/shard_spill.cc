#include "storage/shard_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "storage/crc32.h"
#include "storage/host_folder_files.h"

namespace actex {
namespace {

// Every this many bytes appended to the shard file in place, the kernel is asked to
// start writing them (StartWriteback): the disk works while documents come, and the
// seal's fsync finds little left to wait for.
constexpr int64_t kWritebackBytes = int64_t{32} << 20;

// The name by which linkat(2) can give an O_TMPFILE file a name.
std::string ProcFdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// A file at `path` made and unlinked at once: it has no name from the start.
std::expected<ScopedFd, std::string> CreateUnlinked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return std::unexpected(OsError("cannot create spill file", path, errno));
  ScopedFd owned(fd);
  if (::unlink(path.c_str()) != 0) {
    return std::unexpected(OsError("cannot unlink spill file", path, errno));
  }
  return owned;
}

}  // namespace

std::expected<ShardSpill, std::string> ShardSpill::Create(const std::string& dir, int number,
                                                          size_t tensors, WriteBudget* budget) {
  ShardSpill spill;
  spill.budget_ = budget;
  for (size_t i = 0; i < tensors; ++i) {
    File file;
    file.path = dir + "/" + SpillFileName(number, i);
    auto fd = CreateUnlinked(file.path);
    if (!fd) return std::unexpected(fd.error());
    file.fd = std::move(*fd);
    spill.files_.push_back(std::move(file));
  }
  return spill;
}

std::expected<ShardSpill, std::string> ShardSpill::CreateInPlace(const std::string& dir, int number,
                                                                 size_t tensors, size_t front,
                                                                 int64_t header_bytes,
                                                                 WriteBudget* budget) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) {
    // EOPNOTSUPP: this file system has no O_TMPFILE; EISDIR: the kernel predates it.
    if (errno == EOPNOTSUPP || errno == EISDIR) return Create(dir, number, tensors, budget);
    return std::unexpected(OsError("cannot create the shard file to be in", dir, errno));
  }
  ScopedFd shard(fd);
  if (::access(ProcFdPath(fd).c_str(), F_OK) != 0) return Create(dir, number, tensors, budget);
  ShardSpill spill;
  spill.budget_ = budget;
  spill.in_place_ = true;
  spill.front_ = front;
  for (size_t i = 0; i < tensors; ++i) {
    File file;
    file.path = dir + "/" + SpillFileName(number, i);
    if (i == front) {
      file.fd = std::move(shard);
      file.front = header_bytes;
      if (::lseek(file.fd.get(), header_bytes, SEEK_SET) < 0) {
        return std::unexpected(OsError("cannot seek in the shard file to be", file.path, errno));
      }
    } else {
      auto unlinked = CreateUnlinked(file.path);
      if (!unlinked) return std::unexpected(unlinked.error());
      file.fd = std::move(*unlinked);
    }
    spill.files_.push_back(std::move(file));
  }
  return spill;
}

std::expected<void, std::string> ShardSpill::Append(size_t tensor, const void* data, size_t bytes) {
  File& file = files_.at(tensor);
  if (auto written = WriteAll(file.fd.get(), data, bytes, file.path, budget_); !written) {
    return written;
  }
  file.crc = Crc32Update(file.crc, data, bytes);  // while the bytes are in the cache
  file.bytes += static_cast<int64_t>(bytes);
  if (in_place_ && tensor == front_ &&
      (appended_since_writeback_ += static_cast<int64_t>(bytes)) >= kWritebackBytes) {
    StartWriteback(file.fd.get());
    appended_since_writeback_ = 0;
  }
  return {};
}

int64_t ShardSpill::bytes() const {
  int64_t bytes = 0;
  for (const File& file : files_) bytes += file.bytes;
  return bytes;
}

std::vector<int64_t> ShardSpill::Mark() const {
  std::vector<int64_t> mark;
  for (const File& file : files_) mark.push_back(file.bytes);
  return mark;
}

std::expected<void, std::string> ShardSpill::CutBackTo(const std::vector<int64_t>& mark) {
  for (size_t i = 0; i < files_.size(); ++i) {
    File& file = files_[i];
    // The descriptor's offset moves back too, so a later append continues at the cut.
    if (::ftruncate(file.fd.get(), file.front + mark.at(i)) != 0 ||
        ::lseek(file.fd.get(), file.front + mark[i], SEEK_SET) < 0) {
      return std::unexpected(OsError("cannot cut back spill file", file.path, errno));
    }
    file.bytes = mark[i];
    // The CRC of what is left, read back: a cut is rare (a run ending inside a chunk).
    std::vector<uint8_t> piece(std::min<int64_t>(file.bytes, int64_t{1} << 20));
    file.crc = 0;
    auto summed = ReadBack(file, piece, [&](const uint8_t* data, size_t size) {
      file.crc = Crc32Update(file.crc, data, size);
      return std::expected<void, std::string>();
    });
    if (!summed) return summed;
  }
  return {};
}

std::expected<void, std::string> ShardSpill::CopyTo(ShardFileSink& sink,
                                                    std::span<uint8_t> scratch) const {
  for (const File& file : files_) {
    auto copied = sink.CopyFileIn(file.fd.get(), file.path, file.bytes, file.crc);
    if (!copied) return std::unexpected(copied.error());
    if (*copied) continue;
    auto written = ReadBack(
        file, scratch, [&](const uint8_t* data, size_t size) { return sink.Write(data, size); });
    if (!written) return written;
  }
  return {};
}

std::expected<void, std::string> ShardSpill::AppendFile(const File& file, int to,
                                                        const std::string& to_path,
                                                        std::span<uint8_t> scratch) const {
  if (!BudgetCounts()) {
    auto copied = CopyFileRange(file.fd.get(), file.path, to, to_path, file.bytes);
    if (!copied) return std::unexpected(copied.error());
    if (*copied) return {};
  }
  return ReadBack(file, scratch, [&](const uint8_t* data, size_t size) {
    return WriteAll(to, data, size, to_path, budget_);
  });
}

std::expected<void, std::string> ShardSpill::ReadBack(const File& file, std::span<uint8_t> scratch,
                                                      const PieceTaker& take) {
  for (int64_t offset = 0; offset < file.bytes;) {
    const size_t piece = static_cast<size_t>(
        std::min<int64_t>(file.bytes - offset, static_cast<int64_t>(scratch.size())));
    if (auto read = PreadAll(file.fd.get(), scratch.data(), piece, file.front + offset, file.path);
        !read) {
      return read;
    }
    if (auto taken = take(scratch.data(), piece); !taken) return taken;
    offset += static_cast<int64_t>(piece);
  }
  return {};
}

std::expected<ShardSpill::Sealed, std::string> ShardSpill::SealInPlace(const std::string& path,
                                                                       std::string_view header,
                                                                       std::span<uint8_t> scratch) {
  File& shard = files_.at(front_);
  const int fd = shard.fd.get();
  // Named path.tmp first, then renamed over path, as every file actex replaces; until
  // then messages call it by that name.
  const std::string tmp_path = AtomicWriteTempPath(path);
  if (std::ssize(header) != shard.front) {
    return std::unexpected(tmp_path + ": its header takes " + std::to_string(header.size()) +
                           " bytes, but " + std::to_string(shard.front) + " were left for it");
  }
  if (::lseek(fd, 0, SEEK_SET) < 0) {
    return std::unexpected(OsError("cannot seek in", tmp_path, errno));
  }
  if (auto written = WriteAll(fd, header.data(), header.size(), tmp_path, budget_); !written) {
    return std::unexpected(written.error());
  }
  if (::lseek(fd, 0, SEEK_END) < 0) {
    return std::unexpected(OsError("cannot seek in", tmp_path, errno));
  }
  Sealed sealed{Crc32Combine(Crc32Update(0, header.data(), header.size()), shard.crc, shard.bytes),
                shard.front + shard.bytes};
  for (size_t i = 0; i < files_.size(); ++i) {
    if (i == front_) continue;
    if (auto appended = AppendFile(files_[i], fd, tmp_path, scratch); !appended) {
      return std::unexpected(appended.error());
    }
    sealed.crc32 = Crc32Combine(sealed.crc32, files_[i].crc, files_[i].bytes);
    sealed.bytes += files_[i].bytes;
  }
  if (auto synced = SyncFile(fd, tmp_path); !synced) return std::unexpected(synced.error());
  // A .tmp left by a process that died at this step is ours to replace (linkat would not).
  if (::unlink(tmp_path.c_str()) != 0 && errno != ENOENT) {
    return std::unexpected(OsError("cannot remove the stale", tmp_path, errno));
  }
  if (::linkat(AT_FDCWD, ProcFdPath(fd).c_str(), AT_FDCWD, tmp_path.c_str(), AT_SYMLINK_FOLLOW) !=
      0) {
    return std::unexpected(OsError("cannot give the shard file the name", tmp_path, errno));
  }
  auto named = [&]() -> std::expected<void, std::string> {
    if (auto closed = shard.fd.Close(tmp_path); !closed) return closed;
    return CommitRename(tmp_path, path);
  }();
  if (!named) {
    ::unlink(tmp_path.c_str());
    return std::unexpected(named.error());
  }
  files_.clear();  // the other tensors' files are freed as they close
  return sealed;
}

}  // namespace actex
