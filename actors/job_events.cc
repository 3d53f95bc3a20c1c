#include "actors/job_events.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "coordination/coordinator_options.h"
#include "transport/interrupted.h"
#include "transport/numeric_endpoint.h"

namespace actex {

std::expected<JobEvents, std::string> JobEvents::Open(
    zmq::context_t& context, const std::shared_ptr<const JobSecurity>& security) {
  zmq::socket_t socket(context, zmq::socket_type::pub);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::sndhwm, 1000);
  if (security) {
    if (auto secured = security->ApplyClient(socket); !secured) {
      return std::unexpected("monitor events: " + secured.error());
    }
  }
  return JobEvents(std::move(socket));
}

void JobEvents::AddCoordinator(const std::string& control_endpoint, bool replaces_standby) {
  if (!added_.insert(control_endpoint).second) return;
  const std::string events =
      NumericEndpoint(CoordinatorPortEndpoint(control_endpoint, kEventsPortOffset));
  if (events.empty() || connected_.contains(events)) return;
  try {
    if (replaces_standby && !standby_.empty()) {
      RetryInterrupted([&] { socket_.disconnect(standby_); });
      connected_.erase(standby_);
      added_.erase(standby_control_);
    }
    RetryInterrupted([&] { socket_.connect(events); });
  } catch (const zmq::error_t& e) {
    // Events are advisory: a job without them still runs.
    spdlog::warn("monitor events cannot go to {}: {}", events, e.what());
    return;
  }
  connected_.insert(events);
  if (replaces_standby) {
    standby_ = events;
    standby_control_ = control_endpoint;
  }
}

}  // namespace actex
