#ifndef ACTEX_TESTS_ACTORS_HOST_NAMESPACES_H_
#define ACTEX_TESTS_ACTORS_HOST_NAMESPACES_H_

// Test support for the `network` tests: Linux network namespaces standing in for
// separate machines, so that a test can cut the links between hosts for real.

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace actex {

// One network namespace per host, each with one address (10.77.0.{host + 1}/24) on a
// veth pair whose other end is on a bridge in a hub namespace of its own. Nothing else
// is routed: the hosts reach one another and nothing outside. The namespaces' names
// carry this process's id, so runs side by side never meet; the destructor removes
// them (and those an earlier run killed before its destructor left behind).
class HostNamespaces {
 public:
  // Why no namespace can be made here (not root, no `ip netns`), or nullopt when they
  // can: the `network` tests skip on such a machine.
  static std::optional<std::string> WhyUnavailable();

  // Makes the hub and `hosts` host namespaces, or says which command failed.
  static std::expected<std::unique_ptr<HostNamespaces>, std::string> Create(int hosts);
  ~HostNamespaces();
  HostNamespaces(const HostNamespaces&) = delete;
  HostNamespaces& operator=(const HostNamespaces&) = delete;

  // Host `host`'s address, e.g. "10.77.0.1" for host 0.
  std::string Address(int host) const;
  // The command line prefix that runs a program inside host `host`'s namespace.
  std::vector<std::string> Launcher(int host) const;

  // Drops every packet between host `host` and each of `peers` (by their addresses),
  // inside host `host`'s namespace: tcp connections stay open and stall, as behind a
  // cut cable. Replaces the host's earlier cut.
  std::expected<void, std::string> Cut(int host, const std::vector<int>& peers);
  // Every host but `host`.
  std::vector<int> Others(int host) const;
  // Removes host `host`'s cut: the stalled connections resume.
  std::expected<void, std::string> Heal(int host);

 private:
  explicit HostNamespaces(int hosts);
  std::string HostNamespace(int host) const;

  int hosts_ = 0;
  std::string prefix_;             // "actex-net-PID-", every namespace's name begins so
  std::vector<std::string> made_;  // namespaces made, removed by the destructor
};

}  // namespace actex

#endif  // ACTEX_TESTS_ACTORS_HOST_NAMESPACES_H_
