#ifndef ACTEX_ACTORS_JOB_LINK_H_
#define ACTEX_ACTORS_JOB_LINK_H_

#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actors/host_layout.h"
#include "actors/mesh_plan.h"
#include "actors/node_options.h"
#include "coordination/lease_client.h"
#include "transport/job_security.h"
#include "transport/schema.h"

namespace actex {

// A node's link to the rest of its job (jobs of more than one host only): on host 0
// the coordinator actor, on the standby's host (MeshPlan::StandbyHost) the standby
// coordinator; on every host the coordinator client (rendezvous, barriers,
// heartbeats), the PUB socket that feeds monitors through the coordinator, and the
// exchange that tells local device shards where their ring peers listen.
class JobLink {
 public:
  static constexpr const char* kSetupEndpoint = "inproc://ring-setup";

  // The interface this node's tcp sockets bind to: --bind, else the coordinator's
  // host, never every interface unless asked.
  static std::string BindAddress(const NodeOptions& options);

  // Reads the job key (--job-key-file) and starts the process's authenticator, or
  // warns once that the job is open; binds the set-up socket, starts the coordinator
  // on host 0 and connects the monitor PUB. Nothing is sent yet.
  static std::expected<std::unique_ptr<JobLink>, std::string> Open(zmq::context_t& context,
                                                                   const NodeOptions& options,
                                                                   const MeshPlan& mesh);
  ~JobLink();

  // Collects the local device shards' ring endpoints, joins the job with `fingerprint`
  // (every host must send the same) and `published` (named values every other host
  // reads, such as the chunks its folder lists), answers each shard with its ring's full
  // table and passes the "ready" barrier. Errors carry the coordinator's reason.
  std::expected<void, std::string> ConnectRings(
      const HostLayout& layout, const std::map<std::string, std::string>& fingerprint,
      const std::map<std::string, std::string>& published);

  // The job key for every tcp socket of this node (ring links too); null: open job.
  std::shared_ptr<const JobSecurity> security() const;

  zmq::socket_t* monitor();
  zmq::socket_t* socket();  // readable when the coordinator sent something
  // Heartbeats and incoming messages; an error when the job was aborted or the
  // coordinator went silent.
  std::expected<void, std::string> Service();
  // Tells the other hosts why this one ends. On host 0 it waits (a few seconds at
  // most) for its own coordinator to turn the report into the job's Abort, so the
  // other hosts hear this reason, not that the coordinator stopped; with `hand_over`
  // (host 0 stopped by a signal, in a job with a standby) the coordinator hands the
  // job over to the standby instead.
  void ReportFailure(const std::string& reason, bool hand_over = false);
  // The job's work leases, once ConnectRings joined the job (before: null): what the
  // loader asks and the writer lists goes to the coordinator through it, and its
  // answers collect there as Service() reads them.
  LeaseClient* leases();

  // The final barrier: no host reports success before every host finished. A host
  // waiting there has finished its part; when `stop_requested` turns true (a stop
  // signal) it stops waiting and returns kLeft, and the caller reports why it leaves.
  enum class Finish { kReleased, kLeft };
  std::expected<Finish, std::string> FinishTogether(const std::function<bool()>& stop_requested);
  // Whether this node's coordinator actor runs the job: host 0's, or a standby that
  // took over.
  bool Coordinating() const;

 private:
  JobLink();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_JOB_LINK_H_
