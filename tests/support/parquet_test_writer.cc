#include "tests/support/parquet_test_writer.h"

#include <snappy.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <bit>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

namespace actex::test_support {
namespace {

using apache::thrift::protocol::TType;
using apache::thrift::transport::TMemoryBuffer;
using Protocol = apache::thrift::protocol::TCompactProtocolT<TMemoryBuffer>;
namespace T = apache::thrift::protocol;

// Thrift structs written field by field.
class Writer {
 public:
  Writer() : buffer_(std::make_shared<TMemoryBuffer>()), p_(buffer_) {}
  void I32(int16_t id, int32_t value) { Field(id, T::T_I32), p_.writeI32(value), End(); }
  void I64(int16_t id, int64_t value) { Field(id, T::T_I64), p_.writeI64(value), End(); }
  void String(int16_t id, const std::string& value) {
    Field(id, T::T_STRING), p_.writeString(value), End();
  }
  void Struct(int16_t id, const std::function<void()>& body) {
    Field(id, T::T_STRUCT);
    Begin(), body(), Stop();
    End();
  }
  void List(int16_t id, TType type, int size, const std::function<void(int)>& element) {
    Field(id, T::T_LIST);
    p_.writeListBegin(type, size);
    for (int i = 0; i < size; ++i) element(i);
    p_.writeListEnd();
    End();
  }
  void Begin() { p_.writeStructBegin(""); }
  void Stop() { p_.writeFieldStop(), p_.writeStructEnd(); }
  Protocol& protocol() { return p_; }
  std::string Bytes() { return buffer_->getBufferAsString(); }

