#include "actors/node_supervisor.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "actors/job_link.h"
#include "actors/lease_links.h"
#include "base/unix_time.h"
#include "coordination/lease_client.h"
#include "transport/interrupted.h"
#include "transport/wire.h"

namespace actex {
namespace {

// Documents computed (in shards listed or being filled) and rejected, of the total
// when it is known (`~`: estimated from the JSONL read so far).
void PrintProgress(const MonitorEventMessage& event, bool final_line) {
  const std::string total = event.docs_total < 0 ? "?"
                                                 : (event.docs_total_estimated ? "~" : "") +
                                                       std::to_string(event.docs_total);
  std::fprintf(stderr,
               "\r[actex] docs %lld / %s | tokens %lld | %.0f tok/s | shards %lld | rejected "
               "%lld%s",
               static_cast<long long>(event.docs_through()), total.c_str(),
               static_cast<long long>(event.tokens_computed), event.tokens_per_second,
               static_cast<long long>(event.shards_written), static_cast<long long>(event.rejected),
               final_line ? "\n" : "   ");
  std::fflush(stderr);
}

void PublishEvent(zmq::socket_t* monitor, const MonitorEventMessage& event) {
  if (monitor == nullptr) return;
  // Monitoring is advisory: a PUB socket drops rather than blocks, and so do we.
  (void)Send(*monitor, event);
}

}  // namespace

NodeSupervisor::NodeSupervisor(Options options) : options_(std::move(options)) {
  options_.show_progress = options_.show_progress && isatty(STDERR_FILENO);
  last_event_.host_id = options_.host_id;
  last_event_.num_hosts = options_.num_hosts;
}

NodeSupervisor::~NodeSupervisor() { StopAll(); }

std::expected<void, std::string> NodeSupervisor::Add(
    std::expected<std::unique_ptr<Actor>, std::string> actor, OnStopSignal on_stop_signal) {
  if (!actor) return std::unexpected(actor.error());
  actors_.push_back(std::move(*actor));
  background_.push_back(false);
  finished_.push_back(false);
  on_stop_signal_.push_back(on_stop_signal);
  return {};
}

void NodeSupervisor::WatchStopSignals() {
  if (options_.stop_signals == nullptr) return;
  const int signals = options_.stop_signals->count.load();
  if (signals == 0 || ending_ == RunEnding::kStoppedAtOnce) return;
  if (signals >= 2) {
    ending_ = RunEnding::kStoppedAtOnce;
    StopAll();  // what is listed stays; the open shard is dropped
    return;
  }
  const int signal = options_.stop_signals->last.load();
  if (ending_ == RunEnding::kCompleted && options_.job != nullptr && !options_.drains_alone) {
    // A replica may span hosts, so one host of a job cannot drain its batches alone.
    spdlog::warn("stop signal {}: stopping where this host is", signal);
    ending_ = RunEnding::kJobStopped;
    StopWhereItIs();
  } else if (ending_ == RunEnding::kCompleted && options_.drain_timeout.count() > 0) {
    spdlog::warn("stop signal {}: draining (at most {} s; a second signal stops at once)", signal,
                 options_.drain_timeout.count() / 1000.0);
    ending_ = RunEnding::kDrained;
    drain_deadline_ = std::chrono::steady_clock::now() + options_.drain_timeout;
    for (size_t i = 0; i < actors_.size(); ++i) {
      if (finished_[i]) continue;
      if (on_stop_signal_[i] == OnStopSignal::kDrain) actors_[i]->RequestDrain();
      if (on_stop_signal_[i] == OnStopSignal::kStop) actors_[i]->RequestStop();
    }
  } else if (ending_ == RunEnding::kCompleted ||
             (ending_ == RunEnding::kDrained &&
              std::chrono::steady_clock::now() >= drain_deadline_)) {
    // --drain-timeout 0 allows no drain at all: the first signal is already overdue.
    ending_ = RunEnding::kDrainTimedOut;
    StopWhereItIs();
  }
}

void NodeSupervisor::StopWhereItIs() {
  for (size_t i = 0; i < actors_.size(); ++i) {
    if (finished_[i]) continue;
    if (on_stop_signal_[i] == OnStopSignal::kListWhatIsWhole) {
      actors_[i]->RequestDrain();
    } else {
      actors_[i]->RequestStop();
    }
  }
}

std::expected<void, std::string> NodeSupervisor::AddBackground(
    std::expected<std::unique_ptr<Actor>, std::string> actor) {
  auto added = Add(std::move(actor));
  if (added) background_.back() = true;
  return added;
}

void NodeSupervisor::StopAll() {
  for (auto& actor : actors_) actor->RequestStop();
}

void NodeSupervisor::Publish(const std::string& kind, const std::string& message) {
  MonitorEventMessage event = last_event_;
  event.kind = kind;
  event.host_id = options_.host_id;
  event.unix_seconds = UnixSeconds();
  event.message = message;
  PublishEvent(options_.job ? options_.job->monitor() : nullptr, event);
}

void NodeSupervisor::DrainEvents() {
  if (options_.events == nullptr) return;
  while (true) {
    auto received = Receive(*options_.events, std::chrono::milliseconds(0));
    if (!received || !*received) return;
    auto event = (*received)->As<MonitorEventMessage>();
    if (!event) continue;
    if (event->kind == "uploaded" || event->kind == "upload_failed") {
      // The uploader knows nothing of progress: its events carry the writer's last.
      MonitorEventMessage relayed = last_event_;
      relayed.kind = event->kind;
      relayed.unix_seconds = event->unix_seconds;
      relayed.message = event->message;
      PublishEvent(options_.job ? options_.job->monitor() : nullptr, relayed);
      continue;
    }
    last_event_ = *event;
    last_event_.host_id = options_.host_id;
    last_event_.num_hosts = options_.num_hosts;
    // The node announces "finished" itself, after every host passed the final barrier.
    if (last_event_.kind == "finished") last_event_.kind = "progress";
    if (options_.show_progress) PrintProgress(last_event_, false);
    PublishEvent(options_.job ? options_.job->monitor() : nullptr, last_event_);
  }
}

std::expected<void, std::string> NodeSupervisor::RelayLeases(bool job_failed) {
  if (options_.leases == nullptr) return {};
  LeaseClient& coordinator = *options_.job->leases();
  LeaseLinks& links = *options_.leases;
  // The acks and grants sockets have a send timeout of 0: an actor that ended
  // (a drain) reads nothing more, and nothing waits for it.
  auto refuse = [&](uint64_t request) {
    (void)Send(links.acks(),
               ListingAckMessage{request, false, "the job ended for this host first"});
  };
  for (zmq::socket_t* inbound : {&links.listings(), &links.requests()}) {
    while (true) {
      auto received = Receive(*inbound, std::chrono::milliseconds(0));
      if (!received) return std::unexpected("lease relay: " + received.error().message);
      if (!*received) break;
      const ReceivedMessage& message = **received;
      if (message.type == MessageType::kListingIntent) {
        auto intent = message.As<ListingIntentMessage>();
        if (!intent) return std::unexpected("lease relay: " + intent.error());
        if (job_failed) {
          refuse(intent->request);
        } else {
          pending_listings_.insert(intent->request);
          coordinator.ReportListing(*intent);
        }
      } else if (message.type == MessageType::kChunksListed) {
        auto listed = message.As<ChunksListedMessage>();
        if (!listed) return std::unexpected("lease relay: " + listed.error());
        if (!job_failed) coordinator.ReportListed(*listed);
      } else {
        auto request = message.As<LeaseRequestMessage>();
        if (!request) return std::unexpected("lease relay: " + request.error());
        if (!job_failed) coordinator.RequestLease(*request);
      }
    }
  }
  if (job_failed) {
    for (uint64_t request : pending_listings_) refuse(request);
    pending_listings_.clear();
    return {};
  }
  for (const ListingAckMessage& ack : coordinator.TakeListingAcks()) {
    pending_listings_.erase(ack.request);
    (void)Send(links.acks(), ack);
  }
  for (const LeaseGrantMessage& grant : coordinator.TakeGrants()) (void)Send(links.grants(), grant);
  return {};
}

std::expected<void, std::string> NodeSupervisor::Run() {
  return RunUntilFinished(/*include_background=*/false, /*service_job=*/true);
}

std::expected<void, std::string> NodeSupervisor::FinishBackground() {
  return RunUntilFinished(/*include_background=*/true, /*service_job=*/false);
}

std::expected<void, std::string> NodeSupervisor::RunUntilFinished(bool include_background,
                                                                  bool service_job) {
  std::string first_error;
  auto fail = [&](const std::string& error) {
    if (!first_error.empty()) {
      StopAll();
      return;
    }
    first_error = error;
    // The chunks that ended are right whatever failed elsewhere (a lost host, a broken
    // ring): the writer lists them, and everything else stops.
    StopWhereItIs();
  };
  auto waiting = [&] {
    for (size_t i = 0; i < actors_.size(); ++i) {
      if (!finished_[i] && (include_background || !background_[i])) return true;
    }
    return false;
  };
  while (waiting()) {
    // A finished actor's pipe keeps its last frame (Join does not read it) and stays
    // readable, so only running actors are polled; otherwise this loop spins and takes
    // a core from the device shards for the rest of the run.
    std::vector<zmq::pollitem_t> items;
    std::vector<size_t> polled;  // items[k] is actors_[polled[k]]'s pipe
    for (size_t i = 0; i < actors_.size(); ++i) {
      if (finished_[i]) continue;
      items.push_back({actors_[i]->pipe().handle(), 0, ZMQ_POLLIN, 0});
      polled.push_back(i);
    }
    if (options_.events) items.push_back({options_.events->handle(), 0, ZMQ_POLLIN, 0});
    if (service_job && options_.leases) {
      items.push_back({options_.leases->requests().handle(), 0, ZMQ_POLLIN, 0});
      items.push_back({options_.leases->listings().handle(), 0, ZMQ_POLLIN, 0});
    }
    zmq::socket_t* job_socket = service_job && options_.job ? options_.job->socket() : nullptr;
    if (job_socket) items.push_back({job_socket->handle(), 0, ZMQ_POLLIN, 0});
    try {
      RetryInterrupted(
          [&] { return zmq::poll(items.data(), items.size(), std::chrono::milliseconds(250)); });
    } catch (const zmq::error_t& e) {
      fail(std::string("watching the actors failed: ") + e.what());
      break;  // the destructor joins what still runs
    }
    DrainEvents();
    WatchStopSignals();
    if (job_socket && first_error.empty()) {
      if (auto serviced = options_.job->Service(); !serviced) fail(serviced.error());
    }
    if (service_job) {
      if (auto relayed = RelayLeases(!first_error.empty()); !relayed) fail(relayed.error());
    }
    for (size_t k = 0; k < polled.size(); ++k) {
      if (!(items[k].revents & ZMQ_POLLIN)) continue;
      const size_t i = polled[k];
      finished_[i] = true;
      auto result = actors_[i]->Join();
      // Actors stopped where they are for a stop signal may end in the error of an
      // interrupted wait (a ring collective): the signal's ending is what counts.
      const bool stopped_for_signal = ending_ == RunEnding::kJobStopped ||
                                      ending_ == RunEnding::kDrainTimedOut ||
                                      ending_ == RunEnding::kStoppedAtOnce;
      if (!result && stopped_for_signal && first_error.empty()) {
        spdlog::debug("after the stop signal: {}", result.error());
      } else if (!result) {
        fail(result.error());
      }
    }
  }
  DrainEvents();
  // The writer's last listing, before the final barrier or a stop is reported.
  if (service_job && first_error.empty()) {
    if (auto relayed = RelayLeases(/*job_failed=*/false); !relayed) first_error = relayed.error();
  }
  if (options_.show_progress && !include_background) PrintProgress(last_event_, true);
  if (!first_error.empty()) return std::unexpected(first_error);
  return {};
}

}  // namespace actex
