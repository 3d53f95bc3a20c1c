#include "transport/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/transport/raw_frames.h"
#include "tests/transport/wait_until.h"

namespace actex {
namespace {

using test_support::PackedBody;
using test_support::SendFrames;
using ::testing::HasSubstr;

// A connected PAIR of sockets over inproc: `out` sends raw or encoded frames, `in`
// receives them.
class WireTest : public ::testing::Test {
 protected:
  WireTest() : out_(context_, zmq::socket_type::pair), in_(context_, zmq::socket_type::pair) {
    out_.set(zmq::sockopt::linger, 0);
    in_.set(zmq::sockopt::linger, 0);
    in_.bind("inproc://wire-test");
    out_.connect("inproc://wire-test");
  }

  // Sends `frames`, expects Receive to refuse them with a message containing
  // `expected`, then proves the stream is clean: the next valid message arrives whole.
  void ExpectRefused(const std::vector<std::string>& frames, const std::string& expected) {
    SendFrames(out_, frames);
    auto refused = Receive(in_);
    ASSERT_FALSE(refused.has_value()) << "accepted a message that should be refused";
    EXPECT_THAT(refused.error().message, HasSubstr(expected));
    EXPECT_TRUE(refused.error().malformed()) << "a refusal must be of kind kMalformed";
    ExpectNextIsSentinel();
  }

  void ExpectNextIsSentinel() {
    ASSERT_TRUE(Send(out_, EndOfStreamMessage{7, 8, 9}).has_value());
    auto next = Receive(in_, std::chrono::milliseconds(5000));
    ASSERT_TRUE(next.has_value()) << next.error().message;
    ASSERT_TRUE(next->has_value());
    auto end = (*next)->As<EndOfStreamMessage>();
    ASSERT_TRUE(end.has_value()) << end.error();
    EXPECT_EQ(end->documents, 7);
    EXPECT_EQ(end->batches, 9);
    EXPECT_TRUE((*next)->payloads.empty());
  }

