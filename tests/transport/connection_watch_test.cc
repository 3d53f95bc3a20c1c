// A connection watch follows the ZeroMQ socket it watches, not the zmq::socket_t
// naming it: a socket moved while watched (as a struct of sockets returned by value
// moves its members) is still watched, and destroying the watch still stops the
// monitor. A monitor left running past its reader blocks ZeroMQ's I/O thread at the
// socket's next event, and every connection of the context with it: a coordinator
// stopped inside a running node (host 0 back through the standby) froze its node's
// link to the standby that way until the standby gave it up as lost.
#include "transport/connection_watch.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/transport/wait_until.h"

namespace actex {
namespace {

using namespace std::chrono_literals;

// ipc endpoints in a fresh folder: the monitor reports their connections as it does
// tcp ones, and a unit test may open them.
class ConnectionWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char folder[] = "/tmp/actex-watch-XXXXXX";
    ASSERT_NE(mkdtemp(folder), nullptr);
    folder_ = folder;
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  std::string Endpoint(const std::string& name) const { return "ipc://" + folder_ + "/" + name; }
  zmq::socket_t Socket(zmq::socket_type type) {
    zmq::socket_t socket(context_, type);
    socket.set(zmq::sockopt::linger, 0);
    return socket;
  }
  // Whether a message sent on a fresh ipc link of the context arrives within `wait`:
  // it does only while the context's I/O thread runs.
  bool ContextStillCarries(std::chrono::milliseconds wait) {
    zmq::socket_t pull = Socket(zmq::socket_type::pull);
    pull.bind(Endpoint("probe"));
    zmq::socket_t push = Socket(zmq::socket_type::push);
    push.connect(Endpoint("probe"));
    push.send(zmq::str_buffer("still moving"), zmq::send_flags::dontwait);
    zmq::pollitem_t item{pull.handle(), 0, ZMQ_POLLIN, 0};
    return zmq::poll(&item, 1, wait) == 1;
  }
  static bool Saw(ConnectionWatch& watch, ConnectionEvent::Kind kind) {
    return WaitUntil([&] {
      for (const ConnectionEvent& event : watch.Drain()) {
        if (event.kind == kind) return true;
      }
      return false;
    });
  }

  zmq::context_t context_;
  std::string folder_;
};

TEST_F(ConnectionWatchTest, ASocketMovedWhileWatchedIsStillWatchedAndItsMonitorStopsWithTheWatch) {
  std::optional<zmq::socket_t> bound = Socket(zmq::socket_type::router);
  bound->bind(Endpoint("watched"));
  std::unique_ptr<ConnectionWatch> watch = ConnectionWatch::Create(context_, *bound).value();
  zmq::socket_t first = Socket(zmq::socket_type::dealer);
  first.connect(Endpoint("watched"));
  ASSERT_TRUE(Saw(*watch, ConnectionEvent::Kind::kAccepted));

  zmq::socket_t moved = std::move(*bound);  // `bound` names no socket now, but lives on
  zmq::socket_t second = Socket(zmq::socket_type::dealer);
  second.connect(Endpoint("watched"));
  EXPECT_TRUE(Saw(*watch, ConnectionEvent::Kind::kAccepted)) << "the moved socket went unwatched";

  watch.reset();
  // Connections that come and go once nobody reads the events: with the monitor
  // still running, the first of these would stop the I/O thread for good.
  first.close();
  second.close();
  std::vector<zmq::socket_t> later;
  for (int peer = 0; peer < 8; ++peer) {
    later.push_back(Socket(zmq::socket_type::dealer));
    later.back().connect(Endpoint("watched"));
  }
  later.clear();
  EXPECT_TRUE(ContextStillCarries(3s))
      << "ZeroMQ's I/O thread is blocked on a monitor nobody reads";
}

}  // namespace
}  // namespace actex
