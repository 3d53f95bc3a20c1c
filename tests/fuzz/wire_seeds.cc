#include "tests/fuzz/wire_seeds.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fuzz/seed_folder.h"
#include "tests/fuzz/wire_dictionary.h"
#include "tests/transport/raw_frames.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {

namespace fs = std::filesystem;
using test_support::PackedBody;

namespace {

// Encodes with the real Send and captures the frames as a receiver sees them.
class WireCapture {
 public:
  WireCapture() {
    in_.bind("inproc://seed-capture");
    out_.connect("inproc://seed-capture");
  }
  template <typename T>
  std::string Encode(const T& message, std::vector<zmq::message_t> payloads = {}) {
    if (auto sent = Send(out_, message, std::move(payloads)); !sent) {
      std::fprintf(stderr, "%s\n", sent.error().c_str());
      std::exit(1);
    }
    std::vector<std::string> frames;
    bool more = true;
    while (more) {
      zmq::message_t frame;
      (void)in_.recv(frame);
      more = frame.more();
      frames.emplace_back(static_cast<const char*>(frame.data()), frame.size());
    }
    return Join(frames);
  }
  static std::string Join(const std::vector<std::string>& frames) {
    std::string joined;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (frames[i].find(kFuzzFrameDelimiter) != std::string::npos) {
        std::fprintf(stderr, "a seed frame holds the frame delimiter; change its values\n");
        std::exit(1);
      }
      if (i > 0) joined += kFuzzFrameDelimiter;
      joined += frames[i];
    }
    return joined;
  }

 private:
  zmq::context_t context_;
  zmq::socket_t out_{context_, zmq::socket_type::pair};
  zmq::socket_t in_{context_, zmq::socket_type::pair};
};

}  // namespace

void WriteWireDictionary(const fs::path& root) {
  const fs::path path = root.parent_path() / "dict" / "wire_receive.dict";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << WireDictionary();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::printf("%s written\n", path.c_str());
}

