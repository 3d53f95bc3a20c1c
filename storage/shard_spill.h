#ifndef ACTEX_STORAGE_SHARD_SPILL_H_
#define ACTEX_STORAGE_SHARD_SPILL_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/file_io.h"
#include "storage/shard_file_sink.h"

namespace actex {

// The tensors of the shard being written, each in a file of its own that has no name
// in the directory: rows reach the disk as documents come (a shard may be larger than
// memory), and the kernel reclaims the files even if the process dies. A shard file
// is its header followed by these files, in order (safetensors stores tensors one
// after another).
//
// In place (CreateInPlace), one tensor's file is the shard file to be: its bytes start
// after room left for the header, and SealInPlace writes the header there, appends the
// other tensors and names the file, so that tensor (the shard's first: one site's
// activations, nearly all of a one-site shard) is written once, not spilled and then
// copied. Otherwise CopyTo writes the header's sink the whole spill.
class ShardSpill {
 public:
  // Creates `tensors` files dir/.shard_<number>.spill.<i> and unlinks them.
  // `budget` may be null; it must outlive the spill.
  static std::expected<ShardSpill, std::string> Create(const std::string& dir, int number,
                                                       size_t tensors, WriteBudget* budget);

  // As Create, but tensor `front` lives in the shard file to be, after `header_bytes`
  // left for its header: a file made by O_TMPFILE in `dir`, nameless until SealInPlace.
  // Where the file system has no O_TMPFILE, or /proc/self/fd (which names it) is not
  // mounted, the spill is Create's: in_place() is false.
  static std::expected<ShardSpill, std::string> CreateInPlace(const std::string& dir, int number,
                                                              size_t tensors, size_t front,
                                                              int64_t header_bytes,
                                                              WriteBudget* budget);
  bool in_place() const { return in_place_; }

  // Appends `bytes` bytes to tensor `tensor`'s file. Appends to different tensors may
  // run on different threads at once where no budget counts (a budget is one count).
  std::expected<void, std::string> Append(size_t tensor, const void* data, size_t bytes);

  // Bytes appended so far over all tensors.
  int64_t bytes() const;

  // How long each tensor's file is now, to cut the spill back to later.
  std::vector<int64_t> Mark() const;
  // Drops every byte appended after `mark` was taken.
  std::expected<void, std::string> CutBackTo(const std::vector<int64_t>& mark);

  // Not in_place(): writes every tensor's bytes, tensor by tensor, to `sink`: copied by
  // the kernel where the sink can (ShardFileSink::CopyFileIn, with the CRC kept as they
  // were appended), otherwise read back through `scratch`.
  std::expected<void, std::string> CopyTo(ShardFileSink& sink, std::span<uint8_t> scratch) const;

  // in_place(): writes `header` (header_bytes long) before the front tensor, appends
  // the other tensors in order (copy_file_range, or read back through `scratch` where
  // that cannot copy or a test's budget counts the bytes), fsyncs the file and names it
  // `path` (linked as path + ".tmp", renamed over `path`, the directory synced). The
  // spill is spent. Returns the file's CRC-32 and size.
  struct Sealed {
    uint32_t crc32 = 0;
    int64_t bytes = 0;
  };
  std::expected<Sealed, std::string> SealInPlace(const std::string& path, std::string_view header,
                                                 std::span<uint8_t> scratch);

 private:
  struct File {
    std::string path;  // for messages: the name it had (or would have) in the directory
    ScopedFd fd;
    int64_t front = 0;  // bytes before the tensor's own: the header's room, in place
    int64_t bytes = 0;  // the tensor's own
    uint32_t crc = 0;   // CRC-32 of the tensor's bytes, kept as they are appended
  };
  // Reads `file`'s tensor bytes back through `scratch`, handing each piece to `take` in
  // order: for a copy the kernel cannot make, and a cut-back file's CRC.
  using PieceTaker = std::function<std::expected<void, std::string>(const uint8_t*, size_t)>;
  static std::expected<void, std::string> ReadBack(const File& file, std::span<uint8_t> scratch,
                                                   const PieceTaker& take);
  // Appends `file`'s tensor bytes to `to` (named `to_path`), by the kernel where it can.
  std::expected<void, std::string> AppendFile(const File& file, int to, const std::string& to_path,
                                              std::span<uint8_t> scratch) const;
  bool BudgetCounts() const { return budget_ != nullptr && budget_->remaining >= 0; }

  std::vector<File> files_;
  WriteBudget* budget_ = nullptr;
  bool in_place_ = false;
  size_t front_ = 0;  // in place: the tensor in the shard file to be
  int64_t appended_since_writeback_ = 0;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_SPILL_H_
