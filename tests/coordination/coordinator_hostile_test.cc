// What strangers can do to the coordinator's ports: nothing but be counted.

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "tests/coordination/coordinator_test_util.h"
#include "tests/transport/raw_frames.h"
#include "transport/wire.h"

namespace actex {
namespace {

using coordinator_test::ClientOptionsFor;
using coordinator_test::FastOptions;
using coordinator_test::ForEachClient;
using coordinator_test::JoinAll;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using coordinator_test::WaitUntil;
using test_support::PackedBody;
using test_support::SendFrames;
using namespace std::chrono_literals;

std::string RandomBytes(std::mt19937& random, size_t size) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random() & 0xff);
  return bytes;
}

// Opens a plain tcp connection to 127.0.0.1:port, writes `bytes` and closes it.
void WriteRawTcp(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), ssize_t(bytes.size()));
  std::this_thread::sleep_for(50ms);  // let the peer read before the close
  ::close(fd);
}

// A ZMTP 3.0 greeting that names a security mechanism nobody offers.
std::string GreetingWithUnknownMechanism() {
  std::string greeting(64, '\0');
  greeting[0] = '\xff';
  greeting[9] = '\x7f';
  greeting[10] = 3;  // version 3.0
  greeting.replace(12, 5, "BOGUS");
  return greeting;
}

TEST(CoordinatorHostileInput, GarbageIsDroppedAndCountedAndTheRendezvousStillCompletes) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(2);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  CoordinatorCounters& counters = *options.counters;

  zmq::socket_t stranger(context, zmq::socket_type::dealer);
  stranger.set(zmq::sockopt::linger, 0);
  stranger.connect("tcp://127.0.0.1:" + std::to_string(options.port));
  std::mt19937 random(7);
  // Malformed: one random frame; two random frames; another schema version; a
  // Hello body without its fields; a Hello whose host_id is a string.
  SendFrames(stranger, {RandomBytes(random, 100)});
  SendFrames(stranger, {RandomBytes(random, 30), RandomBytes(random, 3000)});
  SendFrames(stranger, {PackEnvelope(kSchemaVersion + 1, 30), PackedBody(MakeHello(0, 2))});
  SendFrames(stranger, {PackEnvelope(kSchemaVersion, 30), PackedBody(AbortMessage{"x"})});
  msgpack::sbuffer bad_hello;
  msgpack::packer<msgpack::sbuffer> packer(bad_hello);
  packer.pack_map(5);
  for (const char* key : {"host_id", "num_hosts", "software_version", "fingerprint", "endpoints"}) {
    packer.pack(std::string(key));
    packer.pack(std::string("x"));
  }
  SendFrames(stranger,
             {PackEnvelope(kSchemaVersion, 30), std::string(bad_hello.data(), bad_hello.size())});
  // Well formed but not for the coordinator, or not from a joined host: a Document,
  // a Heartbeat, a Barrier and a Failure (which must not end the job).
  ASSERT_TRUE(Send(stranger, DocumentMessage{}).has_value());
  ASSERT_TRUE(Send(stranger, HeartbeatMessage{3, 1}).has_value());
  ASSERT_TRUE(Send(stranger, BarrierMessage{"done"}).has_value());
  ASSERT_TRUE(Send(stranger, FailureMessage{0, "I say so"}).has_value());
  // Raw tcp that is no ZeroMQ at all.
  WriteRawTcp(options.port, GreetingWithUnknownMechanism());
  WriteRawTcp(options.port, RandomBytes(random, 4096));
  WriteRawTcp(options.port, "GET / HTTP/1.1\r\nHost: coordinator\r\n\r\n");

  EXPECT_TRUE(WaitUntil([&] {
    return counters.malformed_messages >= 5 && counters.unexpected_messages >= 4 &&
           counters.refused_connections >= 1;
  })) << counters.malformed_messages
      << " malformed, " << counters.unexpected_messages << " unexpected, "
      << counters.refused_connections << " refused";
  EXPECT_EQ(counters.unexpected_messages, 4u);
  EXPECT_EQ(counters.joined_hosts, 0);

  std::vector<JoinResult> clients =
      JoinAll(context, ClientOptionsFor(options), {MakeHello(0, 2), MakeHello(1, 2)});
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  EXPECT_EQ((*clients[0])->endpoints().size(), 2u);

  // After the rendezvous a Hello, even a perfect one, comes from a stranger.
  ASSERT_TRUE(Send(stranger, MakeHello(1, 2)).has_value());
  EXPECT_TRUE(WaitUntil([&] { return counters.unexpected_messages == 5; }));
  auto done = ForEachClient(clients, [](CoordinatorClient& client, size_t) {
    return client.Barrier(kFinalBarrierName, 5s);
  });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  auto finished = (*coordinator)->Join();
  EXPECT_TRUE(finished.has_value()) << finished.error();
  EXPECT_EQ((*clients[0])->dropped_messages(), 0u);
}

TEST(CoordinatorHostileInput, StartFailsNamingThePortInUseAndTheOsError) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(1);
  zmq::socket_t squatter(context, zmq::socket_type::pull);
  squatter.set(zmq::sockopt::linger, 0);
  squatter.bind("tcp://127.0.0.1:" + std::to_string(options.port));
  auto coordinator = StartCoordinator(context, options);
  ASSERT_FALSE(coordinator.has_value());
  EXPECT_EQ(coordinator.error(),
            "coordinator: cannot bind the control socket (ROUTER) to 127.0.0.1:" +
                std::to_string(options.port) + ": Address already in use");

  options = FastOptions(1);
  squatter.bind("tcp://127.0.0.1:" + std::to_string(options.monitor_port));
  coordinator = StartCoordinator(context, options);
  ASSERT_FALSE(coordinator.has_value());
  EXPECT_EQ(coordinator.error(), "coordinator: cannot bind the monitor feed (XPUB) to 127.0.0.1:" +
                                     std::to_string(options.monitor_port) +
                                     ": Address already in use");
}

TEST(CoordinatorHostileInput, RefusesOptionsThatCannotWork) {
  zmq::context_t context;
  CoordinatorOptions options = FastOptions(0);
  auto coordinator = StartCoordinator(context, options);
  ASSERT_FALSE(coordinator.has_value());
  EXPECT_EQ(coordinator.error(), "coordinator: num_hosts is 0, must be between 1 and 65536");

  options = FastOptions(1);
  options.monitor_port = options.port;
  coordinator = StartCoordinator(context, options);
  ASSERT_FALSE(coordinator.has_value());
  EXPECT_THAT(coordinator.error(), ::testing::HasSubstr("must differ"));

  options = FastOptions(1);
  options.liveness.heartbeat_timeout = options.liveness.heartbeat_interval;
  coordinator = StartCoordinator(context, options);
  ASSERT_FALSE(coordinator.has_value());
  EXPECT_THAT(coordinator.error(), ::testing::HasSubstr("heartbeat_timeout"));
}

}  // namespace
}  // namespace actex
