#include "storage/shard_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "storage/crc32.h"
#include "storage/host_folder_files.h"

namespace actex {

std::expected<ShardSpill, std::string> ShardSpill::Create(const std::string& dir, int number,
                                                          size_t tensors, WriteBudget* budget) {
  ShardSpill spill;
  spill.budget_ = budget;
  for (size_t i = 0; i < tensors; ++i) {
    File file;
    file.path = dir + "/" + SpillFileName(number, i);
    const int fd = ::open(file.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return std::unexpected(OsError("cannot create spill file", file.path, errno));
    file.fd = ScopedFd(fd);
    if (::unlink(file.path.c_str()) != 0) {
      return std::unexpected(OsError("cannot unlink spill file", file.path, errno));
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
  bytes_ += static_cast<int64_t>(bytes);
  return {};
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
    if (::ftruncate(file.fd.get(), mark.at(i)) != 0 ||
        ::lseek(file.fd.get(), mark[i], SEEK_SET) < 0) {
      return std::unexpected(OsError("cannot cut back spill file", file.path, errno));
    }
    bytes_ -= file.bytes - mark[i];
    file.bytes = mark[i];
    // The CRC of what is left, read back: a cut is rare (a run ending inside a chunk).
    std::vector<uint8_t> piece(std::min<int64_t>(file.bytes, int64_t{1} << 20));
    file.crc = 0;
    for (int64_t offset = 0; offset < file.bytes;) {
      const size_t size =
          static_cast<size_t>(std::min<int64_t>(file.bytes - offset, std::ssize(piece)));
      if (auto read = PreadAll(file.fd.get(), piece.data(), size, offset, file.path); !read) {
        return read;
      }
      file.crc = Crc32Update(file.crc, piece.data(), size);
      offset += static_cast<int64_t>(size);
    }
  }
  return {};
}

std::expected<void, std::string> ShardSpill::CopyTo(ShardFileSink& sink,
                                                    std::span<uint8_t> scratch) const {
  for (const File& file : files_) {
    auto copied = sink.CopyFileIn(file.fd.get(), file.path, file.bytes, file.crc);
    if (!copied) return std::unexpected(copied.error());
    if (*copied) continue;
    for (int64_t offset = 0; offset < file.bytes;) {
      const size_t piece = static_cast<size_t>(
          std::min<int64_t>(file.bytes - offset, static_cast<int64_t>(scratch.size())));
      if (auto read = PreadAll(file.fd.get(), scratch.data(), piece, offset, file.path); !read) {
        return read;
      }
      if (auto written = sink.Write(scratch.data(), piece); !written) return written;
      offset += static_cast<int64_t>(piece);
    }
  }
  return {};
}

}  // namespace actex
