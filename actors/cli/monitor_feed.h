#ifndef ACTEX_ACTORS_CLI_MONITOR_FEED_H_
#define ACTEX_ACTORS_CLI_MONITOR_FEED_H_

// Where `actex monitor` hears a job: one SUB socket, subscribed to everything,
// connected to the endpoint the user named and to the standby coordinator's feed once
// host 0 names it (a "standby" event, PROTOCOL.md section 9), so the monitor follows
// the job when the standby takes it over. Both coordinators relay the same nodes'
// events: each is handed on once.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <expected>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>
#include <zmq.hpp>

#include "transport/schema.h"

namespace actex {

class MonitorFeed {
 public:
  // Endpoints followed besides the first: a garbled stream cannot make the monitor
  // connect everywhere.
  static constexpr size_t kMaxFollowed = 8;
  // Events remembered to know their second copy: far more than two relays can be
  // apart (each queues at most 10,000).
  static constexpr size_t kRemembered = 65536;

  // Empty when `endpoint` is one the monitor can connect to, else why not.
  static std::string CheckEndpoint(const std::string& endpoint);

  explicit MonitorFeed(zmq::context_t& context);

  // Subscribes to everything at each of `endpoints` (the user's: host 0's, and the
  // standby's where host 0's name for it is not reachable from here), with the job's
  // key from `job_key_file` when not empty (a job with a key only talks CURVE).
  std::expected<void, std::string> Connect(const std::vector<std::string>& endpoints,
                                           const std::string& job_key_file);
  // Connects to `endpoint` (one a coordinator named) too, unless it was connected
  // already, is not tcp, or kMaxFollowed were followed; true when it connected now.
  std::expected<bool, std::string> Follow(const std::string& endpoint);

  // False for an event handed on already (the same bytes from another relay).
  bool FirstCopy(const MonitorEventMessage& event);

  zmq::socket_t& socket() { return socket_; }
  // The endpoints Connect was given, for messages: "tcp://a:1 tcp://b:2".
  const std::string& named() const { return named_; }

 private:
  zmq::socket_t socket_;
  std::set<std::string> endpoints_;
  size_t followed_ = 0;
  std::string named_;
  std::unordered_set<uint64_t> seen_;
  std::deque<uint64_t> seen_order_;  // oldest first, to forget beyond kRemembered
};

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_MONITOR_FEED_H_
