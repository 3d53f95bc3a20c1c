// Who may join: with a job key every tcp socket runs CURVE, so only holders of the
// key connect, and the coordinator and rings work as before for them.
#include "transport/job_security.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/transport/job_key_test_util.h"
#include "tests/transport/ring_test_util.h"
#include "tests/transport/wait_until.h"
#include "transport/connection_watch.h"
#include "transport/ring_all_reduce.h"
#include "transport/wire.h"

namespace actex {
namespace {

using job_key_test::Dealer;
using job_key_test::KeyDir;
using job_key_test::NewKey;
using job_key_test::StartAuthenticator;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A ROUTER bound on 127.0.0.1 (port picked by the system) with the job's server key.
struct Server {
  zmq::socket_t socket;
  std::string endpoint;
  std::unique_ptr<ConnectionWatch> watch;
  int failed_handshakes = 0;

  Server(zmq::context_t& context, const JobSecurity& security)
      : socket(context, zmq::socket_type::router) {
    socket.set(zmq::sockopt::linger, 0);
    EXPECT_TRUE(security.ApplyServer(socket).has_value());
    socket.bind("tcp://127.0.0.1:*");
    endpoint = socket.get(zmq::sockopt::last_endpoint);
    watch = std::move(ConnectionWatch::Create(context, socket).value());
  }
  ~Server() { watch.reset(); }

  // The payload of the next message within `wait`, or "" when none came.
  std::string Next(std::chrono::milliseconds wait) {
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, wait) == 0) return "";
    zmq::message_t identity, payload;
    EXPECT_TRUE(socket.recv(identity).has_value());
    EXPECT_TRUE(socket.recv(payload).has_value());
    return payload.to_string();
  }
  void CountEvents() {
    for (const ConnectionEvent& event : watch->Drain()) {
      if (event.kind == ConnectionEvent::Kind::kHandshakeFailed) ++failed_handshakes;
    }
  }
};

TEST(JobKeyFile, NewKeyIsPrivateOneLineOfHexAndLoads) {
  KeyDir dir;
  const std::string path = dir.File("job.key");
  ASSERT_TRUE(JobSecurity::WriteNewKeyFile(path).has_value());
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  std::ifstream file(path);
  std::string line, rest;
  std::getline(file, line);
  std::getline(file, rest);
  EXPECT_EQ(line.size(), 64u);
  EXPECT_EQ(line.find_first_not_of("0123456789abcdef"), std::string::npos) << line;
  EXPECT_TRUE(rest.empty());

  auto first = JobSecurity::FromKeyFile(path);
  auto again = JobSecurity::FromKeyFile(path);
  ASSERT_TRUE(first.has_value()) << first.error();
  ASSERT_TRUE(again.has_value()) << again.error();
  EXPECT_EQ((*first)->key_id().size(), 16u);
  EXPECT_EQ((*first)->key_id(), (*again)->key_id());
  EXPECT_EQ((*first)->source(), path);
  // The id names the key without being any part of it.
  EXPECT_EQ(line.find((*first)->key_id()), std::string::npos);
  auto other = NewKey(dir, "other.key");
  ASSERT_TRUE(other);
  EXPECT_NE(other->key_id(), (*first)->key_id());
}

TEST(JobKeyFile, NeverReplacesAnExistingFile) {
  KeyDir dir;
  const std::string path = dir.Write("job.key", "precious\n");
  auto written = JobSecurity::WriteNewKeyFile(path);
  ASSERT_FALSE(written.has_value());
  EXPECT_THAT(written.error(), HasSubstr(path + " already exists"));
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  EXPECT_EQ(line, "precious");
}

