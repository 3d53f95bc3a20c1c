// `actex monitor` as a user runs it: a real process subscribed to a publisher this
// test binds, printing JSON lines and exiting with the documented codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <zmq.hpp>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"
#include "transport/wire.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

// `actex monitor ARGS...` running in the background.
class MonitorProcess : public ActexProcess {
 public:
  MonitorProcess(const TempDir& dir, std::vector<std::string> args)
      : ActexProcess(dir.path() + "/monitor", WithCommand(std::move(args))) {}

 private:
  static std::vector<std::string> WithCommand(std::vector<std::string> args) {
    args.insert(args.begin(), "monitor");
    return args;
  }
};

// What a coordinator looks like to the monitor: an XPUB, which (unlike a PUB) tells
// this test when the monitor's subscription arrived, so no event is lost to the
// subscriber joining late.
class Publisher {
 public:
  Publisher() : socket_(context_, zmq::socket_type::xpub) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  }
  const std::string& endpoint() const { return endpoint_; }
  zmq::socket_t& socket() { return socket_; }

  bool WaitForSubscriber() {
    zmq::message_t subscription;
    socket_.set(zmq::sockopt::rcvtimeo, 10000);
    return socket_.recv(subscription).has_value() && subscription.size() >= 1 &&
           subscription.data<uint8_t>()[0] == 1;
  }
  void Publish(const std::string& kind, int32_t host, const std::string& message = "") {
    MonitorEventMessage event;
    event.kind = kind;
    event.host_id = host;
    event.unix_seconds = 1700000000 + host;
    event.docs_done = kind == "finished" ? 10 : 4;
    event.docs_total = 10;
    event.tokens_done = event.docs_done * 50;
    event.docs_computed = event.docs_done + 1;  // one more in the shard being filled
    event.tokens_computed = event.docs_computed * 50;
    event.message = message;
    event.num_hosts = 2;  // every test here plays a job of two hosts
    ASSERT_TRUE(Send(socket_, event).has_value());
  }

 private:
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::string endpoint_;
};

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    lines.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
  }
  return lines;
}

TEST(MonitorCommand, PrintsEveryEventAndExitsWhenAllHostsFinishedSkippingGarbage) {
  TempDir dir;
  Publisher publisher;
  MonitorProcess monitor(
      dir, {publisher.endpoint(), "--json", "--exit-when-finished", "--timeout", "10"});
  ASSERT_TRUE(publisher.WaitForSubscriber()) << monitor.err();
  publisher.Publish("progress", 0);
  publisher.Publish("progress", 1);
  publisher.socket().send(zmq::str_buffer("not a wire message"));
  publisher.socket().send(zmq::str_buffer("\xc1"), zmq::send_flags::sndmore);
  publisher.socket().send(zmq::str_buffer("\xc1"));
  ASSERT_TRUE(Send(publisher.socket(), EndOfStreamMessage{}).has_value());  // not an event
  publisher.Publish("warning", 1, "slow disk");
  publisher.Publish("finished", 0);
  publisher.Publish("finished", 1);
  ASSERT_EQ(monitor.Wait(std::chrono::seconds(15)), 0) << monitor.err();

  const std::vector<nlohmann::json> lines = JsonLines(monitor.out());
  ASSERT_EQ(lines.size(), 5u) << monitor.out();
  const std::vector<std::pair<std::string, int>> expected = {
      {"progress", 0}, {"progress", 1}, {"warning", 1}, {"finished", 0}, {"finished", 1}};
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_TRUE(lines[i].is_object()) << "line " << i << " is not JSON: " << monitor.out();
    EXPECT_EQ(lines[i]["kind"], expected[i].first);
    EXPECT_EQ(lines[i]["host_id"], expected[i].second);
    EXPECT_EQ(lines[i]["docs_total"], 10);
    EXPECT_EQ(lines[i].size(), 16u) << "every field of the event: " << lines[i];
  }
  EXPECT_EQ(lines[2]["message"], "slow disk");
  EXPECT_EQ(lines[4]["docs_done"], 10);
  EXPECT_EQ(lines[4]["tokens_done"], 500);
  EXPECT_EQ(lines[4]["docs_computed"], 11);
  EXPECT_EQ(lines[4]["tokens_computed"], 550);
  EXPECT_THAT(monitor.err(), HasSubstr("skipped 3 message(s)"));
}

