// The coordinator of a job with a key (PROTOCOL.md section 10): only holders of the
// job key get through, and a node with another key learns why nobody answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "tests/coordination/coordinator_test_util.h"
#include "tests/transport/job_key_test_util.h"
#include "transport/wire.h"

namespace actex {
namespace {

using job_key_test::Dealer;
using job_key_test::KeyDir;
using job_key_test::NewKey;
using job_key_test::StartAuthenticator;
using coordinator_test::ClientOptionsFor;
using coordinator_test::FastOptions;
using coordinator_test::ForEachClient;
using coordinator_test::JoinAll;
using coordinator_test::JoinResult;
using coordinator_test::MakeHello;
using coordinator_test::WaitUntil;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(JobSecurity, CoordinatorWithKeyAdmitsOnlyHoldersOfTheKey) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  auto stranger_key = NewKey(dir, "stranger.key");
  zmq::context_t context;
  auto authenticator = StartAuthenticator(*security, context);
  CoordinatorOptions options = FastOptions(2);
  options.security = security;
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();
  CoordinatorCounters& counters = *options.counters;

  // Strangers claim host 1, which would spoil the rendezvous if they got through.
  zmq::context_t strangers;
  zmq::socket_t no_key = Dealer(strangers);
  no_key.connect("tcp://127.0.0.1:" + std::to_string(options.port));
  zmq::socket_t wrong_key = Dealer(strangers);
  ASSERT_TRUE(stranger_key->ApplyClient(wrong_key).has_value());
  wrong_key.connect("tcp://127.0.0.1:" + std::to_string(options.port));
  no_key.set(zmq::sockopt::sndtimeo, 0);
  wrong_key.set(zmq::sockopt::sndtimeo, 0);
  (void)Send(no_key, MakeHello(1, 2));
  (void)Send(wrong_key, MakeHello(1, 2));
  EXPECT_TRUE(WaitUntil([&] { return counters.refused_connections >= 2; }))
      << counters.refused_connections;
  EXPECT_EQ(counters.malformed_messages + counters.unexpected_messages, 0u);

  CoordinatorClientOptions client_options = ClientOptionsFor(options);
  client_options.security = security;
  std::vector<JoinResult> clients =
      JoinAll(context, client_options, {MakeHello(0, 2), MakeHello(1, 2)});
  for (const JoinResult& client : clients) ASSERT_TRUE(client.has_value()) << client.error();
  EXPECT_EQ(counters.joined_hosts, 2);
  auto done = ForEachClient(clients, [](CoordinatorClient& client, size_t) {
    return client.Barrier(kFinalBarrierName, 5s);
  });
  for (const auto& result : done) EXPECT_TRUE(result.has_value()) << result.error();
  auto finished = (*coordinator)->Join();
  EXPECT_TRUE(finished.has_value()) << finished.error();
}

TEST(JobSecurity, NodeWithAnotherKeyLearnsWhyTheCoordinatorNeverAnswers) {
  KeyDir dir;
  auto security = NewKey(dir, "job.key");
  auto stranger_key = NewKey(dir, "stranger.key");
  zmq::context_t context;
  auto authenticator = StartAuthenticator(*security, context);
  CoordinatorOptions options = FastOptions(1);
  options.security = security;
  auto coordinator = StartCoordinator(context, options);
  ASSERT_TRUE(coordinator.has_value()) << coordinator.error();

  zmq::context_t stranger_context;
  CoordinatorClientOptions client_options = ClientOptionsFor(options);
  client_options.security = stranger_key;
  client_options.join_timeout = 1500ms;
  client_options.join_margin = 0ms;
  auto joined = CoordinatorClient::Join(stranger_context, client_options, MakeHello(0, 1));
  ASSERT_FALSE(joined.has_value());
  EXPECT_THAT(joined.error(), HasSubstr("no answer from the coordinator"));
  EXPECT_THAT(joined.error(), HasSubstr("--job-key-file"));
  EXPECT_EQ(options.counters->joined_hosts, 0);
  EXPECT_GE(options.counters->refused_connections, 1u);
}

}  // namespace
}  // namespace actex
