// What the writer tells the others: the node (leases: may it list, what it listed),
// the uploader (each listed shard) and the monitors (events).
#include <chrono>

#include "actors/actor_io.h"
#include "actors/writer_stage.h"
#include "base/unix_time.h"
#include "transport/schema.h"

namespace actex {
namespace {

std::string HaltText(const ActorHalt& halt) {
  return halt.kind == ActorHalt::Kind::kFailed ? halt.message : "the writer was stopped";
}

}  // namespace

std::expected<void, std::string> WriterStage::ListNow(ReceivedMessage& message) {
  auto list_now = message.As<ListNowMessage>();
  if (!list_now) return std::unexpected("list now: " + list_now.error());
  if (list_now->chunks_sent != chunks_ended_) {
    return std::unexpected("the loader sent " + std::to_string(list_now->chunks_sent) +
                           " chunks, but " + std::to_string(chunks_ended_) + " ended here");
  }
  const int64_t shards_before = shards_->stats().shards;
  if (auto listed = shards_->ListEnded(); !listed) return listed;
  return AnnounceListed(shards_before);
}

std::expected<void, std::string> WriterStage::AnnounceListed(int64_t shards_before) {
  for (int64_t shard = shards_before; shard < shards_->stats().shards; ++shard) {
    Report("shard_written", "shard " + std::to_string(shard + 1));
  }
  if (auto reported = ReportListed(); !reported) return reported;
  return RequestUploads(shards_before);
}

std::expected<void, std::string> WriterStage::AskToList(const std::vector<int64_t>& chunks) {
  const ListingIntentMessage intent{++listing_intents_, chunks};
  if (auto sent = SendUnlessStopped(actor_, listings_, intent); !sent) {
    return std::unexpected("chunks not listed: " + HaltText(sent.error()));
  }
  auto answer = ReceiveUnlessStopped(actor_, listing_acks_);
  if (!answer) return std::unexpected("chunks not listed: " + HaltText(answer.error()));
  auto ack = answer->As<ListingAckMessage>();
  if (!ack) return std::unexpected("listing ack: " + ack.error());
  if (ack->request != intent.request) {
    return std::unexpected("listing ack " + std::to_string(ack->request) + " answers no request");
  }
  if (!ack->accepted) return std::unexpected("the coordinator refused the listing: " + ack->reason);
  return {};
}

std::expected<void, std::string> WriterStage::ReportListed() {
  if (!listings_) return {};
  ChunksListedMessage listed;
  for (int64_t chunk : shards_->listed_chunks()) {
    if (reported_.insert(chunk).second) listed.chunks.push_back(chunk);
  }
  if (listed.chunks.empty()) return {};
  return EndActor(SendUnlessStopped(actor_, listings_, listed));
}

std::expected<void, std::string> WriterStage::RequestUploads(int64_t from) {
  for (int64_t shard = from; uploads_ && shard < shards_->stats().shards; ++shard) {
    for (const ListedShard& listed : shards_->listed_files(shard)) {  // with its examples
      auto sent = SendUnlessStopped(actor_, uploads_,
                                    UploadRequestMessage{listed.file, listed.bytes, listed.crc32});
      if (!sent) return EndActor(sent.error());  // stopped: the uploader is gone
    }
  }
  return {};
}

void WriterStage::Report(const std::string& kind, const std::string& text) {
  auto now = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(now - last_report_).count();
  const ShardStats& stats = shards_->stats();
  MonitorEventMessage event;
  event.kind = kind;
  event.host_id = config_.host_id;
  event.unix_seconds = UnixSeconds();
  event.docs_done = stats.docs;
  event.docs_total = docs_total_;
  event.docs_total_estimated = docs_total_estimated_;
  event.docs_total_of_job = config_.docs_total_of_job;
  event.tokens_done = stats.tokens;
  event.docs_through_listed = stats.chunk_docs;
  event.docs_computed = docs_computed_;
  event.tokens_computed = tokens_computed_;
  event.tokens_per_second = seconds > 0 ? tokens_since_report_ / seconds : 0;
  event.shards_written = stats.shards;
  event.rejected = rejects_log_->count();
  event.message = text;
  if (kind == "progress" || kind == "started") {
    last_report_ = now;
    tokens_since_report_ = 0;
  }
  // Events are advisory: a full queue drops them rather than stalling the writer.
  msgpack::sbuffer body;
  msgpack::pack(body, event);
  (void)SendEncoded(events_, event.kType, body, {});
}

}  // namespace actex
