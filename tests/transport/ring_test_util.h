#ifndef ACTEX_TESTS_TRANSPORT_RING_TEST_UTIL_H_
#define ACTEX_TESTS_TRANSPORT_RING_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <expected>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "tests/transport/free_tcp_port.h"
#include "transport/ring_links.h"

namespace actex::ring_test {

// How the members of a test ring reach each other.
enum class LinkKind {
  kInproc,  // every hop inproc
  kTcp,     // every hop tcp on 127.0.0.1, ports picked by the system
  kMixed,   // even ranks bind tcp, odd ranks inproc: some hops of each kind
};

// Every kind with a tcp hop ends in "tcp": a case whose parameter name ends in "_tcp"
// is labeled `process` (tests/README.md).
inline const char* LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kInproc:
      return "inproc";
    case LinkKind::kTcp:
      return "tcp";
    case LinkKind::kMixed:
      return "inproc_and_tcp";
  }
  return "?";
}

// Lets gtest print a parameter by name.
inline void PrintTo(LinkKind kind, std::ostream* out) { *out << LinkKindName(kind); }

// Test parameters: every ring size from 1 to 4 with every kind of link.
using SizeAndLinkKind = std::tuple<int, LinkKind>;

inline auto SizesAndLinkKinds() {
  return ::testing::Combine(::testing::Values(1, 2, 3, 4),
                            ::testing::Values(LinkKind::kInproc, LinkKind::kTcp, LinkKind::kMixed));
}

inline std::string SizeAndLinkKindName(const ::testing::TestParamInfo<SizeAndLinkKind>& info) {
  return "size" + std::to_string(std::get<0>(info.param)) + "_" +
         LinkKindName(std::get<1>(info.param));
}

// Builds the links of every member of a ring of `size` in one context, binding
// first and then connecting each member to its successor's actual endpoint. With
// `security`, tcp links use the job key (the context's authenticator must run).
inline std::vector<std::unique_ptr<RingLinks>> MakeRing(
    zmq::context_t& context, const std::string& name, int size, LinkKind kind,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(10000),
    std::shared_ptr<const JobSecurity> security = nullptr) {
  std::vector<std::unique_ptr<RingLinks>> links;
  RingOptions options;
  options.ring = name;
  options.timeout = timeout;
  options.security = std::move(security);
  for (int rank = 0; rank < size; ++rank) {
    const bool tcp = kind == LinkKind::kTcp || (kind == LinkKind::kMixed && rank % 2 == 0);
    options.endpoints.push_back(tcp ? "tcp://127.0.0.1:*"
                                    : "inproc://ring-test/" + name + "/" + std::to_string(rank));
  }
  for (int rank = 0; rank < size; ++rank) {
    options.rank = rank;
    auto bound = RingLinks::Bind(context, options);
    EXPECT_TRUE(bound.has_value()) << bound.error();
    if (!bound) return {};
    links.push_back(std::move(*bound));
  }
  for (int rank = 0; rank < size; ++rank) {
    auto connected = links[rank]->ConnectToNext(links[(rank + 1) % size]->bound_endpoint());
    EXPECT_TRUE(connected.has_value()) << connected.error();
    if (!connected) return {};
  }
  return links;
}

// Runs body(rank) on one thread per member and returns each member's result.
inline std::vector<std::expected<void, std::string>> RunMembers(
    int size, const std::function<std::expected<void, std::string>(int rank)>& body) {
  std::vector<std::expected<void, std::string>> results(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] { results[rank] = body(rank); });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

// A tcp endpoint on 127.0.0.1 whose port is free right now.
inline std::string FreeTcpEndpoint() { return "tcp://127.0.0.1:" + std::to_string(FreeTcpPort()); }

}  // namespace actex::ring_test

#endif  // ACTEX_TESTS_TRANSPORT_RING_TEST_UTIL_H_
