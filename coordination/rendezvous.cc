#include "coordination/rendezvous.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <set>
#include <utility>

namespace actex {
namespace {

std::string ValueText(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto found = fields.find(key);
  return found == fields.end() ? std::string("(not set)") : found->second;
}

// `endpoint` as the other hosts must dial it. A node bound to every interface
// (--bind 0.0.0.0) announces tcp://0.0.0.0:PORT, which would send each peer to itself:
// the wildcard becomes the address the coordinator saw the node's Hello come from
// (`peer`, "HOST:PORT"), an address of that node on the job's network.
std::expected<std::string, std::string> Reachable(const std::string& endpoint,
                                                  const std::string& peer) {
  constexpr std::string_view kTcp = "tcp://";
  if (!endpoint.starts_with(kTcp)) return endpoint;
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon < kTcp.size()) return endpoint;
  const std::string host = endpoint.substr(kTcp.size(), colon - kTcp.size());
  if (host != "0.0.0.0" && host != "*" && host != "[::]" && host != "::") return endpoint;
  const size_t peer_colon = peer.rfind(':');
  if (peer_colon == std::string::npos || peer_colon == 0) {
    return std::unexpected(fmt::format(
        "announces {}, a wildcard, and the coordinator does not know its address ({}): give "
        "that node a --bind address the other hosts reach",
        endpoint, peer));
  }
  return std::string(kTcp) + peer.substr(0, peer_colon) + endpoint.substr(colon);
}

}  // namespace

std::string SecondsText(std::chrono::milliseconds duration) {
  const long long ms = duration.count();
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{:g} s", static_cast<double>(ms) / 1000.0);
}

std::string FingerprintDifferences(const std::map<std::string, std::string>& reference,
                                   std::string_view reference_name,
                                   const std::map<std::string, std::string>& other,
                                   std::string_view other_name) {
  // Every differing field, in name order, so one run tells the user all of them.
  std::set<std::string> keys;
  for (const auto& [key, value] : reference) keys.insert(key);
  for (const auto& [key, value] : other) keys.insert(key);
  std::string differences;
  for (const std::string& key : keys) {
    const std::string expected = ValueText(reference, key);
    const std::string actual = ValueText(other, key);
    if (reference.contains(key) == other.contains(key) && expected == actual) continue;
    if (!differences.empty()) differences += "; ";
    differences += fmt::format("{} differs: {} has {} but {} has {}", key, reference_name, expected,
                               other_name, actual);
  }
  return differences;
}

const std::map<std::string, std::string>& Rendezvous::fingerprint() const {
  static const std::map<std::string, std::string> kNone;
  return reference_ < 0 ? kNone : hosts_[reference_]->hello.fingerprint;
}

Rendezvous::Rendezvous(int num_hosts, int max_hosts)
    : hosts_(num_hosts > 0 ? num_hosts : 0), max_hosts_(std::max(max_hosts, this->num_hosts())) {}

bool Rendezvous::has_joined(int host_id) const {
  return host_id >= 0 && host_id < num_hosts() && hosts_[host_id].has_value();
}

std::optional<std::string> Rendezvous::Disagreement(const HelloMessage& reference,
                                                    const HelloMessage& other) {
  const int ref = reference.host_id;
  const int id = other.host_id;
  if (reference.software_version != other.software_version) {
    return fmt::format("host {}: software version differs: host {} has {} but host {} has {}", id,
                       ref, reference.software_version, id, other.software_version);
  }
  const std::string differences =
      FingerprintDifferences(reference.fingerprint, fmt::format("host {}", ref), other.fingerprint,
                             fmt::format("host {}", id));
  if (differences.empty()) return std::nullopt;
  return fmt::format("host {}: {}", id, differences);
}

std::expected<void, std::string> Rendezvous::Admit(const HelloMessage& hello,
                                                   const std::string& peer) {
  const int id = hello.host_id;
  if (hello.num_hosts != num_hosts()) {
    return std::unexpected(
        fmt::format("host {}: --num-hosts differs: host 0 has {} but host {} has {}", id,
                    num_hosts(), id, hello.num_hosts));
  }
  if (id < 0 || id >= num_hosts()) {
    return std::unexpected(fmt::format(
        "host {}: --host-id out of range: this job has {} host(s), ids 0 to {} (node at {})", id,
        num_hosts(), num_hosts() - 1, peer));
  }
  if (hosts_[id].has_value()) {
    return std::unexpected(
        fmt::format("host {}: two nodes claim --host-id {}: the node at {} joined first, then "
                    "the node at {}",
                    id, id, hosts_[id]->peer, peer));
  }
  if (reference_ >= 0) {
    const HelloMessage& reference = hosts_[reference_]->hello;
    // Host 0 arriving after others: they agree with each other, so report the
    // earlier host as the one differing from host 0 (see the class comment).
    const auto disagreement =
        id == 0 ? Disagreement(hello, reference) : Disagreement(reference, hello);
    if (disagreement) return std::unexpected(*disagreement);
  }
  if (auto published = Rebind(hello, peer); !published) return published;
  hosts_[id] = Joined{hello, peer};
  ++joined_;
  if (reference_ < 0 || id == 0) reference_ = id;
  return {};
}

