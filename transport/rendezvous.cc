#include "transport/rendezvous.h"

#include <spdlog/fmt/fmt.h>

#include <set>
#include <utility>

namespace actex {
namespace {

std::string ValueText(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto found = fields.find(key);
  return found == fields.end() ? std::string("(not set)") : found->second;
}

}  // namespace

std::string SecondsText(std::chrono::milliseconds duration) {
  const long long ms = duration.count();
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{:g} s", static_cast<double>(ms) / 1000.0);
}

Rendezvous::Rendezvous(int num_hosts) : hosts_(num_hosts > 0 ? num_hosts : 0) {}

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
  // Every differing field, in name order, so one run tells the user all of them.
  std::set<std::string> keys;
  for (const auto& [key, value] : reference.fingerprint) keys.insert(key);
  for (const auto& [key, value] : other.fingerprint) keys.insert(key);
  std::string differences;
  for (const std::string& key : keys) {
    const std::string expected = ValueText(reference.fingerprint, key);
    const std::string actual = ValueText(other.fingerprint, key);
    if (reference.fingerprint.contains(key) == other.fingerprint.contains(key) &&
        expected == actual) {
      continue;
    }
    if (!differences.empty()) differences += "; ";
    differences += fmt::format("{} differs: host {} has {} but host {} has {}", key, ref,
                               expected, id, actual);
  }
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
  for (const auto& [name, endpoint] : hello.endpoints) {
    const auto owner = endpoint_owners_.find(name);
    if (owner != endpoint_owners_.end()) {
      return std::unexpected(
          fmt::format("host {}: endpoint '{}' is also published by host {} ({} there, {} here)", id,
                      name, owner->second, endpoints_.at(name), endpoint));
    }
  }

  for (const auto& [name, endpoint] : hello.endpoints) {
    endpoints_.emplace(name, endpoint);
    endpoint_owners_.emplace(name, id);
  }
  hosts_[id] = Joined{hello, peer};
  ++joined_;
  if (reference_ < 0 || id == 0) reference_ = id;
  return {};
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
