#ifndef ACTEX_STORAGE_SHUFFLED_FILES_H_
#define ACTEX_STORAGE_SHUFFLED_FILES_H_

#include <cstdint>
#include <deque>
#include <expected>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/file_io.h"
#include "storage/shuffle_rows.h"

namespace actex {

// An internal part of the shuffle (storage/activation_shuffle.h): its output files
// while they are written. Each file's .tmp is created at its full size with its
// header; rows are written at their places as buckets come; a file whose rows are
// all written is synced, checksummed and renamed.
class ShuffledFileWriter {
 public:
  struct Finished {
    int64_t index = 0;
    std::string name;
    int64_t rows = 0, bytes = 0;
    uint32_t crc32 = 0;
  };

  // `rows` in all, `rows_per_file` a file; files in `listed` are finished already
  // (a resume) and are not written again.
  ShuffledFileWriter(std::string dir, const RecordLayout& layout, int64_t rows,
                     int64_t rows_per_file, uint64_t seed, int64_t staging_bytes,
                     WriteBudget* budget, std::set<int64_t> listed);

  // Output rows first_row, first_row + 1, ...: the records of `entries` (an 8-byte
  // key, then a record of the layout, each) in the order `order` gives.
  std::expected<void, std::string> Write(const std::vector<uint8_t>& entries,
                                         const std::vector<std::pair<uint64_t, uint32_t>>& order,
                                         int64_t first_row);
  // At most kMaxWrittenOpen + 2 files are open at any time.
  // Syncs the open files; closes, checksums and renames those whose rows all lie
  // below rows_done and returns them, in order.
  std::expected<std::vector<Finished>, std::string> Sync(int64_t rows_done);

 private:
  int64_t FileRows(int64_t file) const {
    return std::min(rows_per_file_, rows_ - file * rows_per_file_);
  }
  std::string TmpPath(int64_t file) const;
  std::expected<int, std::string> Open(int64_t file);
  // Syncs and closes the oldest of written_open_ once it holds more than kMaxWrittenOpen.
  std::expected<void, std::string> CloseOldestWritten();

  std::string dir_;
  const RecordLayout& layout_;
  int64_t rows_, rows_per_file_;
  uint64_t seed_;
  int64_t staging_bytes_;
  WriteBudget* budget_;
  std::set<int64_t> listed_;
  // A file being written. Each tensor's bytes arrive in file order (buckets in row
  // order), so the file's CRC-32 is built as they are written, and the finished file
  // need not be read back, unless the file was begun by an earlier run.
  struct OpenFile {
    ScopedFd fd;
    int64_t data_start = 0;  // the header's size
    bool crc_known = false;
    uint32_t header_crc = 0;
    std::vector<uint32_t> part_crc;     // per tensor, over its bytes written so far
    std::vector<int64_t> part_written;  // per tensor
  };
  std::map<int64_t, OpenFile> open_;  // file index -> its .tmp (fd closed once synced)
  // Files whose rows are all written but whose fd is still open, oldest first. A
  // bucket may span thousands of small files; past kMaxWrittenOpen the oldest is
  // synced and closed at once, so open files stay bounded whatever --rows-per-file
  // and --memory (the process's limit may be 1024), while the common case of a few
  // files a bucket keeps its one sync pass in Sync.
  static constexpr size_t kMaxWrittenOpen = 16;
  std::deque<int64_t> written_open_;
  // Where each output tensor's bytes sit in a record, and their size: sites, then ids.
  std::vector<std::pair<int64_t, int64_t>> tensor_parts_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLED_FILES_H_
