#ifndef ACTEX_STORAGE_CRC32_H_
#define ACTEX_STORAGE_CRC32_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace actex {

// zlib's CRC-32 (the one in gzip, PNG and Python's zlib.crc32): the checksum
// metadata.json and uploads.jsonl list for a file's bytes as stored. Computed by
// ISA-L (Debian's libisal), combined by zlib.

// Extends `crc` (0 to start) over `size` bytes of any length.
uint32_t Crc32Update(uint32_t crc, const void* data, size_t size);

// The CRC-32 of A followed by B, from A's CRC, B's CRC and B's length (zlib's
// crc32_combine): a file's CRC from its parts' without reading them again.
uint32_t Crc32Combine(uint32_t crc_a, uint32_t crc_b, int64_t length_b);

// 8 lowercase hex digits, as metadata.json writes a crc32.
std::string FormatCrc32(uint32_t crc);

// The CRC-32 of `bytes`, formatted so.
std::string Crc32Hex(std::string_view bytes);

}  // namespace actex

#endif  // ACTEX_STORAGE_CRC32_H_