// Two endpoints given (host 0's and the standby's relays, each relaying every node's
// events): each event is printed once, whichever relay brought it first.
TEST(MonitorCommand, SeveralEndpointsPrintEachEventOnce) {
  TempDir dir;
  Publisher host0, standby;
  // Without --exit-when-finished: one relay's "finished" events could end it before the
  // other's arrive. It leaves after a second of silence (exit 3).
  MonitorProcess monitor(dir, {host0.endpoint(), standby.endpoint(), "--json", "--timeout", "1"});
  ASSERT_TRUE(host0.WaitForSubscriber()) << monitor.err();
  ASSERT_TRUE(standby.WaitForSubscriber()) << monitor.err();
  for (Publisher* relay : {&host0, &standby}) relay->Publish("progress", 0);
  standby.Publish("progress", 1);  // host 0's relay missed it
  for (Publisher* relay : {&standby, &host0}) relay->Publish("finished", 0);
  for (Publisher* relay : {&host0, &standby}) relay->Publish("finished", 1);
  ASSERT_EQ(monitor.Wait(std::chrono::seconds(15)), 3) << monitor.err();
  std::vector<std::pair<std::string, int>> printed;
  for (const nlohmann::json& line : JsonLines(monitor.out())) {
    printed.emplace_back(line["kind"], line["host_id"]);
  }
  std::sort(printed.begin(), printed.end());  // the relays' order between them is any
  EXPECT_EQ(printed, (std::vector<std::pair<std::string, int>>{
                         {"finished", 0}, {"finished", 1}, {"progress", 0}, {"progress", 1}}))
      << monitor.out();
}

TEST(MonitorCommand, ExitWhenFinishedWaitsForAHostThatSentNothingYet) {
  TempDir dir;
  Publisher publisher;
  MonitorProcess monitor(
      dir, {publisher.endpoint(), "--json", "--exit-when-finished", "--timeout", "10"});
  ASSERT_TRUE(publisher.WaitForSubscriber()) << monitor.err();
  publisher.Publish("finished", 0);  // host 1 of the two is slow: no event from it yet
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(monitor.Poll().has_value()) << "left with host 1 unseen: " << monitor.err();
  publisher.Publish("finished", 1);
  ASSERT_EQ(monitor.Wait(std::chrono::seconds(15)), 0) << monitor.err();
  EXPECT_EQ(JsonLines(monitor.out()).size(), 2u) << monitor.out();
}

TEST(MonitorCommand, ErrorEventExitsOneAndPipedOutputIsJsonWithoutTheFlag) {
  TempDir dir;
  Publisher publisher;
  MonitorProcess monitor(dir, {publisher.endpoint(), "--exit-when-finished", "--timeout", "10"});
  ASSERT_TRUE(publisher.WaitForSubscriber()) << monitor.err();
  publisher.Publish("progress", 0);
  publisher.Publish("error", 0, "disk full");
  EXPECT_EQ(monitor.Wait(std::chrono::seconds(15)), 1);
  const std::vector<nlohmann::json> lines = JsonLines(monitor.out());
  ASSERT_EQ(lines.size(), 2u) << monitor.out();
  EXPECT_EQ(lines[1]["kind"], "error");
  EXPECT_THAT(monitor.err(), HasSubstr("disk full"));
}

TEST(MonitorCommand, SilenceLongerThanTimeoutExitsThree) {
  TempDir dir;
  Publisher publisher;
  MonitorProcess monitor(dir, {publisher.endpoint(), "--timeout", "0.5"});
  EXPECT_EQ(monitor.Wait(std::chrono::seconds(10)), 3);
  EXPECT_THAT(monitor.err(), HasSubstr("no monitor event"));
}

TEST(MonitorCommand, CtrlCLeavesCleanly) {
  TempDir dir;
  Publisher publisher;
  MonitorProcess monitor(dir, {publisher.endpoint(), "--json"});
  ASSERT_TRUE(publisher.WaitForSubscriber()) << monitor.err();
  monitor.Signal(SIGINT);
  EXPECT_EQ(monitor.Wait(std::chrono::seconds(10)), 0) << monitor.err();
}

TEST(MonitorCommand, EndpointThatIsNotTcpOrIpcIsRefused) {
  TempDir dir;
  MonitorProcess monitor(dir, {"http://10.0.0.10:8477"});
  EXPECT_NE(monitor.Wait(std::chrono::seconds(10)), 0);
  EXPECT_THAT(monitor.err(), HasSubstr("expected tcp://HOST:PORT or ipc://PATH"));
}

}  // namespace
}  // namespace actex
