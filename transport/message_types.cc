#include "transport/message_types.h"

#include <msgpack.hpp>

namespace actex {
namespace {

// The field names a schema struct writes, read off a default instance so the list
// can never drift from MSGPACK_DEFINE_MAP.
template <typename T>
std::vector<std::string> ComputeFieldNames() {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, T{});
  msgpack::object_handle handle = msgpack::unpack(buffer.data(), buffer.size());
  std::vector<std::string> names;
  for (const auto& pair : handle.get().via.map) names.push_back(pair.key.as<std::string>());
  return names;
}

template <typename T>
MessageTypeInfo Info(const char* name) {
  static const std::vector<std::string> fields = ComputeFieldNames<T>();
  return {name, &fields};
}

}  // namespace

std::optional<MessageTypeInfo> DescribeMessageType(uint64_t type_id) {
  if (type_id > UINT16_MAX) return std::nullopt;
  switch (static_cast<MessageType>(type_id)) {
    case MessageType::kDocument:
      return Info<DocumentMessage>("Document");
    case MessageType::kTokenBatch:
      return Info<TokenBatchMessage>("TokenBatch");
    case MessageType::kActivationBatch:
      return Info<ActivationBatchMessage>("ActivationBatch");
    case MessageType::kEndOfStream:
      return Info<EndOfStreamMessage>("EndOfStream");
    case MessageType::kReject:
      return Info<RejectMessage>("Reject");
    case MessageType::kUploadRequest:
      return Info<UploadRequestMessage>("UploadRequest");
    case MessageType::kCorpusProgress:
      return Info<CorpusProgressMessage>("CorpusProgress");
    case MessageType::kChunkEnd:
      return Info<ChunkEndMessage>("ChunkEnd");
    case MessageType::kListNow:
      return Info<ListNowMessage>("ListNow");
    case MessageType::kMonitorEvent:
      return Info<MonitorEventMessage>("MonitorEvent");
    case MessageType::kCollectiveChunk:
      return Info<CollectiveChunkMessage>("CollectiveChunk");
    case MessageType::kHello:
      return Info<HelloMessage>("Hello");
    case MessageType::kWelcome:
      return Info<WelcomeMessage>("Welcome");
    case MessageType::kAbort:
      return Info<AbortMessage>("Abort");
    case MessageType::kBarrier:
      return Info<BarrierMessage>("Barrier");
    case MessageType::kBarrierRelease:
      return Info<BarrierReleaseMessage>("BarrierRelease");
    case MessageType::kHeartbeat:
      return Info<HeartbeatMessage>("Heartbeat");
    case MessageType::kFailure:
      return Info<FailureMessage>("Failure");
    case MessageType::kLeaseRequest:
      return Info<LeaseRequestMessage>("LeaseRequest");
    case MessageType::kLeaseGrant:
      return Info<LeaseGrantMessage>("LeaseGrant");
    case MessageType::kChunksListed:
      return Info<ChunksListedMessage>("ChunksListed");
    case MessageType::kListingIntent:
      return Info<ListingIntentMessage>("ListingIntent");
    case MessageType::kListingAck:
      return Info<ListingAckMessage>("ListingAck");
    case MessageType::kStandbyUpdate:
      return Info<StandbyUpdateMessage>("StandbyUpdate");
    case MessageType::kStandbyConfirm:
      return Info<StandbyConfirmMessage>("StandbyConfirm");
    case MessageType::kReattach:
      return Info<ReattachMessage>("Reattach");
    case MessageType::kHandOver:
      return Info<HandOverMessage>("HandOver");
    case MessageType::kRingBound:
      return Info<RingBoundMessage>("RingBound");
    case MessageType::kRingTable:
      return Info<RingTableMessage>("RingTable");
  }
  return std::nullopt;
}

const char* MessageTypeName(MessageType type) {
  const auto info = DescribeMessageType(static_cast<uint64_t>(type));
  return info ? info->name : "unknown";
}

}  // namespace actex
