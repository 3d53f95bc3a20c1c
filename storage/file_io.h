#ifndef ACTEX_STORAGE_FILE_IO_H_
#define ACTEX_STORAGE_FILE_IO_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>

namespace actex {

// Durable-write helpers shared by the safetensors writer, the shard writer, the
// rejects log, the upload ledger and the lease log. Every error names the path and
// carries strerror(errno).

// A cap on the bytes a writer may still write, across all its files. A write that
// would go past it writes what fits and then fails with ENOSPC, exactly as a full
// disk would: tests use it to reach the error paths deterministically. remaining < 0
// means no cap.
struct WriteBudget {
  int64_t remaining = -1;
};

// "<what> <path>: <strerror(error)>".
std::string OsError(const std::string& what, const std::string& path, int error);

// A file descriptor that is closed when it goes out of scope.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd();

  int get() const { return fd_; }
  int Release();
  // Closes now and reports the error close(2) may return (NFS reports late write
  // errors there).
  std::expected<void, std::string> Close(const std::string& path);

 private:
  int fd_ = -1;
};

// Creates (truncating) `path` for writing, mode 0644.
std::expected<ScopedFd, std::string> CreateFileForWrite(const std::string& path);

// Writes all `size` bytes, retrying short writes and EINTR.
std::expected<void, std::string> WriteAll(int fd, const void* data, size_t size,
                                          const std::string& path, WriteBudget* budget);

// Reads exactly `size` bytes at `offset`, retrying short reads and EINTR.
std::expected<void, std::string> PreadAll(int fd, void* data, size_t size, int64_t offset,
                                          const std::string& path);

// Appends the first `bytes` bytes of `from` to `to` (at its file offset) by
// copy_file_range(2): the kernel moves them without this process reading them back (a
// shared-extent clone where the file system can). Returns false, having copied
// nothing, where the file systems cannot copy between the two (the caller then reads
// and writes them itself).
std::expected<bool, std::string> CopyFileRange(int from, const std::string& from_path, int to,
                                               const std::string& to_path, int64_t bytes);

// fsync(2) on `fd`.
std::expected<void, std::string> SyncFile(int fd, const std::string& path);

// Asks the kernel to start writing `fd`'s dirty pages now, without waiting
// (sync_file_range SYNC_FILE_RANGE_WRITE), so the disk works while the caller computes
// and a later SyncFile has little left to wait for. Durability still needs SyncFile.
void StartWriteback(int fd);

// fsync(2) on the directory holding `path`, so a rename into it survives a crash.
std::expected<void, std::string> SyncParentDirectory(const std::string& path);

// Renames the fully written and synced `tmp_path` over `path`, then syncs the
// directory: readers see either the old file or the new one, never a mix.
std::expected<void, std::string> CommitRename(const std::string& tmp_path, const std::string& path);

// The temporary file WriteFileAtomically fills before renaming it over `path`; a
// process killed in between leaves it behind.
std::string AtomicWriteTempPath(const std::string& path);

// Has `write` fill AtomicWriteTempPath(path) (given its fd and name), fsyncs it,
// renames it over `path` and syncs the directory. On error the temporary file is
// removed and `path` is untouched: readers see the old file or the whole new one.
std::expected<void, std::string> WriteFileAtomically(
    const std::string& path,
    const std::function<std::expected<void, std::string>(int fd, const std::string& tmp_path)>&
        write);
// The same for bytes in memory.
std::expected<void, std::string> WriteFileAtomically(const std::string& path,
                                                     const std::string& contents,
                                                     WriteBudget* budget);

// Cuts off a last line without its '\n' (what a crash while appending to a line log
// leaves) and syncs the file, so the next append starts a line of its own.
std::expected<void, std::string> DropTornLastLine(int fd, const std::string& path);

// mkdir -p.
std::expected<void, std::string> MakeDirectories(const std::string& path);

}  // namespace actex

#endif  // ACTEX_STORAGE_FILE_IO_H_
