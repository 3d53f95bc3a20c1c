// The addresses a node is given for the job's coordinators: host 0's
// (--coordinator) and the standby's (--standby-coordinator), and the ports that
// follow a coordinator's control port.
#include "coordination/job_coordinator.h"

#include <gtest/gtest.h>

#include <string>

#include "coordination/coordinator_options.h"

namespace actex {
namespace {

TEST(ParseCoordinator, TakesHostAndPortAndReadsLocalhostAsLoopback) {
  auto address = ParseCoordinator("localhost:8476");
  ASSERT_TRUE(address) << address.error();
  EXPECT_EQ(address->host, "127.0.0.1");
  EXPECT_EQ(address->port, 8476);
  auto standby = ParseCoordinator("10.0.0.11:9000", "--standby-coordinator");
  ASSERT_TRUE(standby) << standby.error();
  EXPECT_EQ(standby->host, "10.0.0.11");
  EXPECT_EQ(standby->port, 9000);
}

struct Refusal {
  std::string text;
  std::string because;
};

class ParseCoordinatorRefuses : public testing::TestWithParam<Refusal> {};

// Each refusal names the flag it was given as, and what to give instead.
TEST_P(ParseCoordinatorRefuses, NamingTheFlag) {
  for (const std::string flag : {"--coordinator", "--standby-coordinator"}) {
    auto refused = ParseCoordinator(GetParam().text, flag);
    ASSERT_FALSE(refused) << GetParam().text;
    EXPECT_EQ(refused.error(), flag + " " + GetParam().text + ": " + GetParam().because);
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadAddresses, ParseCoordinatorRefuses,
    testing::Values(
        Refusal{"10.0.0.10", "expected HOST:PORT (e.g. 10.0.0.10:8476)"},
        Refusal{":8476", "expected HOST:PORT (e.g. 10.0.0.10:8476)"},
        Refusal{"0.0.0.0:8476",
                "name the address that the other hosts reach (e.g. 10.0.0.10:8476), not a "
                "wildcard"},
        Refusal{"10.0.0.10:65534",
                "the port must be a number from 1 to 65533 (the next two ports carry monitor "
                "events)"},
        Refusal{"10.0.0.10:84x6",
                "the port must be a number from 1 to 65533 (the next two ports carry monitor "
                "events)"}));

// Whoever knows where a coordinator's control socket is knows where its monitors
// attach and its nodes publish.
TEST(CoordinatorPortEndpoint, NamesThePortsAfterTheControlPort) {
  EXPECT_EQ(CoordinatorPortEndpoint("tcp://10.0.0.11:9000", kMonitorPortOffset),
            "tcp://10.0.0.11:9001");
  EXPECT_EQ(CoordinatorPortEndpoint("tcp://[::1]:9000", kEventsPortOffset), "tcp://[::1]:9002");
  EXPECT_EQ(TcpEndpointPort("tcp://127.0.0.1:65535"), 65535);
  for (const std::string bad : {"", "tcp://10.0.0.11", "ipc:///tmp/x:9000", "tcp://h:9x",
                                "tcp://h:", "tcp://h:123456", "tcp://10.0.0.11:65534"}) {
    EXPECT_EQ(CoordinatorPortEndpoint(bad, kEventsPortOffset), "") << bad;
  }
}

}  // namespace
}  // namespace actex
