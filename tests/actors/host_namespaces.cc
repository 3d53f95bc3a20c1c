#include "host_namespaces.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <string>

namespace actex {
namespace {

// Every namespace this support makes is named "actex-net-PID-...".
constexpr char kNamePrefix[] = "actex-net-";
// The nftables table a cut lives in, inside the cut host's namespace.
constexpr char kCutTable[] = "actex_partition";

// Runs `command` under sh; its output (stdout and stderr) names what failed.
std::expected<std::string, std::string> Shell(const std::string& command) {
  FILE* pipe = popen(("(" + command + "\n) 2>&1").c_str(), "r");
  if (pipe == nullptr) return std::unexpected("cannot run: " + command);
  std::string output;
  char buffer[512];
  while (size_t read = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, read);
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return std::unexpected("`" + command + "` failed: " + output);
  }
  return output;
}

// Removes the namespaces of earlier runs whose process is gone (killed before its
// destructor ran): their names carry that process's id.
void RemoveLeftovers() {
  auto listed = Shell("ip netns list");
  if (!listed) return;
  std::istringstream lines(*listed);
  std::string name;
  while (lines >> name) {
    if (name.rfind(kNamePrefix, 0) != 0) continue;
    const pid_t pid = std::atoi(name.c_str() + sizeof(kNamePrefix) - 1);
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) (void)Shell("ip netns del " + name);
  }
}

}  // namespace

std::optional<std::string> HostNamespaces::WhyUnavailable() {
  if (geteuid() != 0) return "the network tests make network namespaces, which needs root";
  const std::string probe = kNamePrefix + std::to_string(getpid()) + "-probe";
  if (auto made = Shell("ip netns add " + probe); !made) {
    return "cannot make a network namespace here: " + made.error();
  }
  (void)Shell("ip netns del " + probe);
  if (auto nft = Shell("command -v nft"); !nft) return "nft (nftables) is not installed";
  return std::nullopt;
}

HostNamespaces::HostNamespaces(int hosts)
    : hosts_(hosts), prefix_(kNamePrefix + std::to_string(getpid()) + "-") {}

std::expected<std::unique_ptr<HostNamespaces>, std::string> HostNamespaces::Create(int hosts) {
  RemoveLeftovers();
  std::unique_ptr<HostNamespaces> made(new HostNamespaces(hosts));
  const std::string hub = made->prefix_ + "hub";
  auto run = [&](const std::string& command) { return Shell(command); };
  if (auto added = run("ip netns add " + hub); !added) return std::unexpected(added.error());
  made->made_.push_back(hub);
  for (const std::string& step :
       {"ip -n " + hub + " link add br0 type bridge", "ip -n " + hub + " link set br0 up"}) {
    if (auto done = run(step); !done) return std::unexpected(done.error());
  }
  for (int host = 0; host < hosts; ++host) {
    const std::string name = made->HostNamespace(host);
    if (auto added = run("ip netns add " + name); !added) return std::unexpected(added.error());
    made->made_.push_back(name);
    // The hub's end of the pair: a name of at most 15 characters, unique per run.
    const std::string port = "ax" + std::to_string(getpid()) + "h" + std::to_string(host);
    for (const std::string& step : {
             "ip link add " + port + " netns " + hub + " type veth peer name eth0 netns " + name,
             "ip -n " + hub + " link set " + port + " master br0 up",
             "ip -n " + name + " addr add " + made->Address(host) + "/24 dev eth0",
             "ip -n " + name + " link set eth0 up",
             "ip -n " + name + " link set lo up",
         }) {
      if (auto done = run(step); !done) return std::unexpected(done.error());
    }
  }
  return made;
}

HostNamespaces::~HostNamespaces() {
  for (const std::string& name : made_) {
    if (auto removed = Shell("ip netns del " + name); !removed) {
      std::fprintf(stderr, "%s\n", removed.error().c_str());
    }
  }
}

std::string HostNamespaces::HostNamespace(int host) const {
  return prefix_ + "h" + std::to_string(host);
}

std::string HostNamespaces::Address(int host) const {
  return "10.77.0." + std::to_string(host + 1);
}

std::vector<std::string> HostNamespaces::Launcher(int host) const {
  return {"ip", "netns", "exec", HostNamespace(host)};
}

std::vector<int> HostNamespaces::Others(int host) const {
  std::vector<int> others;
  for (int other = 0; other < hosts_; ++other) {
    if (other != host) others.push_back(other);
  }
  return others;
}

std::expected<void, std::string> HostNamespaces::Cut(int host, const std::vector<int>& peers) {
  std::string addresses;
  for (int peer : peers) addresses += (addresses.empty() ? "" : ", ") + Address(peer);
  (void)Heal(host);
  // Dropped, not refused: the peers see silence, as behind a cut cable.
  const std::string rules = std::string("table inet ") + kCutTable +
                            " {\n"
                            "  chain input { type filter hook input priority 0; ip saddr { " +
                            addresses +
                            " } drop; }\n"
                            "  chain output { type filter hook output priority 0; ip daddr { " +
                            addresses + " } drop; }\n}\n";
  auto cut =
      Shell("ip netns exec " + HostNamespace(host) + " nft -f - <<'RULES'\n" + rules + "RULES\n");
  if (!cut) return std::unexpected(cut.error());
  return {};
}

std::expected<void, std::string> HostNamespaces::Heal(int host) {
  auto healed =
      Shell("ip netns exec " + HostNamespace(host) + " nft delete table inet " + kCutTable);
  if (!healed) return std::unexpected(healed.error());
  return {};
}

}  // namespace actex
