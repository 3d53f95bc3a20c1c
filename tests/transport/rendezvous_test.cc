#include "transport/rendezvous.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/transport/coordinator_test_util.h"

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

TEST(Rendezvous, DurationsReadAsSeconds) {
  EXPECT_EQ(SecondsText(std::chrono::milliseconds(300000)), "300 s");
  EXPECT_EQ(SecondsText(std::chrono::milliseconds(1500)), "1.5 s");
  EXPECT_EQ(SecondsText(std::chrono::milliseconds(300)), "0.3 s");
}

}  // namespace
}  // namespace actex
