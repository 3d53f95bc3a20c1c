#ifndef ACTEX_ACTORS_JOB_EVENTS_H_
#define ACTEX_ACTORS_JOB_EVENTS_H_

#include <expected>
#include <memory>
#include <set>
#include <string>
#include <zmq.hpp>

#include "transport/job_security.h"

namespace actex {

// A node's PUB of monitor events (PROTOCOL.md section 9), connected to the event
// port of every coordinator of its job: host 0's, and the standby's once known (from
// --standby-coordinator, or where the standby said it listens). The standby's relay
// then has every host's events from the start, so monitors attached to it (or sent
// there by host 0's "standby" event) follow the job after it takes the job over.
class JobEvents {
 public:
  // `security` may be null (an open job).
  static std::expected<JobEvents, std::string> Open(
      zmq::context_t& context, const std::shared_ptr<const JobSecurity>& security);

  // Publishes to the coordinator at `control_endpoint` ("tcp://HOST:PORT") too, at its
  // events port (coordination/coordinator_options.h). The same endpoint again changes
  // nothing, and costs no name lookup (JobLink::Service passes the standby's at every
  // turn). With `replaces_standby`, this is where the standby listens now: the
  // standby's earlier endpoint is dropped (a standby run again listens elsewhere).
  void AddCoordinator(const std::string& control_endpoint, bool replaces_standby = false);

  zmq::socket_t& socket() { return socket_; }

 private:
  explicit JobEvents(zmq::socket_t socket) : socket_(std::move(socket)) {}

  zmq::socket_t socket_;
  std::set<std::string> added_;      // control endpoints given, as given
  std::set<std::string> connected_;  // events endpoints, numeric
  std::string standby_;              // the standby's events endpoint, when learned
  std::string standby_control_;      // and its control endpoint, as given
};

}  // namespace actex

#endif  // ACTEX_ACTORS_JOB_EVENTS_H_
