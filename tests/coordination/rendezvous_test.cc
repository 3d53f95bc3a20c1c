#include "coordination/rendezvous.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/coordination/coordinator_test_util.h"

namespace actex {
namespace {

using coordinator_test::MakeHello;

TEST(Rendezvous, MergesEndpointsAndRefusesANamePublishedTwice) {
  Rendezvous rendezvous(3);
  HelloMessage first = MakeHello(0, 3);
  first.endpoints["monitor/host0"] = "tcp://10.0.0.10:5000";
  ASSERT_TRUE(rendezvous.Admit(first, "10.0.0.10:1").has_value());
  HelloMessage clash = MakeHello(1, 3);
  clash.endpoints["monitor/host0"] = "tcp://10.0.0.11:5000";
  auto refused = rendezvous.Admit(clash, "10.0.0.11:1");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(),
            "host 1: endpoint 'monitor/host0' is also published by host 0 (tcp://10.0.0.10:5000 "
            "there, tcp://10.0.0.11:5000 here)");
  // A refused Hello leaves the book as it was: the same host may still join.
  EXPECT_EQ(rendezvous.joined(), 1);
  EXPECT_FALSE(rendezvous.has_joined(1));
  EXPECT_EQ(rendezvous.endpoints().size(), 2u);
  ASSERT_TRUE(rendezvous.Admit(MakeHello(1, 3), "10.0.0.11:2").has_value());
  EXPECT_EQ(rendezvous.endpoints().at("ring/replica0/rank1"), "tcp://127.0.0.1:40001");
  EXPECT_FALSE(rendezvous.complete());
  EXPECT_EQ(rendezvous.MissingHostsReason(std::chrono::milliseconds(300000)),
            "host 2 never joined within 300 s");
  ASSERT_TRUE(rendezvous.Admit(MakeHello(2, 3), "10.0.0.12:1").has_value());
  EXPECT_TRUE(rendezvous.complete());
  EXPECT_EQ(rendezvous.endpoints().size(), 4u);
}

TEST(Rendezvous, AWildcardRingEndpointIsPublishedWithTheAddressTheNodeCameFrom) {
  Rendezvous rendezvous(3);
  HelloMessage v4 = MakeHello(0, 3);
  v4.endpoints = {{"ring/replica0/rank0", "tcp://0.0.0.0:40000"}};
  ASSERT_TRUE(rendezvous.Admit(v4, "10.0.0.10:51234").has_value());
  HelloMessage v6 = MakeHello(1, 3);
  v6.endpoints = {{"ring/replica0/rank1", "tcp://[::]:40001"}};
  ASSERT_TRUE(rendezvous.Admit(v6, "[fd00::11]:51235").has_value());
  HelloMessage named = MakeHello(2, 3);
  named.endpoints = {{"ring/replica0/rank2", "tcp://10.0.0.12:40002"}};
  ASSERT_TRUE(rendezvous.Admit(named, "10.0.0.99:51236").has_value());
  EXPECT_EQ(rendezvous.endpoints().at("ring/replica0/rank0"), "tcp://10.0.0.10:40000");
  EXPECT_EQ(rendezvous.endpoints().at("ring/replica0/rank1"), "tcp://[fd00::11]:40001");
  EXPECT_EQ(rendezvous.endpoints().at("ring/replica0/rank2"), "tcp://10.0.0.12:40002")
      << "a named address is published as it is";
}

TEST(Rendezvous, AWildcardEndpointFromAnUnknownAddressIsRefusedNamingTheFix) {
  Rendezvous rendezvous(2);
  HelloMessage hello = MakeHello(1, 2);
  hello.endpoints = {{"ring/replica0/rank1", "tcp://0.0.0.0:40001"}};
  auto refused = rendezvous.Admit(hello, "an unknown address");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().find("--bind"), std::string::npos) << refused.error();
  EXPECT_EQ(rendezvous.joined(), 0);
}

// A standby that took the job over replays host 0's book: the same endpoints (a
// wildcard one resolved from the same address), and nodes that come later checked
// against host 0's Hello, as host 0 would.
TEST(Rendezvous, ReplayedOnAStandbyChecksLaterNodesAsHost0Would) {
  Rendezvous host0(3, 4);
  for (int id = 0; id < 3; ++id) {
    HelloMessage hello = MakeHello(id, 3);
    if (id == 2) hello.endpoints = {{"ring/replica0/rank2", "tcp://0.0.0.0:40002"}};
    ASSERT_TRUE(host0.Admit(hello, "10.0.0.1" + std::to_string(id) + ":1").has_value());
  }
  auto replayed = Rendezvous::Replay(3, 4, host0.Admitted());
  ASSERT_TRUE(replayed) << replayed.error();
  EXPECT_TRUE(replayed->complete());
  EXPECT_EQ(replayed->endpoints(), host0.endpoints());
  EXPECT_EQ(replayed->endpoints().at("ring/replica0/rank2"), "tcp://10.0.0.12:40002");
  EXPECT_TRUE(replayed->CheckReturning(MakeHello(0, 3), "10.0.0.20:1").has_value());
  EXPECT_TRUE(replayed->CheckReturning(MakeHello(3, 3), "10.0.0.23:1").has_value());  // added
  HelloMessage other = MakeHello(1, 3);
  other.fingerprint["--layers"] = "7";
  auto refused = replayed->CheckReturning(other, "10.0.0.21:1");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(), "host 1: --layers differs: host 0 has 20,21 but host 1 has 7");
}

// The hosts of a replica coming back together publish new ring ports: those replace
// what the same hosts published; a name of another host's is still refused.
TEST(Rendezvous, RebindReplacesWhatTheSameHostPublished) {
  Rendezvous rendezvous(2);
  ASSERT_TRUE(rendezvous.Admit(MakeHello(0, 2), "10.0.0.10:1").has_value());
  HelloMessage first = MakeHello(1, 2);
  first.endpoints["resume/1"] = "{}";
  ASSERT_TRUE(rendezvous.Admit(first, "10.0.0.11:1").has_value());
  HelloMessage again = MakeHello(1, 2);
  again.endpoints = {{"ring/replica0/rank1", "tcp://0.0.0.0:41001"}};
  ASSERT_TRUE(rendezvous.Rebind(again, "10.0.0.21:7").has_value());
  EXPECT_EQ(rendezvous.endpoints().at("ring/replica0/rank1"), "tcp://10.0.0.21:41001");
  EXPECT_FALSE(rendezvous.endpoints().contains("resume/1"));
  EXPECT_EQ(rendezvous.endpoints().at("ring/replica0/rank0"), "tcp://127.0.0.1:40000");
  HelloMessage clash = MakeHello(1, 2);
  clash.endpoints = {{"ring/replica0/rank0", "tcp://10.0.0.21:41000"}};
  auto refused = rendezvous.Rebind(clash, "10.0.0.21:8");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error(),
            "host 1: endpoint 'ring/replica0/rank0' is also published by host 0 "
            "(tcp://127.0.0.1:40000 there, tcp://10.0.0.21:41000 here)");
  EXPECT_EQ(rendezvous.endpoints().at("ring/replica0/rank1"), "tcp://10.0.0.21:41001");
}

TEST(Rendezvous, DurationsReadAsSeconds) {
  EXPECT_EQ(SecondsText(std::chrono::milliseconds(300000)), "300 s");
  EXPECT_EQ(SecondsText(std::chrono::milliseconds(1500)), "1.5 s");
  EXPECT_EQ(SecondsText(std::chrono::milliseconds(300)), "0.3 s");
}

}  // namespace
}  // namespace actex
