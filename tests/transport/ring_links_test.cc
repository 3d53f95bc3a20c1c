#include "transport/ring_links.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/transport/ring_test_util.h"
#include "transport/ring_all_reduce.h"
#include "transport/schema.h"
#include "transport/wire.h"

namespace actex {
namespace {

using ring_test::LinkKind;
using ring_test::MakeRing;
using ring_test::RunMembers;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A socket that is no member of the ring, pushing into a member's endpoint.
zmq::socket_t Stranger(zmq::context_t& context, const std::string& endpoint) {
  zmq::socket_t socket(context, zmq::socket_type::push);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(endpoint);
  return socket;
}

void SendChunk(zmq::socket_t& socket, CollectiveChunkMessage header, std::vector<float> values) {
  std::vector<zmq::message_t> payloads;
  payloads.push_back(PayloadFrame(std::move(values)));
  ASSERT_TRUE(Send(socket, header, std::move(payloads)).has_value());
}

TEST(RingLinks, ChunkOfALaterOperationIsStashedAndUsedLater) {
  zmq::context_t context;
  auto ring = MakeRing(context, "stash", 2, LinkKind::kInproc);
  ASSERT_EQ(ring.size(), 2u);
  const uint64_t first = ring[0]->NextOperation();
  const uint64_t second = ring[0]->NextOperation();
  ASSERT_TRUE(ring[0]->SendToNext(second, 0, 0, std::vector<float>{2.f, 2.f}).has_value());
  ASSERT_TRUE(ring[0]->SendToNext(first, 1, 3, std::vector<float>{1.f}).has_value());

  EXPECT_EQ(ring[1]->NextOperation(), first);
  EXPECT_EQ(ring[1]->NextOperation(), second);
  auto early = ring[1]->ReceiveFromPrevious(first, 1, 3);
  ASSERT_TRUE(early.has_value()) << early.error();
  EXPECT_EQ(*early, std::vector<float>{1.f});
  EXPECT_EQ(ring[1]->stashed_chunks(), 1u);
  auto late = ring[1]->ReceiveFromPrevious(second, 0, 0);
  ASSERT_TRUE(late.has_value()) << late.error();
  EXPECT_EQ(*late, (std::vector<float>{2.f, 2.f}));
  EXPECT_EQ(ring[1]->stashed_chunks(), 0u);
  EXPECT_EQ(ring[1]->dropped_chunks(), 0u);
}

TEST(RingLinks, StrangersAndStaleChunksAreDroppedAndCounted) {
  zmq::context_t context;
  auto ring = MakeRing(context, "guarded", 3, LinkKind::kInproc, std::chrono::milliseconds(300));
  ASSERT_EQ(ring.size(), 3u);
  zmq::socket_t stranger = Stranger(context, ring[1]->bound_endpoint());
  // Same op, step and chunk as the awaited one, but another ring; then a sender
  // that is not the predecessor; a non-chunk message; a chunk without payload; and
  // bytes that are not a message at all.
  SendChunk(stranger, {"other-ring", 1, 0, 0, 0}, {1000.f});
  SendChunk(stranger, {"guarded", 1, 0, 2, 0}, {1000.f});
  ASSERT_TRUE(Send(stranger, EndOfStreamMessage{}).has_value());
  ASSERT_TRUE(Send(stranger, CollectiveChunkMessage{"guarded", 1, 0, 0, 0}).has_value());
  stranger.send(zmq::str_buffer("garbage"), zmq::send_flags::none);
  SendChunk(stranger, {"guarded", 1, -1, 0, 0}, {1000.f});

  const uint64_t op = ring[0]->NextOperation();
  ASSERT_EQ(ring[1]->NextOperation(), op);
  // None of them is taken for the awaited chunk; the timeout says what was seen.
  auto nothing = ring[1]->ReceiveFromPrevious(op, 0, 0);
  ASSERT_FALSE(nothing.has_value());
  EXPECT_THAT(nothing.error(), HasSubstr("timed out after 300 ms waiting for op 1 step 0 chunk 0"));
  EXPECT_THAT(nothing.error(),
              HasSubstr("6 message(s) were dropped so far, the last because: impossible step -1"));
  EXPECT_EQ(ring[1]->dropped_chunks(), 6u);

  ASSERT_TRUE(ring[0]->SendToNext(op, 0, 0, std::vector<float>{5.f}).has_value());
  auto received = ring[1]->ReceiveFromPrevious(op, 0, 0);
  ASSERT_TRUE(received.has_value()) << received.error();
  EXPECT_EQ(*received, std::vector<float>{5.f});
  EXPECT_EQ(ring[1]->dropped_chunks(), 6u);

  // A chunk of an operation already over is dropped too, as is a stashed chunk
  // nobody asked for once its operation is over.
  const uint64_t next = ring[0]->NextOperation();
  ASSERT_EQ(ring[1]->NextOperation(), next);
  ASSERT_TRUE(ring[0]->SendToNext(op, 0, 9, std::vector<float>{1.f}).has_value());
  auto timed_out = ring[1]->ReceiveFromPrevious(op, 0, 1);
  ASSERT_FALSE(timed_out.has_value());
  EXPECT_EQ(ring[1]->stashed_chunks(), 1u);
  ASSERT_TRUE(ring[0]->SendToNext(op, 0, 8, std::vector<float>{1.f}).has_value());
  ASSERT_TRUE(ring[0]->SendToNext(next, 0, 0, std::vector<float>{6.f}).has_value());
  received = ring[1]->ReceiveFromPrevious(next, 0, 0);
  ASSERT_TRUE(received.has_value()) << received.error();
  EXPECT_EQ(*received, std::vector<float>{6.f});
  EXPECT_EQ(ring[1]->stashed_chunks(), 0u);
  EXPECT_EQ(ring[1]->dropped_chunks(), 8u);
}

TEST(RingLinks, AllReduceNeverMixesInChunksOfAnotherRing) {
  zmq::context_t context;
  auto ring = MakeRing(context, "victim", 2, LinkKind::kInproc, std::chrono::milliseconds(500));
  ASSERT_EQ(ring.size(), 2u);
  zmq::socket_t stranger = Stranger(context, ring[1]->bound_endpoint());
  // Exactly the header rank 1 awaits first, but for another ring.
  SendChunk(stranger, {"intruder", 1, 0, 0, 0}, std::vector<float>(4, 1000.f));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<std::vector<float>> data{{1.f, 2.f, 3.f, 4.f}, {10.f, 20.f, 30.f, 40.f}};
  auto results = RunMembers(2, [&](int rank) { return RingAllReduce(*ring[rank], data[rank]); });
  for (const auto& result : results) ASSERT_TRUE(result.has_value()) << result.error();
  for (const auto& values : data) EXPECT_EQ(values, (std::vector<float>{11.f, 22.f, 33.f, 44.f}));
  // The intruder's chunk was read during the all-reduce or is read now, when a
  // receive of the next operation drains the queue; either way it is dropped.
  EXPECT_EQ(ring[0]->NextOperation(), 2u);
  EXPECT_FALSE(ring[1]->ReceiveFromPrevious(ring[1]->NextOperation(), 0, 0).has_value());
  EXPECT_EQ(ring[1]->dropped_chunks(), 1u);
}

TEST(RingLinks, TooManyChunksAheadIsAnError) {
  zmq::context_t context;
  RingOptions options;
  options.ring = "flooded";
  options.endpoints = {"inproc://flooded/0", "inproc://flooded/1"};
  options.max_stashed_chunks = 3;
  options.rank = 1;
  auto receiver = RingLinks::Create(context, options);
  ASSERT_TRUE(receiver.has_value()) << receiver.error();
  options.rank = 0;
  auto sender = RingLinks::Create(context, options);
  ASSERT_TRUE(sender.has_value()) << sender.error();
  for (int chunk = 0; chunk < 4; ++chunk) {
    ASSERT_TRUE((*sender)->SendToNext(2, 0, chunk, std::vector<float>{1.f}).has_value());
  }
  auto received = (*receiver)->ReceiveFromPrevious(1, 0, 0);
  ASSERT_FALSE(received.has_value());
  EXPECT_THAT(received.error(), StartsWith("ring 'flooded' rank 1: "));
  EXPECT_THAT(received.error(), HasSubstr("more than 3 chunks"));
}

TEST(RingLinks, TimeoutNamesTheRingTheStepAndTheMissingPeer) {
  zmq::context_t context;
  RingOptions options;
  options.ring = "lonely";
  options.rank = 1;
  // Rank 0 never shows up.
  options.endpoints = {"inproc://lonely/0", "inproc://lonely/1"};
  options.timeout = std::chrono::milliseconds(300);
  auto links = RingLinks::Create(context, options);
  ASSERT_TRUE(links.has_value()) << links.error();
  const uint64_t op = (*links)->NextOperation();
  const auto start = std::chrono::steady_clock::now();
  auto received = (*links)->ReceiveFromPrevious(op, 2, 1);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(received.has_value());
  EXPECT_EQ(received.error(),
            "ring 'lonely' rank 1: timed out after 300 ms waiting for op 1 step 2 chunk 1 from "
            "rank 0 (inproc://lonely/0)");
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_LT(waited, std::chrono::milliseconds(1500));
}

TEST(RingLinks, AllReduceOverTcpTimesOutWhenAMemberNeverShowsUp) {
  zmq::context_t context;
  RingOptions options;
  options.ring = "incomplete";
  options.timeout = std::chrono::milliseconds(400);
  options.linger = std::chrono::milliseconds(50);  // chunks for rank 2 are never delivered
  options.endpoints = {ring_test::FreeTcpEndpoint(), ring_test::FreeTcpEndpoint(),
                       ring_test::FreeTcpEndpoint()};
  std::vector<std::unique_ptr<RingLinks>> present;
  for (int rank = 0; rank < 2; ++rank) {  // rank 2 never starts
    options.rank = rank;
    auto links = RingLinks::Create(context, options);
    ASSERT_TRUE(links.has_value()) << links.error();
    present.push_back(std::move(*links));
  }
  std::vector<std::vector<float>> data(2, std::vector<float>(30, 1.f));
  const auto start = std::chrono::steady_clock::now();
  auto results = RunMembers(2, [&](int rank) { return RingAllReduce(*present[rank], data[rank]); });
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(results[0].has_value());
  EXPECT_THAT(results[0].error(), HasSubstr("ring 'incomplete' rank 0: timed out after 400 ms"));
  EXPECT_THAT(results[0].error(), HasSubstr("from rank 2 (" + options.endpoints[2] + ")"));
  ASSERT_FALSE(results[1].has_value());
  EXPECT_LT(waited, std::chrono::milliseconds(3000));
}

TEST(RingLinks, RefusesBadOptionsNamingWhatIsWrong) {
  zmq::context_t context;
  RingOptions options;
  options.ring = "bad";
  options.endpoints = {"inproc://bad/0", "inproc://bad/1"};
  options.rank = 2;
  auto links = RingLinks::Create(context, options);
  ASSERT_FALSE(links.has_value());
  EXPECT_THAT(links.error(), HasSubstr("rank outside [0, 2)"));

  options.rank = 0;
  options.endpoints[1] = "udp://1.2.3.4:5";
  links = RingLinks::Create(context, options);
  ASSERT_FALSE(links.has_value());
  EXPECT_THAT(links.error(), HasSubstr("'udp://1.2.3.4:5' is neither"));

  options.endpoints[1] = "inproc://bad/1";
  auto first = RingLinks::Create(context, options);
  ASSERT_TRUE(first.has_value()) << first.error();
  auto second = RingLinks::Create(context, options);  // same rank, same endpoint
  ASSERT_FALSE(second.has_value());
  EXPECT_THAT(second.error(), HasSubstr("cannot bind 'inproc://bad/0'"));
}

TEST(RingLinks, WildcardBindOverTcpReportsTheActualPort) {
  zmq::context_t context;
  RingOptions options;
  options.ring = "ports";
  options.endpoints = {"tcp://127.0.0.1:*"};
  auto links = RingLinks::Bind(context, options);
  ASSERT_TRUE(links.has_value()) << links.error();
  const std::string& endpoint = (*links)->bound_endpoint();
  EXPECT_THAT(endpoint, StartsWith("tcp://127.0.0.1:"));
  EXPECT_EQ(endpoint.find('*'), std::string::npos);
  EXPECT_GT(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)), 0);
}

