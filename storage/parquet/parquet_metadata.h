#ifndef ACTEX_STORAGE_PARQUET_PARQUET_METADATA_H_
#define ACTEX_STORAGE_PARQUET_PARQUET_METADATA_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

namespace actex::parquet {

// The parts of the Parquet footer (parquet.thrift, Thrift compact protocol) that
// reading one column needs; every other field is skipped. Page headers:
// page_header.h.

enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};
enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };
enum class Codec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,
  kZstd = 6,
  kLz4Raw = 7,
};
enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};
enum class PageType : int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

std::string PhysicalTypeName(int32_t type);
std::string CodecName(int32_t codec);
std::string EncodingName(int32_t encoding);

struct SchemaElement {
  std::string name;
  std::optional<int32_t> type;  // absent for groups
  Repetition repetition = Repetition::kRequired;
  int32_t num_children = 0;
};

struct ColumnChunkMeta {
  int32_t type = 0;
  int32_t codec = 0;
  int64_t num_values = 0;
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = 0;
  std::optional<int64_t> dictionary_page_offset;
  std::vector<std::string> path;
};

struct RowGroupMeta {
  int64_t num_rows = 0;
  std::vector<ColumnChunkMeta> columns;  // one per leaf column, in schema order
};

struct FileMetaData {
  int64_t num_rows = 0;
  std::vector<SchemaElement> schema;  // depth first, the root first
  std::vector<RowGroupMeta> row_groups;
};

// Decodes a FileMetaData from the footer bytes. Errors say what is wrong
// ("footer is not valid Parquet metadata: ...").
std::expected<FileMetaData, std::string> DecodeFileMetaData(const uint8_t* data, size_t size);

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_PARQUET_METADATA_H_
