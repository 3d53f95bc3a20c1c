#ifndef ACTEX_BASE_WHOLE_FILE_H_
#define ACTEX_BASE_WHOLE_FILE_H_

#include <cstdint>
#include <expected>
#include <string>

namespace actex {

// The most ReadWholeFile reads by default: configs, tokenizers and metadata.json are
// far smaller, and a larger file is refused rather than held in memory.
inline constexpr int64_t kWholeFileMaxBytes = int64_t{1} << 30;

// The bytes of a small regular file (a config, metadata.json, a tokenizer), symlinks
// followed. Refused, naming the path, without reading a byte: something that is not
// a regular file ("PATH is a FIFO (named pipe), not a regular file", a directory, a
// device), a dangling or looping symlink (saying where it points), and a file over
// `max_bytes`. Otherwise "cannot open PATH: <reason>" or "cannot read PATH: <reason>".
std::expected<std::string, std::string> ReadWholeFile(const std::string& path,
                                                      int64_t max_bytes = kWholeFileMaxBytes);

}  // namespace actex

#endif  // ACTEX_BASE_WHOLE_FILE_H_
