#ifndef ACTEX_STORAGE_LINE_READER_H_
#define ACTEX_STORAGE_LINE_READER_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace actex {

class GzipDecoder;

// Reads one file line by line, plain or gzip (told apart by the gzip magic bytes
// 1f 8b, not by the file name; concatenated gzip members are read as one stream,
// and bytes after the last member that are not another member are an error).
// Memory is one read chunk plus the longest line kept, never the file.
class LineReader {
 public:
  struct Line {
    std::string_view text;  // without the '\n' and a '\r' before it; valid until Next()
    int64_t bytes = 0;      // length of the line as it was in the file, without '\n'
    bool too_long = false;  // longer than max_line_bytes: skipped, `text` is empty
  };

  static std::expected<std::unique_ptr<LineReader>, std::string> Open(const std::string& path,
                                                                      int64_t max_line_bytes);

  // The next line, std::nullopt at the end of the file. The last line counts even
  // without a final '\n'; nothing after a final '\n' is a line. A gzip stream that
  // is truncated or corrupt or followed by other bytes, or a read error, is an error
  // naming the file and the line it was reached in.
  std::expected<std::optional<Line>, std::string> Next();

  // Lines returned so far (the 1-based number of the last one).
  int64_t lines() const { return lines_; }
  // Bytes of the file behind the lines returned, for progress against its size:
  // exact for a plain file; for gzip the compressed bytes behind the inflated chunk
  // being read, in proportion to how far into it the lines are (a compressed chunk
  // read ahead counts only as it is inflated).
  int64_t file_bytes_consumed() const;

  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

 private:
  LineReader() = default;
  // Reads the next chunk; false at end of file.
  std::expected<bool, std::string> Refill();
  // Adds `piece` to the current line, or counts it if the line is already too long.
  void Append(std::string_view piece);

  std::string path_;
  int64_t max_line_bytes_ = 0;
  int fd_ = -1;
  std::unique_ptr<GzipDecoder> decoder_;  // null for a plain file
  std::vector<uint8_t> compressed_;       // gzip bytes read, not yet inflated
  std::vector<char> chunk_;
  size_t chunk_begin_ = 0, chunk_end_ = 0;
  std::string line_;
  int64_t line_bytes_ = 0;
  bool line_started_ = false;
  int64_t lines_ = 0;
  int64_t file_bytes_read_ = 0;
  // gzip: the compressed bytes consumed before and after inflating the current chunk.
  int64_t chunk_consumed_begin_ = 0, chunk_consumed_end_ = 0;
  bool at_end_ = false;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_LINE_READER_H_
