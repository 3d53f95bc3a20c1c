#include "storage/parquet/plain_values.h"

#include <cstring>

#include "storage/parquet/parquet_metadata.h"

namespace actex::parquet {

std::expected<void, std::string> DecodePlain(int32_t type, const uint8_t* data, size_t size,
                                             size_t count, std::vector<std::string_view>* strings,
                                             std::vector<int64_t>* integers) {
  size_t pos = 0;
  if (type == static_cast<int32_t>(PhysicalType::kByteArray)) {
    strings->resize(count);
    for (size_t i = 0; i < count; ++i) {
      if (size - pos < 4) return std::unexpected("PLAIN values end after " + std::to_string(i));
      uint32_t length;
      std::memcpy(&length, data + pos, 4);  // little-endian, as every host we build for
      pos += 4;
      if (length > size - pos) {
        return std::unexpected("PLAIN value " + std::to_string(i) + " of " +
                               std::to_string(length) + " bytes runs past the end of its page");
      }
      (*strings)[i] = std::string_view(reinterpret_cast<const char*>(data + pos), length);
      pos += length;
    }
    return {};
  }
  const size_t width = type == static_cast<int32_t>(PhysicalType::kInt32) ? 4 : 8;
  if (count > size / width) {
    return std::unexpected("PLAIN page holds fewer than its " + std::to_string(count) + " values");
  }
  integers->resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (width == 4) {
      int32_t value;
      std::memcpy(&value, data + 4 * i, 4);
      (*integers)[i] = value;
    } else {
      std::memcpy(&(*integers)[i], data + 8 * i, 8);
    }
  }
  return {};
}

}  // namespace actex::parquet
