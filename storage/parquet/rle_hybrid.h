#ifndef ACTEX_STORAGE_PARQUET_RLE_HYBRID_H_
#define ACTEX_STORAGE_PARQUET_RLE_HYBRID_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace actex::parquet {

// Decodes `count` values of the RLE / bit-packed hybrid encoding (Parquet's levels
// and dictionary indices) of `bit_width` bits (0..32) from data[0, size) into
// `values` (replacing its contents). Runs that promise more values or bytes than
// there are are errors; values past `count` in the last run are ignored.
std::expected<void, std::string> DecodeRleHybrid(const uint8_t* data, size_t size, int bit_width,
                                                 size_t count, std::vector<uint32_t>* values);

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_RLE_HYBRID_H_
