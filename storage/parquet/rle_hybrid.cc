#include "storage/parquet/rle_hybrid.h"

namespace actex::parquet {
namespace {

// ULEB128 as Parquet writes run headers; false when it runs off the end or past 32 bits.
bool ReadVarint(const uint8_t* data, size_t size, size_t* pos, uint32_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (*pos >= size) return false;
    const uint8_t byte = data[(*pos)++];
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      if (result > UINT32_MAX) return false;
      *value = static_cast<uint32_t>(result);
      return true;
    }
  }
  return false;
}

}  // namespace

std::expected<void, std::string> DecodeRleHybrid(const uint8_t* data, size_t size, int bit_width,
                                                 size_t count, std::vector<uint32_t>* values) {
  if (bit_width < 0 || bit_width > 32) {
    return std::unexpected("RLE bit width " + std::to_string(bit_width) + " is out of range");
  }
  values->clear();
  values->reserve(count);
  const uint64_t mask = bit_width == 32 ? 0xFFFFFFFFull : (1ull << bit_width) - 1;
  const size_t value_bytes = (bit_width + 7) / 8;
  size_t pos = 0;
  while (values->size() < count) {
    uint32_t header = 0;
    if (!ReadVarint(data, size, &pos, &header)) {
      return std::unexpected("RLE data ends after " + std::to_string(values->size()) + " of " +
                             std::to_string(count) + " values");
    }
    const size_t wanted = count - values->size();
    if (header & 1) {  // bit-packed: (header >> 1) groups of 8 values
      const uint64_t in_run = static_cast<uint64_t>(header >> 1) * 8;
      const size_t take = in_run < wanted ? static_cast<size_t>(in_run) : wanted;
      const uint64_t run_bytes = static_cast<uint64_t>(header >> 1) * bit_width;
      const uint64_t needed_bytes = (static_cast<uint64_t>(take) * bit_width + 7) / 8;
      if (needed_bytes > size - pos) {
        return std::unexpected(std::string("bit-packed run runs past the end of its data"));
      }
      uint64_t bit = static_cast<uint64_t>(pos) * 8;
      for (size_t i = 0; i < take; ++i, bit += bit_width) {
        uint64_t word = 0;
        const size_t first = bit / 8;
        const size_t last = (bit + bit_width + 7) / 8;  // exclusive
        for (size_t b = first; b < last && b < size; ++b) {
          word |= static_cast<uint64_t>(data[b]) << (8 * (b - first));
        }
        values->push_back(static_cast<uint32_t>((word >> (bit % 8)) & mask));
      }
      pos += run_bytes < size - pos ? static_cast<size_t>(run_bytes) : size - pos;
    } else {  // RLE: one value repeated (header >> 1) times
      const size_t run = header >> 1;
      if (value_bytes > size - pos) {
        return std::unexpected(std::string("RLE run runs past the end of its data"));
      }
      uint32_t value = 0;
      for (size_t b = 0; b < value_bytes; ++b)
        value |= static_cast<uint32_t>(data[pos + b]) << (8 * b);
      pos += value_bytes;
      if (value > mask) return std::unexpected(std::string("RLE run value exceeds its bit width"));
      if (run == 0) return std::unexpected(std::string("RLE run of length 0"));
      values->insert(values->end(), run < wanted ? run : wanted, value);
    }
  }
  return {};
}

}  // namespace actex::parquet
