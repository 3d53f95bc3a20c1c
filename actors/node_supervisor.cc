#include "actors/node_supervisor.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "actors/job_link.h"
#include "transport/wire.h"

namespace actex {
namespace {

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void PrintProgress(const MonitorEventMessage& event, bool final_line) {
  std::fprintf(stderr,
               "\r[actex] docs %lld | tokens %lld | %.0f tok/s | shards %lld | rejected %lld%s",
               static_cast<long long>(event.docs_done), static_cast<long long>(event.tokens_done),
               event.tokens_per_second, static_cast<long long>(event.shards_written),
               static_cast<long long>(event.rejected), final_line ? "\n" : "   ");
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
}

NodeSupervisor::~NodeSupervisor() { StopAll(); }

std::expected<void, std::string> NodeSupervisor::Add(
    std::expected<std::unique_ptr<Actor>, std::string> actor) {
  if (!actor) return std::unexpected(actor.error());
  actors_.push_back(std::move(*actor));
  return {};
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
    last_event_ = *event;
    last_event_.host_id = options_.host_id;
    // The node announces "finished" itself, after every host passed the final barrier.
    if (last_event_.kind == "finished") last_event_.kind = "progress";
    if (options_.show_progress) PrintProgress(last_event_, false);
    PublishEvent(options_.job ? options_.job->monitor() : nullptr, last_event_);
  }
}

std::expected<void, std::string> NodeSupervisor::Run() {
  std::string first_error;
  std::vector<bool> finished(actors_.size(), false);
  size_t running = actors_.size();
  auto fail = [&](const std::string& error) {
    if (first_error.empty()) first_error = error;
    StopAll();
  };
  while (running > 0) {
    // A finished actor's pipe keeps its last frame (Join does not read it) and stays
    // readable, so only running actors are polled; otherwise this loop spins and takes
    // a core from the device shards for the rest of the run.
    std::vector<zmq::pollitem_t> items;
    std::vector<size_t> polled;  // items[k] is actors_[polled[k]]'s pipe
    for (size_t i = 0; i < actors_.size(); ++i) {
      if (finished[i]) continue;
      items.push_back({actors_[i]->pipe().handle(), 0, ZMQ_POLLIN, 0});
      polled.push_back(i);
    }
    if (options_.events) items.push_back({options_.events->handle(), 0, ZMQ_POLLIN, 0});
    zmq::socket_t* job_socket = options_.job ? options_.job->socket() : nullptr;
    if (job_socket) items.push_back({job_socket->handle(), 0, ZMQ_POLLIN, 0});
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(250));
    DrainEvents();
    if (options_.job && first_error.empty()) {
      if (auto serviced = options_.job->Service(); !serviced) fail(serviced.error());
    }
    for (size_t k = 0; k < polled.size(); ++k) {
      if (!(items[k].revents & ZMQ_POLLIN)) continue;
      const size_t i = polled[k];
      finished[i] = true;
      --running;
      if (auto result = actors_[i]->Join(); !result) fail(result.error());
    }
  }
  DrainEvents();
  if (options_.show_progress) PrintProgress(last_event_, true);
  if (!first_error.empty()) return std::unexpected(first_error);
  return {};
}

}  // namespace actex
