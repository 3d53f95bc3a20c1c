#include "model/tokenizer/file_digest.h"

#include <sodium.h>

#include "base/whole_file.h"

namespace actex {

std::expected<std::string, std::string> ReadTokenizerFile(const std::string& path) {
  return ReadWholeFile(path);
}

std::string Sha256HexOfBytes(std::string_view bytes) {
  // sodium_init is idempotent and thread-safe; it only selects the fastest implementations,
  // and SHA-256 is correct without it, so a failed init needs no handling.
  [[maybe_unused]] const int initialized = sodium_init();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  char hex[crypto_hash_sha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
  return std::string(hex, crypto_hash_sha256_BYTES * 2);
}

}  // namespace actex
