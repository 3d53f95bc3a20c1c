#ifndef ACTEX_STORAGE_SHARD_SPILL_H_
#define ACTEX_STORAGE_SHARD_SPILL_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

#include "storage/file_io.h"
#include "storage/shard_file_sink.h"

namespace actex {

// The tensors of the shard being written, each in a file of its own that was
// unlinked as soon as it was created: rows reach the disk as documents come (a
// shard may be larger than memory), the files take no name in the directory, and
// the kernel reclaims them even if the process dies. A shard file is its header
// followed by these files, in order (safetensors stores tensors one after another).
class ShardSpill {
 public:
  // Creates `tensors` files dir/.shard_<number>.spill.<i> and unlinks them.
  // `budget` may be null; it must outlive the spill.
  static std::expected<ShardSpill, std::string> Create(const std::string& dir, int number,
                                                       size_t tensors, WriteBudget* budget);

  // Appends `bytes` bytes to tensor `tensor`'s file.
  std::expected<void, std::string> Append(size_t tensor, const void* data, size_t bytes);

  // Bytes appended so far over all tensors.
  int64_t bytes() const { return bytes_; }

  // How long each tensor's file is now, to cut the spill back to later.
  std::vector<int64_t> Mark() const;
  // Drops every byte appended after `mark` was taken.
  std::expected<void, std::string> CutBackTo(const std::vector<int64_t>& mark);

  // Writes every tensor's bytes, tensor by tensor, to `sink`: copied by the kernel
  // where the sink can (ShardFileSink::CopyFileIn, with the CRC kept as they were
  // appended), otherwise read back through `scratch`.
  std::expected<void, std::string> CopyTo(ShardFileSink& sink, std::span<uint8_t> scratch) const;

 private:
  struct File {
    std::string path;  // for messages: the name it had before it was unlinked
    ScopedFd fd;
    int64_t bytes = 0;
    uint32_t crc = 0;  // CRC-32 of the file's bytes, kept as they are appended
  };
  std::vector<File> files_;
  int64_t bytes_ = 0;
  WriteBudget* budget_ = nullptr;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_SPILL_H_
