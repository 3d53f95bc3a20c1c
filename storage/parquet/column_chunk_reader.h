#ifndef ACTEX_STORAGE_PARQUET_COLUMN_CHUNK_READER_H_
#define ACTEX_STORAGE_PARQUET_COLUMN_CHUNK_READER_H_

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "storage/parquet/page_header.h"
#include "storage/parquet/parquet_metadata.h"

namespace actex::parquet {

// Where a leaf column sits in the schema: what its levels can reach.
struct LeafColumn {
  int index = 0;     // among the leaves, = its position in a row group's columns
  std::string path;  // dotted, e.g. "input_ids.list.element"
  int32_t type = 0;  // PhysicalType
  int max_definition = 0;
  int max_repetition = 0;
};

// Why a page could not be read, and how much of the chunk that costs.
struct PageError {
  enum class Kind {
    kPageDamaged,   // the page's header is intact: its `entries` are lost, reading goes on
    kChunkDamaged,  // no page boundary can be trusted: the rest of the chunk is lost
    kUnsupported,   // an encoding actex does not read (not damage: the file is refused)
  };
  Kind kind = Kind::kChunkDamaged;
  std::string message;  // "page 3 at chunk byte 8123: ..."
  int64_t entries = 0;  // kPageDamaged: the level entries (for a flat column, rows) lost
};

// One column chunk's pages, decoded a page at a time from the chunk's bytes (the
// only copy of the chunk in memory): dictionary pages, data pages v1 and v2,
// PLAIN and dictionary (PLAIN_DICTIONARY / RLE_DICTIONARY) values, falling back
// from dictionary to PLAIN pages within the chunk. Values are BYTE_ARRAY (as
// views) or INT32 / INT64 (widened to int64).
class ColumnChunkReader {
 public:
  ColumnChunkReader(std::vector<uint8_t> chunk, const ColumnChunkMeta& meta, LeafColumn leaf);

  // Decodes the next data page: false once the chunk's values are all read.
  // Errors say what is wrong with which page ("page 3 at chunk byte 8123: ...").
  // After kPageDamaged the damaged page has been passed over by its header's
  // compressed size (entries() is 0) and NextPage may be called again; a damaged
  // dictionary page costs no entries itself but fails the pages that use it.
  std::expected<bool, PageError> NextPage();

  // The page's levels, one per level entry (empty when the column has none of
  // that kind), and its non-null values in order.
  const std::vector<uint32_t>& definition_levels() const { return definition_; }
  const std::vector<uint32_t>& repetition_levels() const { return repetition_; }
  size_t entries() const { return entries_; }
  const std::vector<std::string_view>& strings() const { return strings_; }
  const std::vector<int64_t>& integers() const { return integers_; }

 private:
  // The entries a data page's header gives, checked against what the chunk has left.
  std::expected<int64_t, std::string> DataPageEntries(const PageHeader& header) const;
  // An error for an encoding not read here; marks it unsupported (not damage) when
  // parquet.thrift names it.
  std::unexpected<std::string> Unsupported(int32_t encoding, const std::string& what);
  std::expected<void, std::string> ReadDictionary(const PageHeader& header, const uint8_t* data);
  std::expected<void, std::string> ReadDataPage(const PageHeader& header, const uint8_t* data);
  std::expected<void, std::string> ReadLevels(const uint8_t* data, size_t size, int max_level,
                                              std::vector<uint32_t>* levels);
  std::expected<void, std::string> ReadValues(int32_t encoding, const uint8_t* data, size_t size,
                                              size_t count);
  // Decompresses `size` bytes at `data` into page_ (of `uncompressed` bytes).
  std::expected<const uint8_t*, std::string> Inflate(const uint8_t* data, size_t size,
                                                     size_t uncompressed);

  std::vector<uint8_t> chunk_;
  ColumnChunkMeta meta_;
  LeafColumn leaf_;
  size_t position_ = 0;      // in chunk_
  int64_t values_read_ = 0;  // level entries over all data pages
  int pages_ = 0;
  std::vector<uint8_t> page_;  // the decompressed page
  std::vector<uint8_t> dictionary_bytes_;
  std::vector<std::string_view> dictionary_strings_;  // views into dictionary_bytes_
  std::vector<int64_t> dictionary_integers_;
  bool has_dictionary_ = false;
  std::string dictionary_error_;  // why the dictionary page could not be read
  bool unsupported_ = false;      // the page's error is an unsupported encoding
  size_t entries_ = 0;
  std::vector<uint32_t> definition_, repetition_, indices_;
  std::vector<std::string_view> strings_;
  std::vector<int64_t> integers_;
};

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_COLUMN_CHUNK_READER_H_
