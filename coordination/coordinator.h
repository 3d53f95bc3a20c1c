#ifndef ACTEX_COORDINATION_COORDINATOR_H_
#define ACTEX_COORDINATION_COORDINATOR_H_

#include <expected>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "coordination/coordinator_options.h"
#include "transport/actor.h"

namespace actex {

// Starts the coordinator of a multi-host job as an actor (named "coordinator") in
// host 0's node process. It binds, on bind_address, the control ROUTER at `port`,
// the monitor XPUB at monitor_port and the monitor XSUB at monitor_collect_port
// before Start returns; a port that cannot be bound makes it fail with
// "coordinator: cannot bind the <role> to ADDRESS:PORT: <strerror>".
//
// Then it runs the conversation of PROTOCOL.md section 8: it admits every host's
// Hello (refusing disagreements), sends Welcome with the merged endpoint table once
// all num_hosts hosts joined, releases barriers, exchanges heartbeats and relays
// monitor events (section 9). The actor returns success after releasing the final
// barrier "done" (kFinalBarrierName), and an error carrying the reason after sending
// every node an Abort: a refused Hello, hosts missing at join_timeout, a lost host, a
// host's Failure, or a stop request from its parent. With stop_groups a lost or
// failed host outside host 0's group ends only its group: the final barrier is released to
// the rest, and the actor then returns an error naming the hosts that were lost. Hostile input
// (anything Receive refuses, unexpected types, strangers) is logged, counted and dropped; it never
// ends the job. The context must outlive the actor.
std::expected<std::unique_ptr<Actor>, std::string> StartCoordinator(zmq::context_t& context,
                                                                    CoordinatorOptions options);

}  // namespace actex

#endif  // ACTEX_COORDINATION_COORDINATOR_H_
