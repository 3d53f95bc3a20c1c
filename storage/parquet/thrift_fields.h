#ifndef ACTEX_STORAGE_PARQUET_THRIFT_FIELDS_H_
#define ACTEX_STORAGE_PARQUET_THRIFT_FIELDS_H_

#include <thrift/Thrift.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <expected>
#include <memory>
#include <new>
#include <string>

namespace actex::parquet {

// Reading Parquet's Thrift structs field by field with the Thrift compact protocol
// (libthrift), keeping only the fields actex needs: the footer's FileMetaData and
// the page headers are both read with these.

using apache::thrift::TException;
using apache::thrift::protocol::TProtocolException;
using apache::thrift::protocol::TType;
using apache::thrift::transport::TMemoryBuffer;
using Protocol = apache::thrift::protocol::TCompactProtocolT<TMemoryBuffer>;

// Lists and strings in metadata never hold more entries than the bytes they are
// read from; the limits keep a corrupt length from allocating gigabytes.
struct ThriftReader {
  ThriftReader(const uint8_t* data, size_t size)
      : buffer(std::make_shared<TMemoryBuffer>(
            const_cast<uint8_t*>(data), static_cast<uint32_t>(size), TMemoryBuffer::OBSERVE,
            std::make_shared<apache::thrift::TConfiguration>(INT_MAX))),
        protocol(buffer, static_cast<int32_t>(std::min<size_t>(size, INT_MAX)),
                 static_cast<int32_t>(std::min<size_t>(size, INT_MAX))) {}
  std::shared_ptr<TMemoryBuffer> buffer;
  Protocol protocol;
};

[[noreturn]] inline void Invalid(const std::string& what) {
  throw TProtocolException(TProtocolException::INVALID_DATA, what);
}

inline void Expect(TType got, TType want, const char* field) {
  if (got != want) Invalid(std::string("field ") + field + " has the wrong type");
}

inline int32_t ReadI32(Protocol& p, TType type, const char* field) {
  Expect(type, apache::thrift::protocol::T_I32, field);
  int32_t value = 0;
  p.readI32(value);
  return value;
}

inline int64_t ReadI64(Protocol& p, TType type, const char* field) {
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

// Runs `decode`, turning what Thrift throws on bad bytes into an error saying `what`.
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

}  // namespace actex::parquet

#endif  // ACTEX_STORAGE_PARQUET_THRIFT_FIELDS_H_