TEST(RingLinks, ReadableInterruptSocketEndsAWaitingReceiveWithoutReadingIt) {
  zmq::context_t context;
  // The device shard's actor pipe, as the interrupt: "$STOP" arrives on it.
  zmq::socket_t pipe(context, zmq::socket_type::pair);
  pipe.bind("inproc://interrupt-test/pipe");
  zmq::socket_t parent(context, zmq::socket_type::pair);
  parent.connect("inproc://interrupt-test/pipe");
  RingOptions options;
  options.ring = "interrupted";
  options.endpoints = {"inproc://interrupted/0", "inproc://interrupted/1"};
  options.timeout = std::chrono::milliseconds(10000);
  options.rank = 1;
  options.interrupt = &pipe;
  auto links = RingLinks::Create(context, options);
  ASSERT_TRUE(links.has_value()) << links.error();

  // Rank 0 never sends; the stop request comes after 200 ms.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    parent.send(zmq::str_buffer("$STOP"), zmq::send_flags::none);
  });
  const auto start = std::chrono::steady_clock::now();
  auto received = (*links)->ReceiveFromPrevious((*links)->NextOperation(), 0, 0);
  const auto waited = std::chrono::steady_clock::now() - start;
  stopper.join();
  ASSERT_FALSE(received.has_value());
  EXPECT_EQ(received.error(),
            "ring 'interrupted' rank 1: interrupted while waiting for op 1 step 0 chunk 0 from "
            "rank 0");
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::milliseconds(2000));
  // The stop request is left for the pipe's owner to read.
  zmq::message_t stop;
  ASSERT_TRUE(pipe.recv(stop, zmq::recv_flags::dontwait));
  EXPECT_EQ(stop.to_string(), "$STOP");
}