void WriteWireSeeds(const fs::path& root) {
  SeedFolder seeds(root, "wire_receive");
  WireCapture wire;
  const std::vector<SequenceInfo> sequences = {{7, 0, 3, false}, {8, 0, 2, true}};
  seeds.Write("document",
              wire.Encode(DocumentMessage{7, false, "Hello world", {}, "corpus.jsonl", 8}));
  seeds.Write("document_pretokenized",
              wire.Encode(DocumentMessage{9, true, "", {39, 303, 374}, "corpus.jsonl.gz", 10}));
  seeds.Write("token_batch", wire.Encode(TokenBatchMessage{3, sequences, {1, 2, 3, 4, 5}}));
  std::vector<zmq::message_t> sites;
  sites.push_back(PayloadFrame(std::vector<float>(10, 1.5f)));
  sites.push_back(PayloadFrame(std::vector<float>(5, -2.0f)));
  seeds.Write(
      "activation_batch",
      wire.Encode(
          ActivationBatchMessage{
              3, sequences, {1, 2, 3, 4, 5}, {"blocks.0.hook_resid_post", "hook_embed"}, {2, 1}},
          std::move(sites)));
  seeds.Write("end_of_stream", wire.Encode(EndOfStreamMessage{100, 3, 12}));
  seeds.Write("reject", wire.Encode(RejectMessage{4, "corpus.jsonl", 5, "blank line"}));
  seeds.Write("monitor_event", wire.Encode(MonitorEventMessage{.kind = "progress",
                                                               .host_id = 1,
                                                               .unix_seconds = 1.7e9,
                                                               .docs_done = 10,
                                                               .tokens_done = 512,
                                                               .tokens_per_second = 250.5,
                                                               .shards_written = 1,
                                                               .message = "shard_000001"}));
  std::vector<zmq::message_t> chunk;
  chunk.push_back(PayloadFrame(std::vector<float>{0.25f, 0.5f, 0.75f}));
  seeds.Write("collective_chunk",
              wire.Encode(CollectiveChunkMessage{"replica-0", 1, 2, 1, 0}, std::move(chunk)));
  seeds.Write("hello", wire.Encode(HelloMessage{1,
                                                2,
                                                "actex 0.1.0",
                                                {{"--layers", "20,21"}, {"model files", "ab12"}},
                                                {{"ring/0/1", "tcp://10.0.0.2:4000"}}}));
  seeds.Write("welcome", wire.Encode(WelcomeMessage{{{"ring/0/1", "tcp://10.0.0.2:4000"}}}));
  seeds.Write("abort", wire.Encode(AbortMessage{"host 1 lost: no message for 60 s"}));
  seeds.Write("barrier", wire.Encode(BarrierMessage{"ready"}));
  seeds.Write("barrier_release", wire.Encode(BarrierReleaseMessage{"done"}));
  seeds.Write("heartbeat", wire.Encode(HeartbeatMessage{-1, 42}));
  seeds.Write("failure", wire.Encode(FailureMessage{2, "disk full"}));
  seeds.Write("ring_bound", wire.Encode(RingBoundMessage{"replica-0", 1, "tcp://10.0.0.2:4001"}));
  seeds.Write("ring_table",
              wire.Encode(RingTableMessage{"replica-0", {"inproc://ring/0/0", "tcp://h:1"}}));
  seeds.Write("upload_request",
              wire.Encode(UploadRequestMessage{"shard_000001.safetensors", 4096, "1a2b3c4d"}));
  seeds.Write("corpus_progress", wire.Encode(CorpusProgressMessage{120, 80, 65536, false}));
  seeds.Write("chunk_end", wire.Encode(ChunkEndMessage{3, 64, "9f86d081"}));
  seeds.Write("list_now", wire.Encode(ListNowMessage{5}));
  seeds.Write("lease_request", wire.Encode(LeaseRequestMessage{7, 40}));
  seeds.Write("lease_grant", wire.Encode(LeaseGrantMessage{7, 12, false, 1}));
  seeds.Write("chunks_listed", wire.Encode(ChunksListedMessage{{3, 4, 12}}));
  seeds.Write("listing_intent", wire.Encode(ListingIntentMessage{8, {3, 4}}));
  seeds.Write("listing_ack", wire.Encode(ListingAckMessage{8, false, "chunk 4 is host 2's"}));
  seeds.Write("standby_update",
              wire.Encode(StandbyUpdateMessage{.first = 1,
                                               .records = {"granted 12 host-1", "listed 3 host-0"},
                                               .hosts = {0, 1, 2},
                                               .released_barriers = {"ready"},
                                               .joined = {{HelloMessage{0, 3}, "10.0.0.1:5000"}},
                                               .max_hosts = 3}));
  seeds.Write("standby_confirm", wire.Encode(StandbyConfirmMessage{2, true}));
  seeds.Write("reattach", wire.Encode(ReattachMessage{2, {12, 13}, {3}}));
  seeds.Write("hand_over", wire.Encode(HandOverMessage{"host 0 received SIGTERM"}));

  // Malformed: each is one of PROTOCOL.md section 7's refusals.
  constexpr auto kDocument = static_cast<uint64_t>(MessageType::kDocument);
  constexpr auto kTokenBatch = static_cast<uint64_t>(MessageType::kTokenBatch);
  constexpr auto kEndOfStream = static_cast<uint64_t>(MessageType::kEndOfStream);
  constexpr auto kCollectiveChunk = static_cast<uint64_t>(MessageType::kCollectiveChunk);
  const std::string end_body = PackedBody(EndOfStreamMessage{1, 2, 3});
  seeds.Write("envelope_only", PackEnvelope(kSchemaVersion, kEndOfStream));
  seeds.Write("schema_version_next",
              WireCapture::Join({PackEnvelope(kSchemaVersion + 1, kEndOfStream), end_body}));
  seeds.Write("unknown_type", WireCapture::Join({PackEnvelope(kSchemaVersion, 99), end_body}));
  seeds.Write("envelope_not_map",
              WireCapture::Join(
                  {PackedBody(std::vector<uint64_t>{kSchemaVersion, kEndOfStream}), end_body}));
  seeds.Write("body_of_other_type",
              WireCapture::Join({PackEnvelope(kSchemaVersion, kDocument), end_body}));
  seeds.Write("body_truncated", WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream),
                                                   end_body.substr(0, end_body.size() - 2)}));
  seeds.Write("body_trailing_bytes",
              WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream), end_body + "\x01"}));
  // A field of the wrong msgpack type: "documents" as a string.
  msgpack::sbuffer wrong;
  msgpack::packer<msgpack::sbuffer> packer(wrong);
  packer.pack_map(3);
  packer.pack(std::string_view("documents"));
  packer.pack(std::string_view("many"));
  packer.pack(std::string_view("rejected"));
  packer.pack(0);
  packer.pack(std::string_view("batches"));
  packer.pack(-1);
  seeds.Write("field_of_wrong_type", WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream),
                                                        std::string(wrong.data(), wrong.size())}));
  // A header claiming 2^32-1 array elements in five bytes.
  seeds.Write("huge_array_header", WireCapture::Join({PackEnvelope(kSchemaVersion, kTokenBatch),
                                                      std::string("\xdd\xff\xff\xff\xff", 5)}));
  seeds.Write("deep_nesting", WireCapture::Join({PackEnvelope(kSchemaVersion, kEndOfStream),
                                                 std::string(40, '\x91') + std::string("\x01")}));
  seeds.Write("odd_float_payload",
              WireCapture::Join({PackEnvelope(kSchemaVersion, kCollectiveChunk),
                                 PackedBody(CollectiveChunkMessage{"r", 1, 0, 0, 0}),
                                 std::string("\x01\x02\x03", 3)}));
}

}  // namespace actex
