#include "storage/parquet/page_header.h"

#include "storage/parquet/thrift_fields.h"

namespace actex::parquet {

std::expected<PageHeader, std::string> DecodePageHeader(const uint8_t* data, size_t size) {
  return Guarded("page header is not valid", [&] {
    ThriftReader reader(data, size);
    Protocol& p = reader.protocol;
    PageHeader header;
    bool has_type = false, has_sizes = false;
    ReadStruct(p, [&](TType type, int16_t id) {
      switch (id) {
        case 1:
          header.type = ReadI32(p, type, "PageHeader.type");
          has_type = true;
          return true;
        case 2:
          header.uncompressed_page_size = ReadI32(p, type, "uncompressed_page_size");
          return true;
        case 3:
          header.compressed_page_size = ReadI32(p, type, "compressed_page_size");
          has_sizes = true;
          return true;
        case 5: {
          Expect(type, apache::thrift::protocol::T_STRUCT, "data_page_header");
          DataPageHeader& page = header.data_page.emplace();
          ReadStruct(p, [&](TType t, int16_t f) {
            switch (f) {
              case 1:
                page.num_values = ReadI32(p, t, "num_values");
                return true;
              case 2:
                page.encoding = ReadI32(p, t, "encoding");
                return true;
              case 3:
                page.definition_level_encoding = ReadI32(p, t, "definition_level_encoding");
                return true;
              case 4:
                page.repetition_level_encoding = ReadI32(p, t, "repetition_level_encoding");
                return true;
              default:
                return false;
            }
          });
          return true;
        }
        case 7: {
          Expect(type, apache::thrift::protocol::T_STRUCT, "dictionary_page_header");
          DictionaryPageHeader& page = header.dictionary_page.emplace();
          ReadStruct(p, [&](TType t, int16_t f) {
            switch (f) {
              case 1:
                page.num_values = ReadI32(p, t, "num_values");
                return true;
              case 2:
                page.encoding = ReadI32(p, t, "encoding");
                return true;
              default:
                return false;
            }
          });
          return true;
        }
        case 8: {
          Expect(type, apache::thrift::protocol::T_STRUCT, "data_page_header_v2");
          DataPageHeaderV2& page = header.data_page_v2.emplace();
          ReadStruct(p, [&](TType t, int16_t f) {
            switch (f) {
              case 1:
                page.num_values = ReadI32(p, t, "num_values");
                return true;
              case 2:
                page.num_nulls = ReadI32(p, t, "num_nulls");
                return true;
              case 3:
                page.num_rows = ReadI32(p, t, "num_rows");
                return true;
              case 4:
                page.encoding = ReadI32(p, t, "encoding");
                return true;
              case 5:
                page.definition_levels_byte_length = ReadI32(p, t, "definition_levels_byte_length");
                return true;
              case 6:
                page.repetition_levels_byte_length = ReadI32(p, t, "repetition_levels_byte_length");
                return true;
              case 7: {
                if (t != apache::thrift::protocol::T_BOOL)
                  Invalid("field is_compressed has the wrong type");
                p.readBool(page.is_compressed);
                return true;
              }
              default:
                return false;
            }
          });
          return true;
        }
        default:
          return false;
      }
    });
    if (!has_type || !has_sizes) Invalid("type or compressed_page_size is missing");
    header.header_bytes = size - reader.buffer->available_read();
    return header;
  });
}

}  // namespace actex::parquet
