#ifndef ACTEX_COORDINATION_MONITOR_RELAY_H_
#define ACTEX_COORDINATION_MONITOR_RELAY_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "transport/job_security.h"
#include "transport/schema.h"

namespace actex {

struct MonitorRelayOptions {
  std::string bind_address = "127.0.0.1";
  int subscriber_port = 0;  // XPUB that `actex monitor` attaches to (SUB)
  int publisher_port = 0;   // XSUB that every node's PUB connects to
  // Events queued per monitor (XPUB) and from the nodes (XSUB). A slow or stuck
  // monitor loses events beyond this, it never slows the nodes down.
  int high_water_mark = 10000;
  // A larger frame from a publisher closes its connection (MonitorEvent bodies
  // are a few hundred bytes; this bounds what a stranger can make us allocate).
  int64_t max_frame_bytes = int64_t{1} << 20;
  // The job key: when set, both sockets are CURVE servers (the context's
  // authenticator must run). Null: plain tcp.
  std::shared_ptr<const JobSecurity> security;
};

// Forwards monitor events from the nodes' PUB sockets to any number of monitors,
// and the monitors' subscriptions back to the nodes: an XSUB (nodes connect) and an
// XPUB (monitors connect), both bound. Only what a receiver would accept passes: a
// whole MonitorEvent of this schema version one way, single-frame (un)subscriptions
// the other; anything else a stranger sends is dropped, logged (the first ten, then
// every thousandth) and counted. Monitors may attach and leave at any time;
// publishers never block on them (ZMQ_XPUB_NODROP off: a monitor whose queue is
// full misses events). The owner polls both sockets and calls the Forward
// functions when they are readable. Not thread-safe.
class MonitorRelay {
 public:
  static std::expected<std::unique_ptr<MonitorRelay>, std::string> Bind(
      zmq::context_t& context, const MonitorRelayOptions& options);

  zmq::socket_t& publishers() { return publishers_; }    // XSUB, readable: events
  zmq::socket_t& subscribers() { return subscribers_; }  // XPUB, readable: subscriptions

  // Takes up to `max_messages` whole messages that are waiting, without blocking,
  // and forwards those that pass; returns how many were forwarded.
  size_t ForwardEvents(size_t max_messages);
  size_t ForwardSubscriptions(size_t max_messages);

  // Publishes the coordinator's own event to the monitors, as a node's would arrive.
  // Never blocks: with no monitor attached, or a full queue, the event is dropped.
  void Publish(const MonitorEventMessage& event);

  uint64_t events_forwarded() const { return events_forwarded_; }
  // Messages refused instead of forwarded, both ways.
  uint64_t dropped_messages() const { return dropped_messages_; }

 private:
  MonitorRelay(zmq::socket_t publishers, zmq::socket_t subscribers);
  // Moves one whole message from `from` to `to` if one is waiting and it is a
  // MonitorEvent (`events`) or a subscription (not `events`); returns false when
  // none was waiting.
  bool ForwardOne(zmq::socket_t& from, zmq::socket_t& to, const char* what, bool events);
  void Drop(const char* what, const std::string& why);

  zmq::socket_t publishers_;
  zmq::socket_t subscribers_;
  uint64_t events_forwarded_ = 0;
  uint64_t dropped_messages_ = 0;
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_MONITOR_RELAY_H_
