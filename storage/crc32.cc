#include "storage/crc32.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace actex {

uint32_t Crc32Update(uint32_t crc, const void* data, size_t size) {
  const auto* bytes = static_cast<const Bytef*>(data);
  // zlib takes uInt lengths: feed larger inputs in pieces that fit.
  for (size_t done = 0; done < size;) {
    const size_t piece = std::min<size_t>(size - done, std::numeric_limits<uInt>::max());
    crc = static_cast<uint32_t>(::crc32(crc, bytes + done, static_cast<uInt>(piece)));
    done += piece;
  }
  return crc;
}

uint32_t Crc32Combine(uint32_t crc_a, uint32_t crc_b, int64_t length_b) {
  return static_cast<uint32_t>(::crc32_combine(crc_a, crc_b, static_cast<z_off_t>(length_b)));
}

std::string FormatCrc32(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", crc);
  return text;
}

std::string Crc32Hex(std::string_view bytes) {
  return FormatCrc32(Crc32Update(0, bytes.data(), bytes.size()));
}

}  // namespace actex
