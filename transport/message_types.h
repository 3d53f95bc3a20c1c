#ifndef ACTEX_TRANSPORT_MESSAGE_TYPES_H_
#define ACTEX_TRANSPORT_MESSAGE_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transport/schema.h"

namespace actex {

// What the wire knows of one message type: its name for people and the body fields a
// receiver requires (every field of its schema struct, read off MSGPACK_DEFINE_MAP).
struct MessageTypeInfo {
  const char* name;                        // "Document", "TokenBatch", ...
  const std::vector<std::string>* fields;  // never null
};

// The type's entry, std::nullopt for an id the schema does not have (a newer or a
// stranger's sender). One switch over MessageType, without a default, so the compiler
// points here when the schema gains a type.
std::optional<MessageTypeInfo> DescribeMessageType(uint64_t type_id);

// "Document", "TokenBatch", ...; "unknown" for any other value.
const char* MessageTypeName(MessageType type);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_MESSAGE_TYPES_H_
