#ifndef ACTEX_STORAGE_GZIP_DECODER_H_
#define ACTEX_STORAGE_GZIP_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>

namespace actex {

// Inflates gzip data given in pieces, into a buffer of the caller's size at a time,
// so a highly compressed input never inflates into more memory than that buffer.
// Concatenated members read as one stream, as gunzip does; anything else after a
// member is an error, never silently dropped. Messages name no file: callers add it.
class GzipDecoder {
 public:
  GzipDecoder();
  ~GzipDecoder();
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;

  // The next compressed bytes, in file order; they must stay valid until NeedsInput().
  void SetInput(const uint8_t* data, size_t size);
  // Every byte given to SetInput has been consumed.
  bool NeedsInput() const;
  // Compressed bytes consumed so far, over every SetInput.
  int64_t bytes_consumed() const;
  // Inflates into output[0, size), returning how many bytes it wrote (0 when it
  // needs input). Errors: "not valid gzip data: ...", "bytes after the end of the
  // gzip stream are not gzip data (...)"; bytes inflated before the damage are
  // returned first, the error by the next call.
  std::expected<size_t, std::string> Inflate(uint8_t* output, size_t size);
  // The input has ended: "empty file, not gzip data" or "gzip stream ends early
  // (truncated file)" unless the last member ended cleanly.
  std::expected<void, std::string> Finish() const;

 private:
  struct Stream;
  std::unique_ptr<Stream> stream_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_GZIP_DECODER_H_
