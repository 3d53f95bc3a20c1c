#include "storage/parquet/column_chunk_reader.h"

#include <bit>
#include <cstring>

#include "storage/parquet/page_codec.h"
#include "storage/parquet/plain_values.h"
#include "storage/parquet/rle_hybrid.h"

namespace actex::parquet {
namespace {

// Real pages hold at most about a million values; the limit keeps a corrupt header
// from making the levels of one page take gigabytes.
constexpr int64_t kMaxPageValues = int64_t{1} << 24;

uint32_t ReadLittleEndian32(const uint8_t* data) {
  uint32_t value;
  std::memcpy(&value, data, 4);
  return value;
}

int BitWidth(int max_level) { return std::bit_width(static_cast<uint32_t>(max_level)); }

}  // namespace

ColumnChunkReader::ColumnChunkReader(std::vector<uint8_t> chunk, const ColumnChunkMeta& meta,
                                     LeafColumn leaf)
    : chunk_(std::move(chunk)), meta_(meta), leaf_(std::move(leaf)) {}

std::unexpected<std::string> ColumnChunkReader::Unsupported(int32_t encoding,
                                                            const std::string& what) {
  // An encoding parquet.thrift names is one actex does not read; any other number
  // is a damaged header.
  unsupported_ = encoding >= static_cast<int32_t>(Encoding::kPlain) &&
                 encoding <= static_cast<int32_t>(Encoding::kByteStreamSplit);
  return std::unexpected(what + EncodingName(encoding));
}

std::expected<bool, PageError> ColumnChunkReader::NextPage() {
  entries_ = 0;
  while (values_read_ < meta_.num_values) {
    unsupported_ = false;
    const size_t start = position_;
    const int page = pages_ + 1;
    auto fail = [&](PageError::Kind kind, const std::string& what, int64_t entries = 0) {
      return std::unexpected(PageError{
          kind,
          "page " + std::to_string(page) + " at chunk byte " + std::to_string(start) + ": " + what,
          entries});
    };
    if (position_ >= chunk_.size()) {
      return std::unexpected(PageError{PageError::Kind::kChunkDamaged,
                                       "column chunk ends after " + std::to_string(values_read_) +
                                           " of its " + std::to_string(meta_.num_values) +
                                           " values"});
    }
    auto header = DecodePageHeader(chunk_.data() + position_, chunk_.size() - position_);
    if (!header) return fail(PageError::Kind::kChunkDamaged, "header: " + header.error());
    if (header->compressed_page_size < 0 || header->uncompressed_page_size < 0 ||
        static_cast<size_t>(header->compressed_page_size) >
            chunk_.size() - position_ - header->header_bytes) {
      return fail(PageError::Kind::kChunkDamaged,
                  "page of " + std::to_string(header->compressed_page_size) +
                      " bytes runs past the end of the column chunk");
    }
    position_ += header->header_bytes;
    const uint8_t* data = chunk_.data() + position_;
    // From here on the next page's place is known, whatever this page holds.
    position_ += header->compressed_page_size;
    ++pages_;
    switch (static_cast<PageType>(header->type)) {
      case PageType::kDictionaryPage: {
        auto read = ReadDictionary(*header, data);
        if (read) continue;
        if (unsupported_) return fail(PageError::Kind::kUnsupported, read.error());
        // The pages that use the dictionary fail one by one, saying why.
        has_dictionary_ = false;
        dictionary_error_ = "page " + std::to_string(pages_) + " (its dictionary): " + read.error();
        continue;
      }
      case PageType::kDataPage:
      case PageType::kDataPageV2: {
        auto entries = DataPageEntries(*header);
        if (!entries) return fail(PageError::Kind::kChunkDamaged, entries.error());
        auto read = ReadDataPage(*header, data);
        if (read) return true;
        entries_ = 0;
        if (unsupported_) return fail(PageError::Kind::kUnsupported, read.error());
        return fail(PageError::Kind::kPageDamaged, read.error(), *entries);
      }
      default:  // index pages and unknown kinds carry no values
        continue;
    }
  }
  return false;
}

std::expected<int64_t, std::string> ColumnChunkReader::DataPageEntries(
    const PageHeader& header) const {
  const bool v2 = header.type == static_cast<int32_t>(PageType::kDataPageV2);
  if (v2 ? !header.data_page_v2 : !header.data_page) {
    return std::unexpected(std::string("data page without its header"));
  }
  const int32_t num_values = v2 ? header.data_page_v2->num_values : header.data_page->num_values;
  if (num_values < 0 || num_values > kMaxPageValues ||
      num_values > meta_.num_values - values_read_) {
    return std::unexpected("page claims " + std::to_string(num_values) + " values, the chunk has " +
                           std::to_string(meta_.num_values - values_read_) + " left");
  }
  return num_values;
}

std::expected<const uint8_t*, std::string> ColumnChunkReader::Inflate(const uint8_t* data,
                                                                      size_t size,
                                                                      size_t uncompressed) {
  if (meta_.codec == static_cast<int32_t>(Codec::kUncompressed)) {
    // Read in place: the values stay views into the chunk.
    if (size != uncompressed) {
      return std::unexpected("UNCOMPRESSED page of " + std::to_string(size) +
                             " bytes, its header says " + std::to_string(uncompressed));
    }
    return data;
  }
  page_.resize(uncompressed);
  auto done = Decompress(meta_.codec, data, size, page_.data(), uncompressed);
  if (!done) return std::unexpected(done.error());
  return page_.data();
}

std::expected<void, std::string> ColumnChunkReader::ReadDictionary(const PageHeader& header,
                                                                   const uint8_t* data) {
  if (!header.dictionary_page)
    return std::unexpected(std::string("dictionary page without its header"));
  const DictionaryPageHeader& dict = *header.dictionary_page;
  if (dict.encoding != static_cast<int32_t>(Encoding::kPlain) &&
      dict.encoding != static_cast<int32_t>(Encoding::kPlainDictionary)) {
    return Unsupported(dict.encoding, "unsupported dictionary encoding ");
  }
  if (dict.num_values < 0 || dict.num_values > kMaxPageValues) {
    return std::unexpected("dictionary of " + std::to_string(dict.num_values) + " values");
  }
  dictionary_bytes_.resize(header.uncompressed_page_size);
  auto done = Decompress(meta_.codec, data, header.compressed_page_size, dictionary_bytes_.data(),
                         dictionary_bytes_.size());
  if (!done) return done;
  has_dictionary_ = true;
  return DecodePlain(leaf_.type, dictionary_bytes_.data(), dictionary_bytes_.size(),
                     dict.num_values, &dictionary_strings_, &dictionary_integers_);
}

std::expected<void, std::string> ColumnChunkReader::ReadLevels(const uint8_t* data, size_t size,
                                                               int max_level,
                                                               std::vector<uint32_t>* levels) {
  if (max_level == 0) {
    levels->clear();
    return {};
  }
  auto decoded = DecodeRleHybrid(data, size, BitWidth(max_level), entries_, levels);
  if (!decoded) return std::unexpected("levels: " + decoded.error());
  for (uint32_t level : *levels) {
    if (level > static_cast<uint32_t>(max_level)) {
      return std::unexpected("level " + std::to_string(level) + " exceeds the column's maximum " +
                             std::to_string(max_level));
    }
  }
  return {};
}

std::expected<void, std::string> ColumnChunkReader::ReadDataPage(const PageHeader& header,
                                                                 const uint8_t* data) {
  const bool v2 = header.type == static_cast<int32_t>(PageType::kDataPageV2);
  const int32_t num_values = v2 ? header.data_page_v2->num_values : header.data_page->num_values;
  entries_ = num_values;
  values_read_ += num_values;
  const uint8_t* values = nullptr;
  size_t values_size = 0;
  int32_t encoding = 0;
  if (v2) {
    const DataPageHeaderV2& page = *header.data_page_v2;
    const int64_t rep = page.repetition_levels_byte_length,
                  def = page.definition_levels_byte_length;
    if (rep < 0 || def < 0 || rep + def > header.compressed_page_size ||
        rep + def > header.uncompressed_page_size) {
      return std::unexpected(std::string("level byte lengths exceed the page"));
    }
    if (auto r = ReadLevels(data, rep, leaf_.max_repetition, &repetition_); !r) return r;
    if (auto d = ReadLevels(data + rep, def, leaf_.max_definition, &definition_); !d) return d;
    const size_t stored = header.compressed_page_size - rep - def;
    values_size = header.uncompressed_page_size - rep - def;
    if (page.is_compressed) {
      auto inflated = Inflate(data + rep + def, stored, values_size);
      if (!inflated) return std::unexpected(inflated.error());
      values = *inflated;
    } else {
      if (stored != values_size)
        return std::unexpected(std::string("uncompressed v2 page sizes differ"));
      values = data + rep + def;
    }
    encoding = page.encoding;
  } else {
    const DataPageHeader& page = *header.data_page;
    auto inflated = Inflate(data, header.compressed_page_size, header.uncompressed_page_size);
    if (!inflated) return std::unexpected(inflated.error());
    values = *inflated;
    values_size = header.uncompressed_page_size;
    // v1 levels: each kind a 4-byte length and RLE hybrid data, repetition first.
    auto levels = [&](int max_level, int32_t level_encoding,
                      std::vector<uint32_t>* out) -> std::expected<void, std::string> {
      if (max_level == 0) return ReadLevels(nullptr, 0, 0, out);
      if (level_encoding != static_cast<int32_t>(Encoding::kRle)) {
        return Unsupported(level_encoding, "unsupported level encoding ");
      }
      if (values_size < 4)
        return std::unexpected(std::string("levels run past the end of the page"));
      const uint32_t length = ReadLittleEndian32(values);
      if (length > values_size - 4)
        return std::unexpected(std::string("levels run past the end of the page"));
      auto read = ReadLevels(values + 4, length, max_level, out);
      values += 4 + length;
      values_size -= 4 + length;
      return read;
    };
    if (auto r = levels(leaf_.max_repetition, page.repetition_level_encoding, &repetition_); !r)
      return r;
    if (auto d = levels(leaf_.max_definition, page.definition_level_encoding, &definition_); !d)
      return d;
    encoding = page.encoding;
  }
  size_t present = entries_;
  if (leaf_.max_definition > 0) {
    present = 0;
    for (uint32_t level : definition_)
      present += level == static_cast<uint32_t>(leaf_.max_definition);
  }
  return ReadValues(encoding, values, values_size, present);
}

std::expected<void, std::string> ColumnChunkReader::ReadValues(int32_t encoding,
                                                               const uint8_t* data, size_t size,
                                                               size_t count) {
  strings_.clear();
  integers_.clear();
  if (encoding == static_cast<int32_t>(Encoding::kPlain)) {
    return DecodePlain(leaf_.type, data, size, count, &strings_, &integers_);
  }
  if (encoding != static_cast<int32_t>(Encoding::kPlainDictionary) &&
      encoding != static_cast<int32_t>(Encoding::kRleDictionary)) {
    return Unsupported(encoding, "unsupported encoding ");
  }
  if (!has_dictionary_) {
    return std::unexpected(dictionary_error_.empty()
                               ? std::string("dictionary-encoded page but no dictionary page")
                               : "dictionary-encoded page whose dictionary is damaged: " +
                                     dictionary_error_);
  }
  if (count == 0) return {};
  if (size < 1) return std::unexpected(std::string("dictionary indices missing"));
  auto decoded = DecodeRleHybrid(data + 1, size - 1, data[0], count, &indices_);
  if (!decoded) return std::unexpected("dictionary indices: " + decoded.error());
  const bool bytes = leaf_.type == static_cast<int32_t>(PhysicalType::kByteArray);
  const size_t dictionary_size = bytes ? dictionary_strings_.size() : dictionary_integers_.size();
  if (bytes)
    strings_.resize(count);
  else
    integers_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t index = indices_[i];
    if (index >= dictionary_size) {
      return std::unexpected("dictionary index " + std::to_string(index) +
                             " past the dictionary's " + std::to_string(dictionary_size) +
                             " values");
    }
    if (bytes)
      strings_[i] = dictionary_strings_[index];
    else
      integers_[i] = dictionary_integers_[index];
  }
  return {};
}

}  // namespace actex::parquet
