// Names in tcp endpoints are looked up once, when a socket connects, so that libzmq never
// looks them up again on its I/O thread (transport/numeric_endpoint.h).

#include "transport/numeric_endpoint.h"

#include <gtest/gtest.h>

namespace actex {
namespace {

TEST(NumericEndpoint, ANameBecomesItsAddress) {
  EXPECT_EQ(NumericEndpoint("tcp://localhost:5555"), "tcp://127.0.0.1:5555");
}

TEST(NumericEndpoint, WhatNeedsNoLookupIsReturnedAsGiven) {
  for (const char* endpoint : {"tcp://10.1.2.3:7000", "tcp://*:7000", "tcp://[::1]:7000",
                               "inproc://ring-0", "ipc:///tmp/socket", "tcp://no-port"}) {
    EXPECT_EQ(NumericEndpoint(endpoint), endpoint);
  }
}

}  // namespace
}  // namespace actex
