#include "storage/parquet/parquet_metadata.h"

#include <thrift/Thrift.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <climits>
#include <memory>

namespace actex::parquet {
namespace {

using apache::thrift::TException;
using apache::thrift::protocol::TProtocolException;
using apache::thrift::protocol::TType;
using apache::thrift::transport::TMemoryBuffer;
using Protocol = apache::thrift::protocol::TCompactProtocolT<TMemoryBuffer>;

// Lists and strings in metadata never hold more entries than the bytes they are
// read from; the limits keep a corrupt length from allocating gigabytes.
struct Reader {
  Reader(const uint8_t* data, size_t size)
      : buffer(std::make_shared<TMemoryBuffer>(
            const_cast<uint8_t*>(data), static_cast<uint32_t>(size), TMemoryBuffer::OBSERVE,
            std::make_shared<apache::thrift::TConfiguration>(INT_MAX))),
        protocol(buffer, static_cast<int32_t>(std::min<size_t>(size, INT_MAX)),
                 static_cast<int32_t>(std::min<size_t>(size, INT_MAX))) {}
  std::shared_ptr<TMemoryBuffer> buffer;
  Protocol protocol;
};

[[noreturn]] void Invalid(const std::string& what) {
  throw TProtocolException(TProtocolException::INVALID_DATA, what);
}

void Expect(TType got, TType want, const char* field) {
  if (got != want) Invalid(std::string("field ") + field + " has the wrong type");
}

int32_t ReadI32(Protocol& p, TType type, const char* field) {
  Expect(type, apache::thrift::protocol::T_I32, field);
  int32_t value = 0;
  p.readI32(value);
  return value;
}

int64_t ReadI64(Protocol& p, TType type, const char* field) {
  Expect(type, apache::thrift::protocol::T_I64, field);
  int64_t value = 0;
  p.readI64(value);
  return value;
}

// Calls on_field(type, id) for each field of a struct; it must consume the field
// or return false to have it skipped.
template <typename OnField>
void ReadStruct(Protocol& p, OnField on_field) {
  std::string name;
  p.readStructBegin(name);
  while (true) {
    TType type;
    int16_t id;
    p.readFieldBegin(name, type, id);
    if (type == apache::thrift::protocol::T_STOP) break;
    if (!on_field(type, id)) p.skip(type);
    p.readFieldEnd();
  }
  p.readStructEnd();
}

template <typename OnElement>
void ReadList(Protocol& p, TType type, TType element, const char* field, OnElement on_element) {
  Expect(type, apache::thrift::protocol::T_LIST, field);
  TType got;
  uint32_t size = 0;
  p.readListBegin(got, size);
  if (size > 0) Expect(got, element, field);
  for (uint32_t i = 0; i < size; ++i) on_element();
  p.readListEnd();
}

SchemaElement ReadSchemaElement(Protocol& p) {
  SchemaElement element;
  bool has_name = false;
  ReadStruct(p, [&](TType type, int16_t id) {
    switch (id) {
      case 1:
        element.type = ReadI32(p, type, "SchemaElement.type");
        return true;
      case 3:
        element.repetition = static_cast<Repetition>(ReadI32(p, type, "repetition_type"));
        return true;
      case 4:
        Expect(type, apache::thrift::protocol::T_STRING, "SchemaElement.name");
        p.readString(element.name);
        has_name = true;
        return true;
      case 5:
        element.num_children = ReadI32(p, type, "num_children");
        return true;
      default:
        return false;
    }
  });
  if (!has_name) Invalid("a schema element has no name");
  return element;
}

ColumnChunkMeta ReadColumnMeta(Protocol& p) {
  ColumnChunkMeta meta;
  ReadStruct(p, [&](TType type, int16_t id) {
    switch (id) {
      case 1:
        meta.type = ReadI32(p, type, "ColumnMetaData.type");
        return true;
      case 3:
        ReadList(p, type, apache::thrift::protocol::T_STRING, "path_in_schema", [&] {
          meta.path.emplace_back();
          p.readString(meta.path.back());
        });
        return true;
      case 4:
        meta.codec = ReadI32(p, type, "codec");
        return true;
      case 5:
        meta.num_values = ReadI64(p, type, "num_values");
        return true;
      case 7:
        meta.total_compressed_size = ReadI64(p, type, "total_compressed_size");
        return true;
      case 9:
        meta.data_page_offset = ReadI64(p, type, "data_page_offset");
        return true;
      case 11:
        meta.dictionary_page_offset = ReadI64(p, type, "dictionary_page_offset");
        return true;
      default:
        return false;
    }
  });
  return meta;
}

RowGroupMeta ReadRowGroup(Protocol& p) {
  RowGroupMeta group;
  ReadStruct(p, [&](TType type, int16_t id) {
    switch (id) {
      case 1:
        ReadList(p, type, apache::thrift::protocol::T_STRUCT, "RowGroup.columns", [&] {
          bool has_meta = false;
          ReadStruct(p, [&](TType field_type, int16_t field_id) {
            if (field_id != 3) return false;
            Expect(field_type, apache::thrift::protocol::T_STRUCT, "ColumnChunk.meta_data");
            group.columns.push_back(ReadColumnMeta(p));
            has_meta = true;
            return true;
          });
          if (!has_meta) Invalid("a column chunk has no meta_data");
        });
        return true;
      case 3:
        group.num_rows = ReadI64(p, type, "RowGroup.num_rows");
        return true;
      default:
        return false;
    }
  });
  return group;
}

template <typename Decode>
auto Guarded(const char* what, Decode decode) -> std::expected<decltype(decode()), std::string> {
  try {
    return decode();
  } catch (const TException& error) {
    return std::unexpected(std::string(what) + ": " + error.what());
  } catch (const std::bad_alloc&) {
    return std::unexpected(std::string(what) + ": a length is too large to hold");
  }
}

}  // namespace

std::expected<FileMetaData, std::string> DecodeFileMetaData(const uint8_t* data, size_t size) {
  return Guarded("footer is not valid Parquet metadata", [&] {
    Reader reader(data, size);
    Protocol& p = reader.protocol;
    FileMetaData meta;
    bool has_version = false, has_schema = false, has_rows = false, has_groups = false;
    ReadStruct(p, [&](TType type, int16_t id) {
      switch (id) {
        case 1:
          ReadI32(p, type, "version");
          has_version = true;
          return true;
        case 2:
          ReadList(p, type, apache::thrift::protocol::T_STRUCT, "schema",
                   [&] { meta.schema.push_back(ReadSchemaElement(p)); });
          has_schema = true;
          return true;
        case 3:
          meta.num_rows = ReadI64(p, type, "num_rows");
          has_rows = true;
          return true;
        case 4:
          ReadList(p, type, apache::thrift::protocol::T_STRUCT, "row_groups",
                   [&] { meta.row_groups.push_back(ReadRowGroup(p)); });
          has_groups = true;
          return true;
        default:
          return false;
      }
    });
    if (!has_version || !has_schema || !has_rows || !has_groups) {
      Invalid("a required field (version, schema, num_rows, row_groups) is missing");
    }
    return meta;
  });
}

std::expected<PageHeader, std::string> DecodePageHeader(const uint8_t* data, size_t size) {
  return Guarded("page header is not valid", [&] {
    Reader reader(data, size);
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

std::string PhysicalTypeName(int32_t type) {
  static const char* kNames[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                 "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  if (type >= 0 && type < 8) return kNames[type];
  return "type " + std::to_string(type);
}

std::string CodecName(int32_t codec) {
  static const char* kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                 "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
  if (codec >= 0 && codec < 8) return kNames[codec];
  return "codec " + std::to_string(codec);
}

std::string EncodingName(int32_t encoding) {
  static const char* kNames[] = {
      "PLAIN",          "GROUP_VAR_INT",       "PLAIN_DICTIONARY",        "RLE",
      "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
      "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  if (encoding >= 0 && encoding < 10) return kNames[encoding];
  return "encoding " + std::to_string(encoding);
}

}  // namespace actex::parquet