  zmq::context_t context_;
  zmq::socket_t out_;
  zmq::socket_t in_;
};

TEST_F(WireTest, DocumentRoundTrips) {
  DocumentMessage document{42, true, "héllo\nworld", {1, 2, -3, 151643}, "corpus/a.jsonl", 17};
  ASSERT_TRUE(Send(out_, document).has_value());
  auto received = Receive(in_);
  ASSERT_TRUE(received.has_value()) << received.error().message;
  EXPECT_EQ(received->type, MessageType::kDocument);
  auto decoded = received->As<DocumentMessage>();
  ASSERT_TRUE(decoded.has_value()) << decoded.error();
  EXPECT_EQ(decoded->doc_id, 42);
  EXPECT_TRUE(decoded->pretokenized);
  EXPECT_EQ(decoded->text, "héllo\nworld");
  EXPECT_EQ(decoded->input_ids, (std::vector<int32_t>{1, 2, -3, 151643}));
  EXPECT_EQ(decoded->file, "corpus/a.jsonl");
  EXPECT_EQ(decoded->line, 17);
}

TEST_F(WireTest, TokenBatchRoundTrips) {
  TokenBatchMessage batch{5, {{1, 0, 3, true}, {2, 128, 2, false}}, {10, 11, 12, 20, 21}};
  ASSERT_TRUE(Send(out_, batch).has_value());
  auto received = Receive(in_);
  ASSERT_TRUE(received.has_value()) << received.error().message;
  auto decoded = received->As<TokenBatchMessage>();
  ASSERT_TRUE(decoded.has_value()) << decoded.error();
  EXPECT_EQ(decoded->batch_id, 5);
  ASSERT_EQ(decoded->sequences.size(), 2u);
  EXPECT_EQ(decoded->sequences[1].doc_id, 2);
  EXPECT_EQ(decoded->sequences[1].doc_offset, 128);
  EXPECT_EQ(decoded->sequences[1].length, 2);
  EXPECT_FALSE(decoded->sequences[1].last_of_document);
  EXPECT_EQ(decoded->token_ids, (std::vector<int32_t>{10, 11, 12, 20, 21}));
}

TEST_F(WireTest, ActivationBatchRoundTripsWithPayloadFrames) {
  ActivationBatchMessage batch{3, {{9, 0, 2, true}}, {100, 101}, {"resid.0", "resid.1"}, {3, 2}};
  std::vector<float> first{1.5f, -2.f, 3.f, 4.f, 5.f, 6.25f};
  std::vector<float> second{0.f, 1e-30f, -7.f, 8.f};
  std::vector<zmq::message_t> payloads;
  payloads.push_back(PayloadFrame(std::vector<float>(first)));
  payloads.push_back(PayloadFrame(second.data(), second.size() * sizeof(float)));
  ASSERT_TRUE(Send(out_, batch, std::move(payloads)).has_value());
  auto received = Receive(in_);
  ASSERT_TRUE(received.has_value()) << received.error().message;
  auto decoded = received->As<ActivationBatchMessage>();
  ASSERT_TRUE(decoded.has_value()) << decoded.error();
  EXPECT_EQ(decoded->site_names, (std::vector<std::string>{"resid.0", "resid.1"}));
  EXPECT_EQ(decoded->site_widths, (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(decoded->token_ids, (std::vector<int32_t>{100, 101}));
  ASSERT_EQ(received->payloads.size(), 2u);
  EXPECT_EQ(FloatsFromFrame(received->payloads[0]).value(), first);
  EXPECT_EQ(FloatsFromFrame(received->payloads[1]).value(), second);
}

TEST_F(WireTest, EndOfStreamRejectMonitorAndChunkRoundTrip) {
  ASSERT_TRUE(Send(out_, EndOfStreamMessage{10, 2, 4}).has_value());
  ASSERT_TRUE(Send(out_, RejectMessage{6, "b.jsonl", 12, "not UTF-8"}).has_value());
  MonitorEventMessage event;
  event.kind = "progress";
  event.host_id = 1;
  event.unix_seconds = 1.5e9;
  event.docs_done = 100;
  event.tokens_per_second = 1234.5;
  event.message = "ok";
  ASSERT_TRUE(Send(out_, event).has_value());
  std::vector<zmq::message_t> payloads;
  payloads.push_back(PayloadFrame(std::vector<float>{1.f, 2.f}));
  ASSERT_TRUE(
      Send(out_, CollectiveChunkMessage{"replica-0", 1ull << 40, 3, 1, 7}, std::move(payloads))
          .has_value());

  auto end = Receive(in_).value().As<EndOfStreamMessage>().value();
  EXPECT_EQ(end.documents, 10);
  EXPECT_EQ(end.rejected, 2);
  EXPECT_EQ(end.batches, 4);
  auto reject = Receive(in_).value().As<RejectMessage>().value();
  EXPECT_EQ(reject.file, "b.jsonl");
  EXPECT_EQ(reject.line, 12);
  EXPECT_EQ(reject.reason, "not UTF-8");
  auto monitor = Receive(in_).value().As<MonitorEventMessage>().value();
  EXPECT_EQ(monitor.kind, "progress");
  EXPECT_EQ(monitor.docs_done, 100);
  EXPECT_EQ(monitor.docs_total, -1);
  EXPECT_DOUBLE_EQ(monitor.tokens_per_second, 1234.5);
  auto received = Receive(in_).value();
  auto chunk = received.As<CollectiveChunkMessage>().value();
  EXPECT_EQ(chunk.ring, "replica-0");
  EXPECT_EQ(chunk.op_id, 1ull << 40);
  EXPECT_EQ(chunk.step, 3);
  EXPECT_EQ(chunk.from_rank, 1);
  EXPECT_EQ(chunk.chunk, 7);
  ASSERT_EQ(received.payloads.size(), 1u);
  EXPECT_EQ(FloatsFromFrame(received.payloads[0]).value(), (std::vector<float>{1.f, 2.f}));
}

TEST_F(WireTest, PayloadFrameTakesTheVectorWithoutCopying) {
  std::vector<float> values(1000, 3.f);
  const float* storage = values.data();
  zmq::message_t frame = PayloadFrame(std::move(values));
  EXPECT_EQ(frame.data(), static_cast<const void*>(storage));
  EXPECT_EQ(frame.size(), 1000 * sizeof(float));
  EXPECT_EQ(PayloadFrame(std::vector<float>()).size(), 0u);
}

TEST_F(WireTest, AsRefusesAnotherTypeAndAFieldOfTheWrongType) {
  ASSERT_TRUE(Send(out_, EndOfStreamMessage{}).has_value());
  auto received = Receive(in_);
  ASSERT_TRUE(received.has_value());
  auto wrong = received->As<TokenBatchMessage>();
  ASSERT_FALSE(wrong.has_value());
  EXPECT_THAT(wrong.error(), HasSubstr("expected message type 2, got 4"));

  // {"documents": "many", "rejected": 0, "batches": 0, "corpus_error": ""}
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> packer(body);
  packer.pack_map(5);
  packer.pack(std::string("documents"));
  packer.pack(std::string("many"));
  packer.pack(std::string("rejected"));
  packer.pack(0);
  packer.pack(std::string("batches"));
  packer.pack(0);
  packer.pack(std::string("corpus_error"));
  packer.pack(std::string());
  packer.pack(std::string("drained"));
  packer.pack(false);
  SendFrames(out_, {PackEnvelope(kSchemaVersion, 4), std::string(body.data(), body.size())});
  auto shaped = Receive(in_);
  ASSERT_TRUE(shaped.has_value()) << shaped.error().message;
  auto decoded = shaped->As<EndOfStreamMessage>();
  ASSERT_FALSE(decoded.has_value());
  EXPECT_THAT(decoded.error(), HasSubstr("malformed message body"));
}

TEST_F(WireTest, ReceiveWithTimeoutReturnsNothingWhenNothingArrives) {
  const auto start = std::chrono::steady_clock::now();
  auto received = Receive(in_, std::chrono::milliseconds(100));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(received.has_value()) << received.error().message;
  EXPECT_FALSE(received->has_value());
  EXPECT_GE(waited, std::chrono::milliseconds(90));
  EXPECT_LT(waited, std::chrono::milliseconds(2000));
}

TEST_F(WireTest, RefusesASingleFrame) { ExpectRefused({"hello"}, "1 frame(s)"); }

TEST_F(WireTest, RefusesAnEmptyFrame) { ExpectRefused({""}, "1 frame(s)"); }

TEST_F(WireTest, RefusesAnEnvelopeThatIsNotMsgpack) {
  ExpectRefused({"\xc1\xc1", PackedBody(EndOfStreamMessage{})}, "envelope frame is not msgpack");
}

TEST_F(WireTest, RefusesAnEnvelopeThatIsNotAMap) {
  msgpack::sbuffer array;
  msgpack::pack(array, std::vector<int>{1, 4});
  ExpectRefused({std::string(array.data(), array.size()), PackedBody(EndOfStreamMessage{})},
                "envelope frame is not a msgpack map");
}

TEST_F(WireTest, RefusesAnEnvelopeWithoutVersionOrType) {
  msgpack::sbuffer only_type;
  msgpack::packer<msgpack::sbuffer> packer(only_type);
  packer.pack_map(1);
  packer.pack(std::string("t"));
  packer.pack(4);
  ExpectRefused({std::string(only_type.data(), only_type.size()), PackedBody(EndOfStreamMessage{})},
                "no \"v\"");
  msgpack::sbuffer only_version;
  msgpack::packer<msgpack::sbuffer> version_packer(only_version);
  version_packer.pack_map(1);
  version_packer.pack(std::string("v"));
  version_packer.pack(kSchemaVersion);
  ExpectRefused(
      {std::string(only_version.data(), only_version.size()), PackedBody(EndOfStreamMessage{})},
      "no \"t\"");
}

TEST_F(WireTest, RefusesAnotherSchemaVersionSayingWhichWasSeen) {
  ExpectRefused({PackEnvelope(kSchemaVersion + 1, 4), PackedBody(EndOfStreamMessage{})},
                "schema version " + std::to_string(kSchemaVersion + 1) + " seen, expected " +
                    std::to_string(kSchemaVersion));
}

TEST_F(WireTest, RefusesAnUnknownTypeId) {
  ExpectRefused({PackEnvelope(kSchemaVersion, 999), PackedBody(EndOfStreamMessage{})},
                "unknown message type id 999");
  ExpectRefused({PackEnvelope(kSchemaVersion, 1ull << 33), PackedBody(EndOfStreamMessage{})},
                "unknown message type id");
}

TEST_F(WireTest, RefusesABodyThatIsNotMsgpackOrNotAMapOrTruncated) {
  ExpectRefused({PackEnvelope(kSchemaVersion, 4), "\xc1"}, "body frame is not msgpack");
  ExpectRefused({PackEnvelope(kSchemaVersion, 4), "\x93\x01\x02\x03"},
                "EndOfStream body is not a msgpack map");
  const std::string body = PackedBody(EndOfStreamMessage{1, 2, 3});
  ExpectRefused({PackEnvelope(kSchemaVersion, 4), body.substr(0, body.size() - 1)},
                "truncated msgpack");
  ExpectRefused({PackEnvelope(kSchemaVersion, 4), body + "\x01"}, "1 bytes after its msgpack");
}

TEST_F(WireTest, RefusesABodyMissingAField) {
  // A TokenBatch without "token_ids".
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> packer(body);
  packer.pack_map(2);
  packer.pack(std::string("batch_id"));
  packer.pack(1);
  packer.pack(std::string("sequences"));
  packer.pack_array(0);
  ExpectRefused({PackEnvelope(kSchemaVersion, 2), std::string(body.data(), body.size())},
                "TokenBatch body lacks field \"token_ids\"");
}

TEST_F(WireTest, RefusesContainerHeadersThatClaimMoreThanTheFrameHolds) {
  // Each header claims 2^32-1 elements; decoding must not allocate for them.
  ExpectRefused({PackEnvelope(kSchemaVersion, 2), std::string("\xdd\xff\xff\xff\xff\x01\x02", 7)},
                "truncated msgpack");
  ExpectRefused({PackEnvelope(kSchemaVersion, 2), std::string("\xdf\xff\xff\xff\xff\xa1x", 7)},
                "truncated msgpack");
  ExpectRefused({std::string("\xdf\xff\xff\xff\xff", 5), PackedBody(EndOfStreamMessage{})},
                "envelope frame is not msgpack");
}

TEST_F(WireTest, RefusesDeepNesting) {
  std::string nested(200, '\x91');  // [[[[...]]]]
  nested += '\x01';
  ExpectRefused({PackEnvelope(kSchemaVersion, 2), nested}, "nested deeper than 16");
}

TEST_F(WireTest, RefusesAnOversizedBodyAndTooManyPayloadFrames) {
  std::string huge(kMaxBodyBytes + 1, '\0');
  ExpectRefused({PackEnvelope(kSchemaVersion, 4), huge}, "more than the limit of 67108864");
  std::vector<std::string> frames{PackEnvelope(kSchemaVersion, 4),
                                  PackedBody(EndOfStreamMessage{})};
  frames.resize(2 + kMaxPayloadFrames + 1, "abcd");
  ExpectRefused(frames, "1025 payload frames, limit 1024");
  frames.resize(3);
  frames.push_back(std::string(8, 'x'));
  frames.push_back(std::string(kMaxEnvelopeBytes + 1, 'e'));
  // Payload frames are opaque: three small ones are fine.
  SendFrames(out_, frames);
  auto accepted = Receive(in_);
  ASSERT_TRUE(accepted.has_value()) << accepted.error().message;
  EXPECT_EQ(accepted->payloads.size(), 3u);
  ExpectRefused({std::string(kMaxEnvelopeBytes + 1, '\x80'), PackedBody(EndOfStreamMessage{})},
                "envelope frame has 257 bytes");
}

TEST_F(WireTest, SendRefusesWhatAReceiverWouldRefuse) {
  DocumentMessage document;
  document.text.assign(kMaxBodyBytes, 'a');
  auto sent = Send(out_, document);
  ASSERT_FALSE(sent.has_value());
  EXPECT_THAT(sent.error(), HasSubstr("Document body of"));
  std::vector<zmq::message_t> payloads(kMaxPayloadFrames + 1);
  sent = Send(out_, EndOfStreamMessage{}, std::move(payloads));
  ASSERT_FALSE(sent.has_value());
  EXPECT_THAT(sent.error(), HasSubstr("1025 payload frames"));
  ExpectNextIsSentinel();  // nothing half-sent is left in the stream
}

TEST_F(WireTest, FloatsFromFrameRefusesARaggedSize) {
  auto floats = FloatsFromFrame(zmq::message_t(std::string("abcde")));
  ASSERT_FALSE(floats.has_value());
  EXPECT_THAT(floats.error(), HasSubstr("5 bytes, not a multiple of 4"));
}

TEST_F(WireTest, Int32FramesCarryExpertIdsExactlyAndRefuseARaggedSize) {
  const std::vector<int32_t> ids = {0, 63, -1, 2147483647};
  const zmq::message_t frame = PayloadFrame(std::vector<int32_t>(ids));
  auto read = Int32sFromFrame(frame);
  ASSERT_TRUE(read.has_value()) << read.error();
  EXPECT_EQ(*read, ids);
  auto ragged = Int32sFromFrame(zmq::message_t(std::string("abcdef")));
  ASSERT_FALSE(ragged.has_value());
  EXPECT_THAT(ragged.error(), HasSubstr("int32 frame has 6 bytes, not a multiple of 4"));
}

TEST_F(WireTest, SurvivesRandomMultipartGarbage) {
  std::mt19937 random(20240531);
  const std::vector<std::string> plausible{
      PackEnvelope(kSchemaVersion, 4), PackEnvelope(kSchemaVersion, 2), PackEnvelope(0, 4),
      PackedBody(EndOfStreamMessage{1, 2, 3}), PackedBody(TokenBatchMessage{})};
  int accepted = 0;
  for (int round = 0; round < 500; ++round) {
    std::vector<std::string> frames(1 + random() % 4);
    for (std::string& frame : frames) {
      if (random() % 3 == 0) {
        frame = plausible[random() % plausible.size()];
        // Flip a byte now and then, so near-valid messages are tried as well.
        if (!frame.empty() && random() % 2 == 0)
          frame[random() % frame.size()] ^= 1 << (random() % 8);
      } else {
        frame.resize(random() % 64);
        for (char& byte : frame) byte = static_cast<char>(random());
      }
    }
    SendFrames(out_, frames);
    auto received = Receive(in_);
    if (received) {
      ++accepted;
      // Whatever was accepted decodes or is refused by As, never crashes.
      (void)received->As<EndOfStreamMessage>();
      (void)received->As<TokenBatchMessage>();
    }
    ExpectNextIsSentinel();
    if (HasFatalFailure()) return;
  }
  EXPECT_LT(accepted, 500);
}

// A pipeline's PUSH whose PULL peer closed (the next actor ended while this one had
// just seen room): a blocking Send would wait for ever. TrySend sends nothing, keeps
// the payloads for a later try, and says so; with a peer again it queues the message.
TEST(TrySend, ReturnsAtOnceWithNothingSentWhenThePeerLeftAndSendsOnceOneIsBack) {
  zmq::context_t context;
  zmq::socket_t push(context, zmq::socket_type::push);
  push.set(zmq::sockopt::linger, 0);
  auto pull = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pull);
  pull->bind("inproc://try-send");
  push.connect("inproc://try-send");
  pull.reset();  // the peer leaves; the PUSH learns it asynchronously
  ASSERT_TRUE(WaitUntil([&] { return (push.get(zmq::sockopt::events) & ZMQ_POLLOUT) == 0; }));
  std::vector<zmq::message_t> payloads;
  payloads.push_back(PayloadFrame(std::vector<float>{1.5f, 2.5f}));
  auto sent = TrySend(push, EndOfStreamMessage{1, 2, 3}, payloads);
  ASSERT_TRUE(sent.has_value()) << sent.error();
  EXPECT_FALSE(*sent);
  ASSERT_EQ(payloads.size(), 1u);
  EXPECT_EQ(payloads[0].size(), 2 * sizeof(float)) << "the payload was kept for a later try";

  zmq::socket_t back(context, zmq::socket_type::pull);
  back.bind("inproc://try-send-back");
  push.connect("inproc://try-send-back");
  EXPECT_TRUE(WaitUntil([&] {
    auto again = TrySend(push, EndOfStreamMessage{1, 2, 3}, payloads);
    return again.has_value() && *again;
  }));
  auto received = Receive(back, std::chrono::milliseconds(3000));
  ASSERT_TRUE(received.has_value() && received->has_value());
  EXPECT_EQ((*received)->type, MessageType::kEndOfStream);
  ASSERT_EQ((*received)->payloads.size(), 1u);
  EXPECT_EQ((*received)->payloads[0].size(), 2 * sizeof(float));
}

}  // namespace
}  // namespace actex
