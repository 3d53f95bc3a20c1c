#ifndef ACTEX_STORAGE_OUTPUT_LOCK_H_
#define ACTEX_STORAGE_OUTPUT_LOCK_H_

#include <expected>
#include <string>

#include "storage/file_io.h"

namespace actex {

// An advisory lock on one host folder of an output, held for as long as the object
// lives: two runs writing the same host folder at once would each take the other's
// unlisted and temporary files for leftovers of a stopped run and remove them.
//
// The lock is flock(2) on `OUT/.FOLDER.lock` (beside the host folder, so --overwrite
// can remove the folder without dropping the lock, and verify never sees it). The
// kernel releases it when the holder dies, however it dies, so a file left behind
// by a killed run never blocks; the file's text (the holder's pid and host name)
// only says who holds it.
class OutputLock {
 public:
  enum class Refusal { kHeld, kSystem };
  struct Error {
    Refusal kind;
    std::string message;  // names the lock file and, when held, its holder
  };

  // Creates `out_dir` if needed and takes the lock of host folder `folder` (a name
  // like "host_00"). kHeld when another process holds it: the message names that
  // process (pid, host) and says what to do; kSystem when the lock file cannot be
  // created or locked.
  static std::expected<OutputLock, Error> Acquire(const std::string& out_dir,
                                                  const std::string& folder);

  // The lock file's path for `folder` of `out_dir`.
  static std::string PathOf(const std::string& out_dir, const std::string& folder);

  OutputLock(OutputLock&&) = default;
  OutputLock& operator=(OutputLock&&) = default;

  const std::string& path() const { return path_; }

 private:
  OutputLock(std::string path, ScopedFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}

  std::string path_;
  ScopedFd fd_;  // closing it releases the lock
};

}  // namespace actex

#endif  // ACTEX_STORAGE_OUTPUT_LOCK_H_
