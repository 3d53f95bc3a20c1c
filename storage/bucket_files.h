#ifndef ACTEX_STORAGE_BUCKET_FILES_H_
#define ACTEX_STORAGE_BUCKET_FILES_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <list>
#include <set>
#include <string>
#include <vector>

#include "storage/file_io.h"

namespace actex {

// An internal part of the shuffle (storage/activation_shuffle.h): the scatter's bucket
// files, appended to in turns. A shuffle may have thousands of buckets (--memory small
// against a large output); at most MaxOpen() of them are open at once, the least
// recently appended closed first, so the process stays within its open-file limit
// (often 1024) whatever the parameters. With fewer buckets than that, every file
// stays open, as if there were no bound.
class BucketFiles {
 public:
  // Creates every bucket file path(b) that is missing and cuts each to bytes[b] (a
  // killed scatter may have written past what its state records); opens none.
  static std::expected<BucketFiles, std::string> Prepare(std::function<std::string(int)> path,
                                                         const std::vector<int64_t>& bytes);

  // Appends `size` bytes to bucket `b` and starts their writeback.
  std::expected<void, std::string> Append(int b, const uint8_t* data, size_t size,
                                          WriteBudget* budget);
  // fsyncs every bucket appended to since the last call (closed ones are opened for it).
  std::expected<void, std::string> SyncWritten();

  // The most bucket files open at once: 256, or a quarter of RLIMIT_NOFILE's soft
  // limit when that is lower (at least 4).
  static size_t MaxOpen();

 private:
  BucketFiles(std::function<std::string(int)> path, size_t buckets);
  std::expected<int, std::string> Fd(int b);

  std::function<std::string(int)> path_;
  size_t max_open_;
  std::vector<ScopedFd> files_;                  // per bucket; -1 when closed
  std::list<int> recent_;                        // open buckets, most recent first
  std::vector<std::list<int>::iterator> where_;  // each open bucket's place in recent_
  std::set<int> unsynced_;                       // appended to since the last sync
};

}  // namespace actex

#endif  // ACTEX_STORAGE_BUCKET_FILES_H_
