// `actex monitor` pointed where no job's publisher is: a port nothing listens on, and
// a stranger's server that writes bytes that are not ZeroMQ. Within --warn-after
// seconds it says on stderr what it heard and what it waits for, keeps waiting, and
// gives up at --timeout saying so; it neither crashes nor prints the stranger's bytes.
// Real processes and real sockets on 127.0.0.1 only.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// A TCP socket bound to 127.0.0.1 on a free port; listening only if asked.
class LoopbackSocket {
 public:
  explicit LoopbackSocket(bool listen) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t size = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    if (listen) {
      EXPECT_EQ(::listen(fd_, 16), 0);
    }
  }
  ~LoopbackSocket() { ::close(fd_); }
  int fd() const { return fd_; }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
};

// Something else listening: accepts every connection, writes `greeting` and random
// bytes into it and closes it, until destroyed.
class StrangerServer {
 public:
  explicit StrangerServer(std::string greeting)
      : socket_(/*listen=*/true), thread_([this, greeting = std::move(greeting)] {
          std::mt19937 random(7);
          while (!stop_.load()) {
            pollfd waiting{socket_.fd(), POLLIN, 0};
            if (::poll(&waiting, 1, 50) != 1) continue;
            const int connection = ::accept4(socket_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
            if (connection < 0) continue;
            std::string bytes = greeting;
            for (int i = 0; i < 300; ++i) bytes += static_cast<char>(random());
            (void)!::send(connection, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            ::close(connection);
            ++connections_;
          }
        }) {}
  ~StrangerServer() {
    stop_.store(true);
    thread_.join();
  }
  std::string endpoint() const { return socket_.endpoint(); }
  int connections() const { return connections_.load(); }

 private:
  LoopbackSocket socket_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// Waits until the process's stderr holds `text`; false past `limit`.
bool WaitForErr(const ActexProcess& process, const std::string& text, milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (process.err().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

TEST(MonitorSilence, NothingListeningIsSaidWithinSecondsAndTimeoutGivesUpSayingSo) {
  TempDir dir;
  LoopbackSocket closed(/*listen=*/false);  // bound, so no one else takes the port
  const auto started = std::chrono::steady_clock::now();
  ActexProcess monitor(dir.path() + "/monitor", {"monitor", closed.endpoint(), "--json",
                                                 "--warn-after", "0.5", "--timeout", "2.5"});
  ASSERT_TRUE(WaitForErr(monitor, "heard nothing from " + closed.endpoint(), seconds(3)))
      << monitor.err();
  EXPECT_THAT(monitor.err(), HasSubstr("nothing accepts a connection there; still waiting for "
                                       "the job's monitor publisher"));
  EXPECT_THAT(monitor.err(), HasSubstr("--coordinator PORT+1"));
  EXPECT_FALSE(monitor.Poll().has_value()) << "it keeps waiting after saying so";
  EXPECT_EQ(monitor.Wait(seconds(10)), 3) << monitor.err();
  EXPECT_GE(std::chrono::steady_clock::now() - started, milliseconds(2000));
  EXPECT_THAT(monitor.err(), HasSubstr("giving up (--timeout)"));
  EXPECT_EQ(monitor.out(), "");
}

TEST(MonitorSilence, AStrangersBytesAreNotPrintedAndAreSaidToBeNothingItUnderstands) {
  // Bytes that open like ZeroMQ's greeting and then are not, bytes that libzmq takes for
  // its old framing, and an HTTP server's answer.
  for (const std::string& greeting : {std::string("\xff\x01\x02\x03", 4), std::string("\x05"),
                                      std::string("HTTP/1.1 400 Bad Request\r\n\r\n")}) {
    TempDir dir;
    StrangerServer stranger(greeting);
    ActexProcess monitor(dir.path() + "/monitor", {"monitor", stranger.endpoint(), "--json",
                                                   "--warn-after", "0.3", "--timeout", "1.5"});
    EXPECT_TRUE(WaitForErr(monitor, "received nothing it understands from " + stranger.endpoint(),
                           seconds(3)))
        << monitor.err();
    EXPECT_EQ(monitor.Wait(seconds(10)), 3) << monitor.err();
    EXPECT_GT(stranger.connections(), 0);
    EXPECT_THAT(monitor.err(), HasSubstr("something else listens there"));
    EXPECT_EQ(monitor.out(), "") << "a stranger's bytes are never printed as events";
  }
}

TEST(MonitorSilence, APublisherWithoutEventsIsSaidToBeConnected) {
  TempDir dir;
  LoopbackSocket quiet(/*listen=*/true);  // accepts and says nothing: not ZeroMQ's greeting
  ActexProcess monitor(dir.path() + "/monitor", {"monitor", quiet.endpoint(), "--json",
                                                 "--warn-after", "0.5", "--timeout", "2"});
  EXPECT_TRUE(WaitForErr(monitor, "connected to " + quiet.endpoint() + ", but no monitor event",
                         seconds(3)))
      << monitor.err();
  EXPECT_EQ(monitor.Wait(seconds(10)), 3) << monitor.err();
}

}  // namespace
}  // namespace actex
