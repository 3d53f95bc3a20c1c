#include "storage/parquet/parquet_metadata.h"

#include "storage/parquet/thrift_fields.h"

namespace actex::parquet {
namespace {

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

}  // namespace

std::expected<FileMetaData, std::string> DecodeFileMetaData(const uint8_t* data, size_t size) {
  return Guarded("footer is not valid Parquet metadata", [&] {
    ThriftReader reader(data, size);
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
