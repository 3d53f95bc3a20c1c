#ifndef ACTEX_TRANSPORT_MESSAGE_TYPES_H_
#define ACTEX_TRANSPORT_MESSAGE_TYPES_H_

#include <array>
#include <cstddef>
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

// A list of schema structs, for code that visits every message type at compile time.
template <typename... Messages>
struct MessageTypeList {
  static constexpr size_t kSize = sizeof...(Messages);
};

// Every schema struct, in the order of their ids (the wire fuzzer round-trips each).
// transport_test checks that it names exactly the ids DescribeMessageType knows.
using AllMessageTypes =
    MessageTypeList<DocumentMessage, TokenBatchMessage, ActivationBatchMessage, EndOfStreamMessage,
                    RejectMessage, UploadRequestMessage, CorpusProgressMessage, ChunkEndMessage,
                    ListNowMessage, MonitorEventMessage, CollectiveChunkMessage, HelloMessage,
                    WelcomeMessage, AbortMessage, BarrierMessage, BarrierReleaseMessage,
                    HeartbeatMessage, FailureMessage, LeaseRequestMessage, LeaseGrantMessage,
                    ChunksListedMessage, ListingIntentMessage, ListingAckMessage,
                    StandbyUpdateMessage, StandbyConfirmMessage, ReattachMessage, HandOverMessage,
                    RingBoundMessage, RingTableMessage>;

// The ids of a list's structs, in its order.
template <typename... Messages>
constexpr std::array<MessageType, sizeof...(Messages)> IdsOf(MessageTypeList<Messages...>) {
  return {Messages::kType...};
}

}  // namespace actex

#endif  // ACTEX_TRANSPORT_MESSAGE_TYPES_H_
