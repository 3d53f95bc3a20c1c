#ifndef ACTEX_STORAGE_SHARD_FILE_SINK_H_
#define ACTEX_STORAGE_SHARD_FILE_SINK_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "storage/file_io.h"

namespace actex {

// The output end of one shard file: bytes go to `path` as they are (or through a
// gzip stream), and the sink keeps the CRC-32 and the count of the bytes that
// actually reach the file, which is what metadata.json lists and what a reader
// checks. Buffers are fixed-size; nothing grows with the shard.
class ShardFileSink {
 public:
  // Creates (truncates) `path`. `budget` may be null; it must outlive the sink.
  static std::expected<std::unique_ptr<ShardFileSink>, std::string> Create(const std::string& path,
                                                                           bool gzip,
                                                                           WriteBudget* budget);

  std::expected<void, std::string> Write(const void* data, size_t size);

  // Appends the first `bytes` bytes of the file `from` (named `from_path` in messages)
  // by copy_file_range(2): the kernel moves them without this process reading them back
  // (a shared-extent clone where the file system can). `crc` is their CRC-32, kept by
  // the caller as it wrote them, so crc32() stays that of every byte in the file.
  // Returns false, having written nothing, when this sink cannot: a gzip stream, a
  // test's write budget that would run out (the buffered Write is what reaches it), or
  // a file system that does not copy between files; the caller then uses Write.
  std::expected<bool, std::string> CopyFileIn(int from, const std::string& from_path, int64_t bytes,
                                              uint32_t crc);

  // Ends the gzip stream (if any), fsyncs and closes the file. Call once.
  std::expected<void, std::string> Finish();

  uint32_t crc32() const { return crc32_; }
  int64_t bytes_written() const { return bytes_written_; }

  ~ShardFileSink();
  ShardFileSink(const ShardFileSink&) = delete;
  ShardFileSink& operator=(const ShardFileSink&) = delete;

 private:
  ShardFileSink() = default;
  std::expected<void, std::string> WriteToFile(const uint8_t* data, size_t size);
  // Runs deflate with `flush` until it has consumed its input (or ended the stream).
  std::expected<void, std::string> Deflate(int flush);

  std::string path_;
  ScopedFd fd_;
  WriteBudget* budget_ = nullptr;
  struct GzipStream;
  std::unique_ptr<GzipStream> gzip_;
  std::vector<uint8_t> compressed_;
  uint32_t crc32_ = 0;
  int64_t bytes_written_ = 0;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_FILE_SINK_H_