TEST(JobKeyFile, RefusesFilesThatHoldNoKeyNamingTheFile) {
  KeyDir dir;
  const std::string hex64(64, 'a');
  struct Case {
    std::string path, error;
  };
  const std::vector<Case> cases = {
      {dir.File("missing.key"), "No such file or directory"},
      {dir.Write("empty.key", ""), "is empty"},
      {dir.Write("blank.key", " \n\n"), "is empty"},
      {dir.Write("short.key", hex64.substr(0, 40) + "\n"), "holds 40 characters"},
      {dir.Write("long.key", hex64 + "00\n"), "holds 66 characters"},
      {dir.Write("two-lines.key", hex64.substr(0, 32) + "\n" + hex64.substr(0, 31) + "\n"),
       "is not a hexadecimal digit"},
      {dir.Write("not-hex.key", hex64.substr(0, 10) + "g" + hex64.substr(0, 53)),
       "character 11 is not a hexadecimal digit"},
      {dir.Write("zero.key", std::string(64, '0') + "\n"), "all zeros"},
      {dir.Write("shared.key", hex64 + "\n", 0644), "chmod 600"},
      {dir.Write("writable.key", hex64 + "\n", 0602), "readable or writable by every user"},
  };
  for (const Case& bad : cases) {
    auto security = JobSecurity::FromKeyFile(bad.path);
    ASSERT_FALSE(security.has_value()) << bad.path;
    EXPECT_THAT(security.error(), HasSubstr(bad.path));
    EXPECT_THAT(security.error(), HasSubstr(bad.error));
  }
  // Surrounding whitespace and upper case are fine; the group may read (a warning).
  EXPECT_TRUE(JobSecurity::FromKeyFile(dir.Write("ok.key", "  " + std::string(64, 'F') + "\r\n"))
                  .has_value());
  EXPECT_TRUE(JobSecurity::FromKeyFile(dir.Write("group.key", hex64, 0640)).has_value());
}

TEST(JobSecurity, OneAuthenticatorPerContext) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  zmq::context_t context;
  auto first = StartAuthenticator(*security, context);
  ASSERT_TRUE(first);
  auto second = security->StartAuthenticator(context);
  ASSERT_FALSE(second.has_value());
  EXPECT_THAT(second.error(), HasSubstr("authenticator"));
}

TEST(JobSecurityOverTcp, ClientWithTheKeyTalksBothWays) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  zmq::context_t context;
  auto authenticator = StartAuthenticator(*security, context);
  Server server(context, *security);
  zmq::socket_t client = Dealer(context);
  ASSERT_TRUE(security->ApplyClient(client).has_value());
  client.connect(server.endpoint);
  client.send(zmq::str_buffer("hello"));
  zmq::pollitem_t item{server.socket.handle(), 0, ZMQ_POLLIN, 0};
  ASSERT_EQ(zmq::poll(&item, 1, 5s), 1);
  zmq::message_t identity, payload;
  ASSERT_TRUE(server.socket.recv(identity).has_value());
  ASSERT_TRUE(server.socket.recv(payload).has_value());
  EXPECT_EQ(payload.to_string(), "hello");
  server.socket.send(identity, zmq::send_flags::sndmore);
  server.socket.send(zmq::str_buffer("welcome"));
  zmq::message_t answer;
  client.set(zmq::sockopt::rcvtimeo, 5000);
  ASSERT_TRUE(client.recv(answer).has_value());
  EXPECT_EQ(answer.to_string(), "welcome");
  EXPECT_EQ(security->counters().accepted, 1u);
  EXPECT_EQ(security->counters().refused, 0u);
}

TEST(JobSecurityOverTcp, ClientWithAnotherKeyOrNoKeyDeliversNothing) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  auto stranger_key = NewKey(dir, "stranger.key");
  zmq::context_t context;
  auto authenticator = StartAuthenticator(*security, context);
  Server server(context, *security);
  // The strangers live in a context of their own, as in another process.
  zmq::context_t strangers;
  zmq::socket_t wrong_key = Dealer(strangers);
  ASSERT_TRUE(stranger_key->ApplyClient(wrong_key).has_value());
  wrong_key.connect(server.endpoint);
  zmq::socket_t no_key = Dealer(strangers);
  no_key.connect(server.endpoint);
  wrong_key.send(zmq::str_buffer("let me in"), zmq::send_flags::dontwait);
  no_key.send(zmq::str_buffer("let me in"), zmq::send_flags::dontwait);

  EXPECT_EQ(server.Next(1500ms), "");
  EXPECT_TRUE(WaitUntil([&] {
    server.CountEvents();
    return server.failed_handshakes >= 2;
  })) << server.failed_handshakes;
  // Neither got as far as the authenticator: the handshake failed before.
  EXPECT_EQ(security->counters().accepted, 0u);
}