std::expected<void, std::string> Rendezvous::CheckReturning(const HelloMessage& hello,
                                                            const std::string& peer) const {
  const int id = hello.host_id;
  if (hello.num_hosts != num_hosts()) {
    return std::unexpected(
        fmt::format("host {}: --num-hosts differs: host 0 has {} but host {} has {}", id,
                    num_hosts(), id, hello.num_hosts));
  }
  if (id >= max_hosts_ && max_hosts_ > num_hosts()) {
    return std::unexpected(
        fmt::format("host {}: --host-id out of range: this job takes hosts 0 to {} (host 0's "
                    "--max-hosts {}); the node at {} is not one of them",
                    id, max_hosts_ - 1, max_hosts_, peer));
  }
  if (!is_added(id) && (id < 0 || id >= num_hosts() || !hosts_[id].has_value())) {
    return std::unexpected(fmt::format(
        "host {}: the job is running and has no lost host {} whose place the node at {} could "
        "take{}",
        id, id, peer,
        id >= num_hosts() ? " (host 0 takes no added hosts: give every host --max-hosts)" : ""));
  }
  if (auto disagreement = Disagreement(hosts_[reference_]->hello, hello)) {
    return std::unexpected(*disagreement);
  }
  return {};
}

std::expected<void, std::string> Rendezvous::Rebind(const HelloMessage& hello,
                                                    const std::string& peer) {
  const int id = hello.host_id;
  std::map<std::string, std::string> announced;
  for (const auto& [name, endpoint] : hello.endpoints) {
    const auto owner = endpoint_owners_.find(name);
    if (owner != endpoint_owners_.end() && owner->second != id) {
      return std::unexpected(
          fmt::format("host {}: endpoint '{}' is also published by host {} ({} there, {} here)", id,
                      name, owner->second, endpoints_.at(name), endpoint));
    }
    auto reachable = Reachable(endpoint, peer);
    if (!reachable) {
      return std::unexpected(fmt::format("host {}: '{}' {}", id, name, reachable.error()));
    }
    announced.emplace(name, std::move(*reachable));
  }
  // What the host published before goes: its Hello says all it publishes now.
  std::erase_if(endpoints_, [&](const auto& entry) {
    const auto owner = endpoint_owners_.find(entry.first);
    return owner != endpoint_owners_.end() && owner->second == id;
  });
  std::erase_if(endpoint_owners_, [&](const auto& entry) { return entry.second == id; });
  for (auto& [name, endpoint] : announced) {
    endpoints_.emplace(name, std::move(endpoint));
    endpoint_owners_.emplace(name, id);
  }
  return {};
}

std::vector<JoinedHost> Rendezvous::Admitted() const {
  std::vector<JoinedHost> admitted;
  for (const auto& host : hosts_) {
    if (host) admitted.push_back({host->hello, host->peer});
  }
  return admitted;
}

std::expected<Rendezvous, std::string> Rendezvous::Replay(int num_hosts, int max_hosts,
                                                          const std::vector<JoinedHost>& joined) {
  Rendezvous book(num_hosts, max_hosts);
  for (const JoinedHost& host : joined) {
    if (auto admitted = book.Admit(host.hello, host.peer); !admitted) {
      return std::unexpected("host 0's rendezvous, replayed: " + admitted.error());
    }
  }
  return book;
}

std::string Rendezvous::MissingHostsReason(std::chrono::milliseconds waited) const {
  std::string missing;
  int count = 0;
  for (int id = 0; id < num_hosts(); ++id) {
    if (hosts_[id].has_value()) continue;
    missing += (count++ == 0 ? "" : ", ") + std::to_string(id);
  }
  return fmt::format("{} {} never joined within {}", count == 1 ? "host" : "hosts", missing,
                     SecondsText(waited));
}

}  // namespace actex
