#ifndef ACTEX_COORDINATION_COORDINATOR_OPTIONS_H_
#define ACTEX_COORDINATION_COORDINATOR_OPTIONS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "coordination/lease_desk.h"
#include "coordination/liveness.h"
#include "transport/job_security.h"

namespace actex {

// What the coordinator has seen, readable from any thread while it runs (tests,
// logs). Messages that were dropped never changed the course of the job.
struct CoordinatorCounters {
  std::atomic<uint64_t> malformed_messages{0};   // refused by Receive (wire.h)
  std::atomic<uint64_t> unexpected_messages{0};  // well formed, but not expected from
                                                 // that peer in that phase
  // tcp peers that failed the ZeroMQ handshake on any of the three ports: not
  // ZeroMQ at all, or (with a job key) without the key
  std::atomic<uint64_t> refused_connections{0};
  // Messages on the monitor collector port that are not one whole MonitorEvent of
  // this schema version, and subscription frames that are not (un)subscriptions:
  // dropped by the relay instead of forwarded.
  std::atomic<uint64_t> dropped_monitor_messages{0};
  std::atomic<uint64_t> monitor_events_relayed{0};
  std::atomic<int> joined_hosts{0};
  std::atomic<bool> welcomed{false};   // the rendezvous completed
  std::atomic<bool> took_over{false};  // a standby that took over the job
  // Where the control ROUTER listens ("tcp://127.0.0.1:41234"): set before
  // StartCoordinator returns, so a standby's ephemeral port can be published.
  std::string control_endpoint;
};

// A coordinator listens on three ports in a row: its control port, then where monitors
// attach (XPUB), then where the nodes publish their events (XSUB). Host 0's are
// --coordinator's PORT and the next two; a standby's the same from its own port,
// also when the kernel picks it, so its control endpoint names the other two.
inline constexpr int kMonitorPortOffset = 1;
inline constexpr int kEventsPortOffset = 2;

// The PORT of "tcp://HOST:PORT" (1-65535), or 0 when `endpoint` is not of that form.
int TcpEndpointPort(const std::string& endpoint);
// "tcp://HOST:PORT" -> "tcp://HOST:PORT+offset"; empty when `control_endpoint` is not
// of that form or the port would pass 65535.
std::string CoordinatorPortEndpoint(const std::string& control_endpoint, int offset);

struct CoordinatorOptions {
  // The interface to listen on, e.g. "10.0.0.10" (what --coordinator names) or
  // "127.0.0.1". Deliberately not 0.0.0.0 by default: the coordinator obeys anyone
  // who reaches its port.
  std::string bind_address = "127.0.0.1";
  // The control ROUTER: rendezvous, barriers, heartbeats. 0 (a standby's only): any
  // three free ports in a row (CoordinatorSockets), which the monitor ports follow.
  int port = 8476;
  int monitor_port = 0;          // XPUB for `actex monitor`; 0: port + kMonitorPortOffset
  int monitor_collect_port = 0;  // XSUB where the nodes' PUBs publish; 0: port + kEventsPortOffset
  int num_hosts = 1;             // 1 to 65536
  // Host ids from num_hosts up to max_hosts - 1 are added hosts: no rendezvous waits
  // for them, and each joins the running job when it comes, taking leases (so only
  // with `leases`). 0: num_hosts, no added hosts.
  int max_hosts = 0;
  // Hosts missing this long after the coordinator started end the job.
  std::chrono::milliseconds join_timeout{300000};
  // Heartbeats to every joined host; a host lost by them ends the job, or only its
  // stop group (stop_groups).
  Liveness liveness;
  // Which hosts stop together, as a group number per host id (empty: all in one
  // group, so any lost host ends the job). The hosts of a replica that spans hosts
  // share its collectives: when one of them is lost or fails, the others of its
  // group are sent an Abort naming it, and the other groups go on with their shares;
  // barriers wait for the hosts still in the job, and the job ends after its final
  // barrier with an error naming what was lost. Host 0's group lost ends the job. A
  // host alone in its group (its replicas all on it) is independent: a node may take
  // its place while the job runs. Added hosts are each alone.
  std::vector<int> stop_groups;
  // With leases, per host that asks for chunks, the hosts that read the same chunks
  // (the others of its replica, which spans hosts): each gets a copy of every
  // LeaseGrant that names a chunk or says the job finished, in the same order. They
  // must share its stop group; a host may follow two hosts, or follow one and ask.
  std::map<int, std::vector<int>> lease_followers;
  // Work leases: the hosts ask for chunks of the corpus
  // one at a time, and a lost host's unlisted chunks go to the others, so the job
  // finishes without it. Null: a job without leases (tests of other parts).
  std::shared_ptr<LeaseDesk> leases;
  // With leases: the folder (this host's) where the coordinator that ends the job
  // with every chunk listed leaves the job's record of it (FinishedJobRecord), for
  // nodes started after the end. "": no record.
  std::string finished_record_folder;
  // The host whose node runs the standby coordinator (with leases only): it published
  // where the standby listens in its Hello (kStandbyEndpointKey). The lease log is
  // replicated to it, and every lease answer waits until the standby holds the
  // records behind it, so that a standby taking over knows every grant a host heard
  // of and every listing it allowed. -1: none; host 0's loss ends the job.
  int standby_host = -1;
  // This coordinator is the standby (on standby_host's node, with the other options
  // as host 0's): it binds ports of its own (port 0: any free ones), keeps `leases`
  // as a copy of host 0's log, and takes over the job when host 0's coordinator has
  // been silent for the heartbeat timeout: once more than half the job's hosts
  // reattached, it goes on without the rest, and admits the nodes that come later
  // as host 0's rendezvous would have. Until then it answers only host 0.
  bool standby = false;
  // After the job ended (final barrier released, or aborted) the coordinator keeps
  // relaying monitor events and answering late peers with the Abort this long.
  std::chrono::milliseconds final_drain{1000};
  // How long closing the control socket may still deliver the last messages.
  std::chrono::milliseconds linger{2000};
  // Optional: counters the caller wants to observe; one is made if null.
  std::shared_ptr<CoordinatorCounters> counters;
  // The job key: when set, all three sockets are CURVE servers (PROTOCOL.md section
  // 10) and the caller must have started the context's authenticator
  // (JobSecurity::StartAuthenticator). Null: an open job, plain tcp.
  std::shared_ptr<const JobSecurity> security;
};

// Fills the defaults of `options` (monitor ports next to the control port, max_hosts,
// a standby's ports) and refuses what the coordinator cannot run with, naming it.
std::expected<void, std::string> CheckCoordinatorOptions(CoordinatorOptions& options);

}  // namespace actex

#endif  // ACTEX_COORDINATION_COORDINATOR_OPTIONS_H_