TEST(JobSecurityOverTcp, ClientThatLearnedOnlyTheServerKeyIsRefusedByTheAuthenticator) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  zmq::context_t context;
  auto authenticator = StartAuthenticator(*security, context);
  Server server(context, *security);
  char public_key[41], secret_key[41];
  ASSERT_EQ(zmq_curve_keypair(public_key, secret_key), 0);
  zmq::context_t strangers;
  zmq::socket_t impostor = Dealer(strangers);
  const auto server_key = security->server_public_key();
  impostor.set(zmq::sockopt::curve_serverkey, zmq::const_buffer(server_key.data(), 32));
  impostor.set(zmq::sockopt::curve_publickey, std::string_view(public_key, 40));
  impostor.set(zmq::sockopt::curve_secretkey, std::string_view(secret_key, 40));
  impostor.connect(server.endpoint);
  impostor.send(zmq::str_buffer("let me in"), zmq::send_flags::dontwait);

  EXPECT_TRUE(WaitUntil([&] { return security->counters().refused >= 1; }));
  EXPECT_EQ(server.Next(500ms), "");
  EXPECT_EQ(security->counters().accepted, 0u);
}

TEST(JobSecurityOverTcp, RingOverTcpWithKeyAllReducesExactly) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  zmq::context_t context;
  auto authenticator = StartAuthenticator(*security, context);
  const int size = 3;
  const size_t length = 100000;
  auto ring =
      ring_test::MakeRing(context, "keyed", size, ring_test::LinkKind::kTcp, 10000ms, security);
  ASSERT_EQ(ring.size(), size_t{size});
  std::vector<std::vector<float>> data(size, std::vector<float>(length));
  std::vector<float> expected(length, 0.f);
  for (int rank = 0; rank < size; ++rank) {
    for (size_t i = 0; i < length; ++i) {
      data[rank][i] = static_cast<float>((i * 7 + rank * 13) % 1000);
      expected[i] += data[rank][i];
    }
  }
  auto results =
      ring_test::RunMembers(size, [&](int rank) { return RingAllReduce(*ring[rank], data[rank]); });
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_TRUE(results[rank].has_value()) << results[rank].error();
    EXPECT_EQ(data[rank], expected) << "rank " << rank;
  }
  EXPECT_GE(security->counters().accepted, size_t{size});
  EXPECT_EQ(security->counters().refused, 0u);
}

TEST(JobSecurityOverTcp, RingMemberWithAnotherKeyNeverGetsAChunkAccepted) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  auto stranger_key = NewKey(dir, "stranger.key");
  zmq::context_t context;
  auto authenticator = StartAuthenticator(*security, context);
  auto ring =
      ring_test::MakeRing(context, "keyed", 2, ring_test::LinkKind::kTcp, 10000ms, security);
  ASSERT_EQ(ring.size(), 2u);

  // An impostor of rank 0 with another key, pushing the very chunks rank 1 awaits
  // (op 1, every step and chunk) filled with poison, before and during the reduce.
  zmq::context_t stranger_context;
  auto authenticator_of_stranger = StartAuthenticator(*stranger_key, stranger_context);
  RingOptions impostor_options;
  impostor_options.ring = "keyed";
  impostor_options.rank = 0;
  impostor_options.endpoints = {"tcp://127.0.0.1:*", ring[1]->bound_endpoint()};
  impostor_options.security = stranger_key;
  impostor_options.linger = 0ms;
  auto impostor = RingLinks::Bind(stranger_context, impostor_options);
  ASSERT_TRUE(impostor.has_value()) << impostor.error();
  ASSERT_TRUE((*impostor)->ConnectToNext(ring[1]->bound_endpoint()).has_value());
  const std::vector<float> poison(4, 1e30f);
  for (int chunk = 0; chunk < 2; ++chunk) {
    for (int step = 0; step < 2; ++step) {
      ASSERT_TRUE((*impostor)->SendToNext(1, step, chunk, poison).has_value());
    }
  }

  std::vector<std::vector<float>> data = {{1, 2, 3, 4, 5, 6, 7, 8},
                                          {10, 20, 30, 40, 50, 60, 70, 80}};
  auto results =
      ring_test::RunMembers(2, [&](int rank) { return RingAllReduce(*ring[rank], data[rank]); });
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(results[rank].has_value()) << results[rank].error();
    EXPECT_EQ(data[rank], (std::vector<float>{11, 22, 33, 44, 55, 66, 77, 88})) << "rank " << rank;
  }
  EXPECT_TRUE(WaitUntil([&] { return ring[1]->refused_connections() >= 1; }));
  EXPECT_EQ(ring[1]->dropped_chunks(), 0u);  // nothing of the impostor ever arrived
}

}  // namespace
}  // namespace actex
