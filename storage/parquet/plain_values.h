#ifndef ACTEX_STORAGE_PARQUET_PLAIN_VALUES_H_
#define ACTEX_STORAGE_PARQUET_PLAIN_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace actex::parquet {

// Decodes `count` PLAIN values of physical type `type` from data[0, size):
// BYTE_ARRAY into `strings` as views into `data` (each a 4-byte length, then its
// bytes), INT32 and INT64 widened into `integers`. Values that run past `size` are
// errors naming the value.
std::expected<void, std::string> DecodePlain(int32_t type, const uint8_t* data, size_t size,
                                             size_t count, std::vector<std::string_view>* strings,
                                             std::vector<int64_t>* integers);

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_PLAIN_VALUES_H_