TEST(RingLinks, QuietInterruptSocketChangesNothingOverTcpAndInproc) {
  zmq::context_t context;
  RingOptions options;
  options.ring = "quiet";
  options.endpoints = {"inproc://quiet/0", "inproc://quiet/1", "tcp://127.0.0.1:*"};
  std::vector<zmq::socket_t> quiet;  // one per member: a socket is used by one thread
  std::vector<std::unique_ptr<RingLinks>> links;
  for (int rank = 0; rank < 3; ++rank) {
    quiet.emplace_back(context, zmq::socket_type::pair);
    quiet.back().bind("inproc://quiet-interrupt/" + std::to_string(rank));
  }
  for (int rank = 0; rank < 3; ++rank) {
    options.rank = rank;
    options.interrupt = &quiet[rank];
    auto bound = RingLinks::Bind(context, options);
    ASSERT_TRUE(bound.has_value()) << bound.error();
    links.push_back(std::move(*bound));
  }
  for (int rank = 0; rank < 3; ++rank) {
    ASSERT_TRUE(links[rank]->ConnectToNext(links[(rank + 1) % 3]->bound_endpoint()).has_value());
  }
  std::vector<std::vector<float>> data{
      {1.f, 2.f, 3.f, 4.f}, {10.f, 20.f, 30.f, 40.f}, {100.f, 200.f, 300.f, 400.f}};
  auto results = RunMembers(3, [&](int rank) { return RingAllReduce(*links[rank], data[rank]); });
  for (const auto& result : results) ASSERT_TRUE(result.has_value()) << result.error();
  for (const auto& values : data) {
    EXPECT_EQ(values, (std::vector<float>{111.f, 222.f, 333.f, 444.f}));
  }
}

}  // namespace
}  // namespace actex