 private:
  void Field(int16_t id, TType type) { p_.writeFieldBegin("", type, id); }
  void End() { p_.writeFieldEnd(); }
  std::shared_ptr<TMemoryBuffer> buffer_;
  Protocol p_;
};

void Append32(std::string* out, uint32_t value) { out->append(reinterpret_cast<char*>(&value), 4); }

// RLE runs only (a valid form of the hybrid encoding), with the v1 length prefix.
std::string RleLevels(const std::vector<int>& levels, int max_level) {
  const int width = std::bit_width(static_cast<unsigned>(max_level));
  std::string runs;
  for (size_t i = 0; i < levels.size();) {
    size_t end = i;
    while (end < levels.size() && levels[end] == levels[i]) ++end;
    for (uint32_t header = static_cast<uint32_t>(end - i) << 1;; header >>= 7) {
      runs.push_back(static_cast<char>((header & 0x7F) | (header > 0x7F ? 0x80 : 0)));
      if (header <= 0x7F) break;
    }
    for (int b = 0; b < (width + 7) / 8; ++b)
      runs.push_back(static_cast<char>(levels[i] >> (8 * b)));
    i = end;
  }
  std::string out;
  Append32(&out, static_cast<uint32_t>(runs.size()));
  return out + runs;
}

struct Column {
  std::string name;  // top-level field
  std::vector<std::string> path;
  int32_t type = 6;  // BYTE_ARRAY
  int max_definition = 1, max_repetition = 0;
  // Per row group: levels and PLAIN values.
  std::function<void(int64_t first, int64_t count, std::vector<int>* rep, std::vector<int>* def,
                     std::string* values)>
      chunk;
};

struct Chunk {
  int64_t offset = 0, size = 0, uncompressed = 0, values = 0;
};

struct SchemaNode {
  std::string name;
  std::optional<int32_t> type;  // leaves only
  int32_t repetition = 1;       // OPTIONAL
  int32_t children = 0;
  std::optional<int32_t> converted_type;  // UTF8 = 0, LIST = 3
};

std::string WriteFile(int64_t rows, const std::vector<Column>& columns,
                      const std::vector<SchemaNode>& schema, const ParquetWriteOptions& options) {
  std::string file = "PAR1";
  std::vector<std::vector<Chunk>> groups;
  std::vector<int64_t> group_rows;
  for (int64_t first = 0; first < rows; first += options.rows_per_group) {
    const int64_t count = std::min<int64_t>(options.rows_per_group, rows - first);
    groups.emplace_back();
    group_rows.push_back(count);
    for (const Column& column : columns) {
      Chunk chunk{.offset = static_cast<int64_t>(file.size())};
      const int64_t page_rows = options.rows_per_page > 0 ? options.rows_per_page : count;
      for (int64_t page_first = first; page_first < first + count; page_first += page_rows) {
        const int64_t rows_here = std::min(page_rows, first + count - page_first);
        std::vector<int> rep, def;
        std::string values;
        column.chunk(page_first, rows_here, &rep, &def, &values);
        std::string page;
        if (column.max_repetition > 0) page += RleLevels(rep, column.max_repetition);
        page += RleLevels(def, column.max_definition);
        page += values;
        std::string stored = page;
        if (options.snappy) snappy::Compress(page.data(), page.size(), &stored);
        Writer header;
        header.Begin();
        header.I32(1, 0);  // DATA_PAGE
        header.I32(2, static_cast<int32_t>(page.size()));
        header.I32(3, static_cast<int32_t>(stored.size()));
        header.Struct(5, [&] {
          header.I32(1, static_cast<int32_t>(def.size()));
          header.I32(2, 0), header.I32(3, 3), header.I32(4, 3);  // PLAIN, RLE, RLE
        });
        header.Stop();
        const std::string header_bytes = header.Bytes();
        if (options.pages != nullptr) {
          const auto at = static_cast<int64_t>(file.size());
          options.pages->push_back({static_cast<int>(groups.size() - 1), column.name, at,
                                    at + static_cast<int64_t>(header_bytes.size()),
                                    static_cast<int64_t>(stored.size()), page_first, rows_here});
        }
        chunk.size += static_cast<int64_t>(header_bytes.size() + stored.size());
        chunk.uncompressed += static_cast<int64_t>(header_bytes.size() + page.size());
        chunk.values += static_cast<int64_t>(def.size());
        file += header_bytes + stored;
      }
      groups.back().push_back(chunk);
    }
  }
  Writer meta;
  meta.Begin();
  meta.I32(1, 1);  // version
  meta.List(2, T::T_STRUCT, static_cast<int>(schema.size()), [&](int i) {
    const SchemaNode& node = schema[i];
    meta.Begin();
    if (node.type) meta.I32(1, *node.type);
    if (i > 0) meta.I32(3, node.repetition);
    meta.String(4, node.name);
    if (node.children > 0) meta.I32(5, node.children);
    if (node.converted_type) meta.I32(6, *node.converted_type);
    meta.Stop();
  });
  meta.I64(3, rows);
  meta.List(4, T::T_STRUCT, static_cast<int>(groups.size()), [&](int g) {
    meta.Begin();
    int64_t bytes = 0;
    for (const Chunk& chunk : groups[g]) bytes += chunk.uncompressed;
    meta.List(1, T::T_STRUCT, static_cast<int>(columns.size()), [&](int c) {
      const Chunk& chunk = groups[g][c];
      meta.Begin();
      meta.I64(2, chunk.offset);
      meta.Struct(3, [&] {
        meta.I32(1, columns[c].type);
        meta.List(2, T::T_I32, 2, [&](int e) { meta.protocol().writeI32(e == 0 ? 0 : 3); });
        meta.List(3, T::T_STRING, static_cast<int>(columns[c].path.size()),
                  [&](int e) { meta.protocol().writeString(columns[c].path[e]); });
        meta.I32(4, options.snappy ? 1 : 0);
        meta.I64(5, chunk.values);
        meta.I64(6, chunk.uncompressed);
        meta.I64(7, chunk.size);
        meta.I64(9, chunk.offset);
      });
      meta.Stop();
    });
    meta.I64(2, bytes);
    meta.I64(3, group_rows[g]);
    meta.Stop();
  });
  meta.String(6, "actex test writer");
  meta.Stop();
  const std::string footer = meta.Bytes();
  file += footer;
  Append32(&file, static_cast<uint32_t>(footer.size()));
  return file + "PAR1";
}

// Optional string columns other than the text, one value per row.
Column OtherColumn(const std::string& name) {
  return Column{name,
                {name},
                6,
                1,
                0,
                [name](int64_t first, int64_t count, std::vector<int>*, std::vector<int>* def,
                       std::string* values) {
                  for (int64_t row = first; row < first + count; ++row) {
                    const std::string value = name + "-" + std::to_string(row);
                    def->push_back(1);
                    Append32(values, static_cast<uint32_t>(value.size()));
                    *values += value;
                  }
                }};
}

std::vector<SchemaNode> OtherSchema(const ParquetWriteOptions& options) {
  std::vector<SchemaNode> nodes;
  for (const std::string& name : options.other_columns) nodes.push_back({name, 6, 1, 0, 0});
  return nodes;
}

}  // namespace

std::string ParquetWithText(const std::vector<std::optional<std::string>>& texts,
                            const std::string& column, const ParquetWriteOptions& options) {
  std::vector<Column> columns;
  for (const std::string& name : options.other_columns) columns.push_back(OtherColumn(name));
  columns.push_back(Column{column,
                           {column},
                           6,
                           1,
                           0,
                           [&texts](int64_t first, int64_t count, std::vector<int>*,
                                    std::vector<int>* def, std::string* values) {
                             for (int64_t row = first; row < first + count; ++row) {
                               def->push_back(texts[row] ? 1 : 0);
                               if (!texts[row]) continue;
                               Append32(values, static_cast<uint32_t>(texts[row]->size()));
                               *values += *texts[row];
                             }
                           }});
  std::vector<SchemaNode> schema = {
      {"schema", std::nullopt, 0, static_cast<int32_t>(columns.size()), std::nullopt}};
  for (const SchemaNode& node : OtherSchema(options)) schema.push_back(node);
  schema.push_back({column, 6, 1, 0, 0});
  return WriteFile(static_cast<int64_t>(texts.size()), columns, schema, options);
}

std::string ParquetWithInputIds(const std::vector<std::vector<int32_t>>& lists,
                                const ParquetWriteOptions& options) {
  std::vector<Column> columns;
  for (const std::string& name : options.other_columns) columns.push_back(OtherColumn(name));
  columns.push_back(Column{"input_ids",
                           {"input_ids", "list", "element"},
                           1,
                           3,
                           1,
                           [&lists](int64_t first, int64_t count, std::vector<int>* rep,
                                    std::vector<int>* def, std::string* values) {
                             for (int64_t row = first; row < first + count; ++row) {
                               if (lists[row].empty()) rep->push_back(0), def->push_back(1);
                               for (size_t i = 0; i < lists[row].size(); ++i) {
                                 rep->push_back(i == 0 ? 0 : 1);
                                 def->push_back(3);
                                 Append32(values, static_cast<uint32_t>(lists[row][i]));
                               }
                             }
                           }});
  std::vector<SchemaNode> schema = {
      {"schema", std::nullopt, 0, static_cast<int32_t>(columns.size()), std::nullopt}};
  for (const SchemaNode& node : OtherSchema(options)) schema.push_back(node);
  schema.push_back({"input_ids", std::nullopt, 1, 1, 3});
  schema.push_back({"list", std::nullopt, 2, 1, std::nullopt});
  schema.push_back({"element", 1, 1, 0, std::nullopt});
  return WriteFile(static_cast<int64_t>(lists.size()), columns, schema, options);
}

}  // namespace actex::test_support
