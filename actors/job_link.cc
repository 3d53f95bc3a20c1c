#include "actors/job_link.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>

#include "actors/job_events.h"
#include "actors/run_fingerprint.h"
#include "coordination/coordinator.h"
#include "coordination/coordinator_client.h"
#include "coordination/job_coordinator.h"
#include "transport/interrupted.h"
#include "transport/numeric_endpoint.h"
#include "transport/wire.h"

namespace actex {
namespace {

// The final barrier waits for the slowest host to finish its documents, which may be
// days; liveness while waiting comes from the heartbeats.
constexpr std::chrono::hours kFinishWait{24 * 30};
// How often a host waiting at the final barrier looks at stop signals and services
// its link to the coordinator.
constexpr std::chrono::milliseconds kFinalBarrierSlice{200};
// How long host 0 lets its coordinator tell the other hosts why host 0 ends.
constexpr std::chrono::seconds kReportWait{5};
constexpr std::chrono::seconds kShardSetupWait{30};

}  // namespace

struct JobLink::State {
  NodeOptions options;
  CoordinatorAddress coordinator;
  std::optional<CoordinatorAddress> standby;  // --standby-coordinator
  zmq::context_t* context = nullptr;
  std::shared_ptr<const JobSecurity> security;  // null: an open job
  std::unique_ptr<Actor> authenticator;         // with a key: ZAP for every server socket
  zmq::socket_t setup;              // ROUTER: RingBound from local shards, RingTable back
  std::optional<JobEvents> events;  // PUB towards the coordinators' monitor feeds
  // Host 0's coordinator, or the standby coordinator on the standby's host.
  std::unique_ptr<Actor> coordinator_actor;
  std::shared_ptr<CoordinatorCounters> coordinator_counters =
      std::make_shared<CoordinatorCounters>();
  std::unique_ptr<CoordinatorClient> client;
};

namespace {

// What the coordinator this node may run needs of its flags and its mesh.
JobCoordinatorSettings CoordinatorSettings(const NodeOptions& options, const MeshPlan& mesh,
                                           const CoordinatorAddress& coordinator,
                                           const std::optional<CoordinatorAddress>& standby_at) {
  JobCoordinatorSettings settings;
  settings.host_id = options.host_id;
  settings.num_hosts = mesh.hosts;
  settings.max_hosts = options.max_hosts;
  settings.join_timeout = options.join_timeout;
  settings.liveness = JobLiveness(options.heartbeat_timeout);
  settings.stop_groups = mesh.StopGroups();
  settings.lease_followers = mesh.LeaseFollowers();
  settings.standby_host = mesh.StandbyHost();
  settings.coordinator = coordinator;
  settings.standby_at = standby_at;
  settings.bind_address = options.bind_address;
  if (mesh.Leased()) {
    settings.host_folder =
        (std::filesystem::path(options.extract.out_dir) / mesh.HostFolder(options.host_id))
            .string();
    settings.chunks = mesh.chunks;
    settings.share = mesh.share();
  }
  return settings;
}

}  // namespace

JobLink::JobLink() : state_(std::make_unique<State>()) {}
JobLink::~JobLink() = default;

std::string JobLink::BindAddress(const NodeOptions& options) {
  if (!options.bind_address.empty()) return options.bind_address;
  auto coordinator = ParseCoordinator(options.coordinator);
  return coordinator ? coordinator->host : "127.0.0.1";
}

std::expected<std::unique_ptr<JobLink>, std::string> JobLink::Open(zmq::context_t& context,
                                                                   const NodeOptions& options,
                                                                   const MeshPlan& mesh) {
  auto coordinator = ParseCoordinator(options.coordinator);
  if (!coordinator) return std::unexpected(coordinator.error());
  std::unique_ptr<JobLink> link(new JobLink());
  State& state = *link->state_;
  state.options = options;
  state.coordinator = *coordinator;
  state.context = &context;
  if (!options.standby_coordinator.empty()) {
    auto standby = ParseCoordinator(options.standby_coordinator, "--standby-coordinator");
    if (!standby) return std::unexpected(standby.error());
    state.standby = *standby;
    if (mesh.StandbyHost() < 0) {
      spdlog::warn(
          "host {}: --standby-coordinator {} is not used: only a leased job of three hosts or "
          "more, with a host outside host 0's replica, has a standby coordinator",
          options.host_id, options.standby_coordinator);
      state.standby.reset();
    }
  }
  // The authenticator must answer before any server socket of this process binds.
  if (!options.job_key_file.empty()) {
    auto security = JobSecurity::FromKeyFile(options.job_key_file);
    if (!security) return std::unexpected("--job-key-file: " + security.error());
    state.security = *security;
    auto authenticator = state.security->StartAuthenticator(context);
    if (!authenticator) return std::unexpected(authenticator.error());
    state.authenticator = std::move(*authenticator);
    spdlog::info("host {}: every tcp socket of the job uses CURVE with job key {} (from {})",
                 options.host_id, state.security->key_id(), options.job_key_file);
  } else {
    spdlog::warn(
        "host {}: the job is open (no --job-key-file): anyone who can reach the coordinator at "
        "{}:{}-{} or this node's ring ports on {} can join the job, inject messages or read "
        "activations in transit; give every host the same --job-key-file (make one with `actex "
        "make-job-key FILE`)",
        options.host_id, coordinator->host, coordinator->port,
        coordinator->port + kEventsPortOffset, BindAddress(options));
  }
  state.setup = zmq::socket_t(context, zmq::socket_type::router);
  state.setup.set(zmq::sockopt::linger, 0);
  RetryInterrupted([&] { state.setup.bind(kSetupEndpoint); });
  auto events = JobEvents::Open(context, state.security);
  if (!events) return std::unexpected(events.error());
  state.events = std::move(*events);
  for (const auto& at : {std::optional(*coordinator), state.standby}) {
    if (at) state.events->AddCoordinator(fmt::format("tcp://{}:{}", at->host, at->port));
  }
  auto started =
      StartJobCoordinator(context, CoordinatorSettings(options, mesh, *coordinator, state.standby),
                          state.security, state.coordinator_counters);
  if (started) {
    state.coordinator_actor = std::move(*started);
  } else if (options.host_id == 0) {
    return std::unexpected(started.error());
  } else {
    // The job runs without a standby: host 0's loss ends it, as in a job of two hosts.
    spdlog::warn(
        "host {}: cannot run the standby coordinator here ({}); the job goes on without one, "
        "so host 0's loss ends it: give every host a --bind address the others reach",
        options.host_id, started.error());
  }
  return link;
}

std::expected<void, std::string> JobLink::ConnectRings(
    const HostLayout& layout, const std::map<std::string, std::string>& fingerprint,
    const std::map<std::string, std::string>& published) {
  State& state = *state_;
  // Every local shard announced its ingress before its ready handshake, so the
  // messages are already queued here.
  std::map<std::string, std::string> bound;     // ring key -> endpoint
  std::map<std::string, std::string> identity;  // ring key -> the shard's ROUTER identity
  std::map<std::string, int> replica_of;
  for (size_t i = 0; i < layout.shards().size(); ++i) {
    zmq::message_t who;
    state.setup.set(zmq::sockopt::rcvtimeo,
                    static_cast<int>(std::chrono::milliseconds(kShardSetupWait).count()));
    if (!RetryInterrupted([&] { return state.setup.recv(who); })) {
      return std::unexpected("a device shard never reported its ring");
    }
    auto message = Receive(state.setup);
    if (!message) return std::unexpected("ring set-up: " + message.error().message);
    auto announced = message->As<RingBoundMessage>();
    if (!announced) return std::unexpected("ring set-up: " + announced.error());
    const int replica = std::stoi(announced->ring.substr(announced->ring.find('-') + 1));
    const std::string key = HostLayout::RingKey(replica, announced->rank);
    bound[key] = announced->endpoint;
    identity[key] = who.to_string();
    replica_of[key] = replica;
  }

  HelloMessage hello;
  hello.host_id = state.options.host_id;
  hello.num_hosts = state.options.num_hosts;
  hello.software_version = SoftwareVersion();
  hello.fingerprint = fingerprint;
  hello.endpoints = published;
  for (const auto& [key, endpoint] : bound) {
    if (!endpoint.starts_with("tcp://")) continue;
    hello.endpoints[key] = endpoint;
    spdlog::info("host {}: ring ingress {} listens on {}{}", state.options.host_id, key, endpoint,
                 state.security ? " (CURVE)" : "");
  }
  const bool runs_the_standby = state.coordinator_actor && state.options.host_id != 0;
  if (runs_the_standby) {
    hello.endpoints[kStandbyEndpointKey] = state.coordinator_counters->control_endpoint;
  }
  CoordinatorClientOptions joining;
  joining.coordinator_address = state.coordinator.host;
  joining.port = state.coordinator.port;
  joining.join_timeout = state.options.join_timeout;
  joining.security = state.security;
  joining.liveness = JobLiveness(state.options.heartbeat_timeout);
  if (state.standby && !runs_the_standby) {
    joining.standby_endpoint = fmt::format("tcp://{}:{}", state.standby->host, state.standby->port);
  }
  auto client = CoordinatorClient::Join(*state.context, joining, hello);
  if (!client) return std::unexpected(client.error());
  state.client = std::move(*client);
  if (state.options.host_id == 0 && state.client->with_standby()) {
    // Host 0 came back to a job its standby took over: the standby coordinates it,
    // and this node's own coordinator, which admitted nobody else, must not.
    spdlog::info(
        "host 0: the standby's coordinator runs the job; its own, which no other host joined, "
        "stops");
    state.coordinator_actor.reset();
  }

  for (const auto& [key, who] : identity) {
    const int replica = replica_of[key];
    RingTableMessage table{HostLayout::RingName(replica),
                           layout.FinalEndpoints(replica, bound, state.client->endpoints())};
    RetryInterrupted([&] { return state.setup.send(zmq::buffer(who), zmq::send_flags::sndmore); });
    if (auto sent = Send(state.setup, table); !sent) return std::unexpected(sent.error());
  }
  return state.client->Barrier("ready", state.options.join_timeout);
}

bool JobLink::Coordinating() const {
  const State& state = *state_;
  return state.coordinator_actor &&
         (state.options.host_id == 0 || state.coordinator_counters->took_over);
}

std::shared_ptr<const JobSecurity> JobLink::security() const { return state_->security; }

zmq::socket_t* JobLink::monitor() { return &state_->events->socket(); }

zmq::socket_t* JobLink::socket() { return state_->client ? &state_->client->socket() : nullptr; }

std::expected<void, std::string> JobLink::Service() {
  State& state = *state_;
  if (!state.client) return {};
  auto serviced = state.client->Service();
  // Where the standby listens now (the Welcome's table, heartbeats): events go there too.
  const auto standby = state.client->endpoints().find(kStandbyEndpointKey);
  if (standby != state.client->endpoints().end()) {
    state.events->AddCoordinator(standby->second, /*replaces_standby=*/true);
  }
  return serviced;
}

void JobLink::ReportFailure(const std::string& reason, bool hand_over) {
  State& state = *state_;
  if (state.client) state.client->ReportFailure(reason, hand_over);
  if (!Coordinating()) return;
  // The coordinator ends by itself once it has sent the Abort and relayed the last
  // events (final_drain); past this wait the destructor stops it.
  zmq::pollitem_t finished{state.coordinator_actor->pipe().handle(), 0, ZMQ_POLLIN, 0};
  RetryInterrupted([&] { return zmq::poll(&finished, 1, kReportWait); });
}

LeaseClient* JobLink::leases() { return state_->client.get(); }

std::expected<JobLink::Finish, std::string> JobLink::FinishTogether(
    const std::function<bool()>& stop_requested) {
  State& state = *state_;
  if (auto entered = state.client->EnterBarrier(kFinalBarrierName); !entered) {
    return std::unexpected(entered.error());
  }
  const auto deadline = std::chrono::steady_clock::now() + kFinishWait;
  while (!state.client->BarrierReleased(kFinalBarrierName)) {
    if (stop_requested()) return Finish::kLeft;
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::unexpected(fmt::format(
          "barrier '{}' was not released within {} h: the coordinator is still waiting for "
          "other hosts",
          kFinalBarrierName, kFinishWait.count()));
    }
    // A stop signal interrupts the wait (EINTR): then the loop looks at it at once.
    zmq::pollitem_t arrived{state.client->socket().handle(), 0, ZMQ_POLLIN, 0};
    try {
      zmq::poll(&arrived, 1, kFinalBarrierSlice);
    } catch (const zmq::error_t& error) {
      if (error.num() != EINTR) throw;
    }
    if (auto serviced = state.client->Service(); !serviced) {
      return std::unexpected(serviced.error());
    }
  }
  if (Coordinating()) {
    if (auto ended = state.coordinator_actor->Join(); !ended) return std::unexpected(ended.error());
  }
  return Finish::kReleased;
}

}  // namespace actex
