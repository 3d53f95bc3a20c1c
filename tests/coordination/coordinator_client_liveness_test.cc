// A node's view of its coordinator's liveness: one that falls silent, one whose
// connection closes, and one that never answers the Hello.

#include <gtest/gtest.h>

#include <chrono>
#include <expected>
#include <string>
#include <thread>

#include "coordination/coordinator_client.h"
#include "tests/coordination/coordinator_test_util.h"
#include "transport/wire.h"

namespace actex {
namespace {

using coordinator_test::MakeHello;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Stands in for a coordinator that welcomes one node and then misbehaves.
class FakeCoordinator {
 public:
  explicit FakeCoordinator(zmq::context_t& context)
      : port_(FreeTcpPort()), socket_(context, zmq::socket_type::router) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:" + std::to_string(port_));
  }
  int port() const { return port_; }

  // Receives the Hello and answers with a Welcome; returns the routing id.
  void WelcomeOneNode() {
    zmq::message_t identity;
    ASSERT_TRUE(socket_.recv(identity, zmq::recv_flags::none));
    auto hello = Receive(socket_);
    ASSERT_TRUE(hello.has_value()) << hello.error().message;
    ASSERT_EQ(hello->type, MessageType::kHello);
    socket_.send(identity, zmq::send_flags::sndmore);
    ASSERT_TRUE(Send(socket_, WelcomeMessage{{{"a", "tcp://127.0.0.1:1"}}}).has_value());
  }
  void Close() { socket_.close(); }

 private:
  int port_;
  zmq::socket_t socket_;
};

CoordinatorClientOptions FakeClientOptions(int port) {
  CoordinatorClientOptions options;
  options.port = port;
  options.join_timeout = 2s;
  options.join_margin = 0ms;
  options.liveness.heartbeat_interval = 50ms;
  options.liveness.heartbeat_timeout = 400ms;
  options.liveness.disconnect_grace = 300ms;
  options.linger = 0ms;
  return options;
}

TEST(CoordinatorLiveness, SilentCoordinatorIsLostAfterTheHeartbeatTimeout) {
  zmq::context_t context;
  FakeCoordinator fake(context);
  std::thread welcome([&] { fake.WelcomeOneNode(); });
  auto client = CoordinatorClient::Join(context, FakeClientOptions(fake.port()), MakeHello(0, 1));
  welcome.join();
  ASSERT_TRUE(client.has_value()) << client.error();
  EXPECT_EQ((*client)->endpoints().at("a"), "tcp://127.0.0.1:1");
  const auto start = Clock::now();
  std::expected<void, std::string> serviced;
  while (serviced && Clock::now() - start < 3s) {
    std::this_thread::sleep_for(10ms);
    serviced = (*client)->Service();
  }
  ASSERT_FALSE(serviced.has_value());
  EXPECT_EQ(serviced.error(), "lost the coordinator (host 0): no message for 0.4 s");
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(CoordinatorLiveness, VanishedCoordinatorIsLostSoonAfterItsConnectionCloses) {
  zmq::context_t context;
  FakeCoordinator fake(context);
  std::thread welcome([&] { fake.WelcomeOneNode(); });
  CoordinatorClientOptions options = FakeClientOptions(fake.port());
  options.liveness.heartbeat_timeout = 10s;
  auto client = CoordinatorClient::Join(context, options, MakeHello(0, 1));
  welcome.join();
  ASSERT_TRUE(client.has_value()) << client.error();
  const auto start = Clock::now();
  fake.Close();
  auto barrier = (*client)->Barrier("ready", 10s);
  ASSERT_FALSE(barrier.has_value());
  EXPECT_EQ(barrier.error(),
            "lost the coordinator (host 0): its connection closed and it did not come back "
            "within 0.3 s");
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST(CoordinatorLiveness, JoinWithoutACoordinatorSaysNobodyAnswered) {
  zmq::context_t context;
  CoordinatorClientOptions options = FakeClientOptions(FreeTcpPort());
  options.join_timeout = 400ms;
  options.join_margin = 200ms;
  const auto start = Clock::now();
  auto client = CoordinatorClient::Join(context, options, MakeHello(0, 1));
  ASSERT_FALSE(client.has_value());
  EXPECT_EQ(client.error(), "no answer from the coordinator at 127.0.0.1:" +
                                std::to_string(options.port) + " within 0.6 s");
  EXPECT_GE(Clock::now() - start, 550ms);
}

}  // namespace
}  // namespace actex
