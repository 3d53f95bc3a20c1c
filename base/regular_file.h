#ifndef ACTEX_BASE_REGULAR_FILE_H_
#define ACTEX_BASE_REGULAR_FILE_H_

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <string>

namespace actex {

// The one place that decides whether a path actex reads (a model file, a corpus file,
// metadata.json) is a file at all. A FIFO would block an open(2) or a read(2) forever
// and /dev/zero would never end, so everything that is not a regular file after
// symlinks are followed is refused before a byte is read, naming what it is.

// "a directory", "a FIFO (named pipe)", "a character device", ... for a stat(2)
// mode that is not a regular file; "a regular file" for one that is.
std::string DescribeFileType(mode_t mode);

// Why `path` could not be opened or stat'ed, given the errno: a symbolic link that
// points nowhere or loops names where it points ("PATH is a symbolic link to
// TARGET, which does not exist"); anything else is "cannot open PATH: <strerror>".
std::string DescribeOpenError(const std::string& path, int error);

// A regular file opened read-only; the descriptor is closed with the object.
class RegularFile {
 public:
  RegularFile(int fd, int64_t bytes) : fd_(fd), bytes_(bytes) {}
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  int64_t bytes() const { return bytes_; }  // its size when it was opened
  // Hands the descriptor to the caller, who closes it.
  int Release();

 private:
  int fd_ = -1;
  int64_t bytes_ = 0;
};

// Opens `path` for reading when it is a regular file (symlinks followed), without
// blocking on a FIFO. Otherwise: "PATH is a FIFO (named pipe), not a regular file",
// or DescribeOpenError's wording.
std::expected<RegularFile, std::string> OpenRegularFile(const std::string& path);

// Whether something is named `path`: false when nothing is, true when it is there
// and can be followed to what it names (of any type: the reader refuses what it
// cannot read), an error naming the target when it is a symbolic link that dangles
// or loops ("model.safetensors is a symbolic link to /gone, which does not exist").
std::expected<bool, std::string> PathEntryExists(const std::string& path);

}  // namespace actex

#endif  // ACTEX_BASE_REGULAR_FILE_H_
