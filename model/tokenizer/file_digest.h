#ifndef ACTEX_MODEL_TOKENIZER_FILE_DIGEST_H_
#define ACTEX_MODEL_TOKENIZER_FILE_DIGEST_H_

#include <expected>
#include <string>
#include <string_view>

namespace actex {

// Reads the whole regular file at `path` (base/whole_file.h: a FIFO, a directory or a
// dangling symlink is refused saying so). Errors name the path and the cause.
std::expected<std::string, std::string> ReadTokenizerFile(const std::string& path);

// Lower-case hex SHA-256 of `bytes` (64 characters), via libsodium.
std::string Sha256HexOfBytes(std::string_view bytes);

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_FILE_DIGEST_H_
