#ifndef ACTEX_STORAGE_PARQUET_PAGE_HEADER_H_
#define ACTEX_STORAGE_PARQUET_PAGE_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>

namespace actex::parquet {

// The parts of a Parquet page header (parquet.thrift's PageHeader) that reading a
// column needs; every other field is skipped. Enum-valued fields hold the raw
// numbers of parquet_metadata.h's enums, so an unknown value can be named.

struct DataPageHeader {
  int32_t num_values = 0;
  int32_t encoding = 0;
  int32_t definition_level_encoding = 0;
  int32_t repetition_level_encoding = 0;
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  int32_t encoding = 0;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  int32_t encoding = 0;
};

struct PageHeader {
  int32_t type = 0;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<DataPageHeader> data_page;
  std::optional<DataPageHeaderV2> data_page_v2;
  std::optional<DictionaryPageHeader> dictionary_page;
  size_t header_bytes = 0;  // bytes the header itself took
};

// Decodes the page header at the start of data[0, size).
std::expected<PageHeader, std::string> DecodePageHeader(const uint8_t* data, size_t size);

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_PAGE_HEADER_H_
