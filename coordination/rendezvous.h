#ifndef ACTEX_COORDINATION_RENDEZVOUS_H_
#define ACTEX_COORDINATION_RENDEZVOUS_H_

#include <chrono>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transport/schema.h"

namespace actex {

// The coordinator's book of who joined a job, without any sockets: it checks each
// HelloMessage against the job and the hosts already in, and merges the endpoint
// tables. Every refusal is a reason to end the whole job, worded for the user.
//
// Which host is the reference: host 0 once it joined, until then the first host that
// joined. Every host admitted so far agrees with the reference, so when host 0
// arrives late and differs, the difference is reported against the earlier host
// ("host 1: --layers differs: host 0 has 20,21 but host 1 has 20"): in every reason
// host 0 is the one whose values count as right, since host 0's command line is the
// one the coordinator runs with.
class Rendezvous {
 public:
  // Hosts 0 to num_hosts - 1 must join; ids up to max_hosts - 1 (when above
  // num_hosts) are added hosts, which join the running job (CheckReturning).
  explicit Rendezvous(int num_hosts, int max_hosts = 0);

  // Admits `hello` from the node at `peer` (an address, for messages), or returns
  // why the job must end: num_hosts differs from the job's, host id out of range or
  // already taken, software version or a fingerprint field differs from the
  // reference, or an endpoint name is already published by another host with
  // another value. A refused Hello leaves the book unchanged. A tcp endpoint bound
  // to every interface (tcp://0.0.0.0:P) is published with `peer`'s host instead.
  std::expected<void, std::string> Admit(const HelloMessage& hello, const std::string& peer);

  // Checks `hello` from a node joining the running job: one taking the place of host
  // `hello.host_id`, which joined before and was lost, or an added host. The job's
  // size, the id, the software version and the fingerprint as for Admit; its
  // endpoints are not merged (the job's table stands; see Rebind). A refusal concerns
  // that node alone. Only after the rendezvous completed.
  std::expected<void, std::string> CheckReturning(const HelloMessage& hello,
                                                  const std::string& peer) const;

  // Makes the endpoints `hello` publishes (a wildcard address made `peer`'s) host
  // `hello.host_id`'s, replacing those it published before: Admit's merge, and a host
  // of a replica that spans hosts coming back with the rest of its replica (checked by
  // CheckReturning; its ring ports are new). Refused, the book unchanged, when a name
  // is another host's or a wildcard's address is unknown.
  std::expected<void, std::string> Rebind(const HelloMessage& hello, const std::string& peer);

  // The hosts admitted so far, by id, as host 0's coordinator replicates them to its
  // standby.
  std::vector<JoinedHost> Admitted() const;
  // The book of a rendezvous that completed at host 0's coordinator, for a standby
  // that took the job over: `joined` (from Admitted) admitted again in order.
  static std::expected<Rendezvous, std::string> Replay(int num_hosts, int max_hosts,
                                                       const std::vector<JoinedHost>& joined);

  int num_hosts() const { return static_cast<int>(hosts_.size()); }
  int max_hosts() const { return max_hosts_; }
  bool is_added(int host_id) const { return host_id >= num_hosts() && host_id < max_hosts_; }
  int joined() const { return joined_; }
  bool complete() const { return joined_ == num_hosts(); }
  bool has_joined(int host_id) const;
  // The union of every admitted host's endpoints.
  const std::map<std::string, std::string>& endpoints() const { return endpoints_; }
  // The fingerprint every admitted host agreed on (the reference's); empty before
  // anyone joined.
  const std::map<std::string, std::string>& fingerprint() const;
  // "host 3 never joined within 300 s" / "hosts 3, 5 never joined within 300 s".
  std::string MissingHostsReason(std::chrono::milliseconds waited) const;

 private:
  struct Joined {
    HelloMessage hello;
    std::string peer;
  };
  // Why `other` (host other_id) cannot run with the reference host, or nothing.
  static std::optional<std::string> Disagreement(const HelloMessage& reference,
                                                 const HelloMessage& other);

  std::vector<std::optional<Joined>> hosts_;
  int joined_ = 0;
  int max_hosts_ = 0;
  int reference_ = -1;  // host id of the reference; -1 before anyone joined
  std::map<std::string, std::string> endpoints_;
  std::map<std::string, int> endpoint_owners_;  // endpoint name -> host id
};

// Every field in which fingerprint `other` differs from `reference`, in name order:
// "--layers differs: host 0 has 20,21 but host 2 has 20; ..." with the two names given
// ("host 0", "host 2"); "" when they agree.
std::string FingerprintDifferences(const std::map<std::string, std::string>& reference,
                                   std::string_view reference_name,
                                   const std::map<std::string, std::string>& other,
                                   std::string_view other_name);

// "300 s", "1.5 s", "0.3 s": a duration as people read it in messages.
std::string SecondsText(std::chrono::milliseconds duration);

}  // namespace actex

#endif  // ACTEX_COORDINATION_RENDEZVOUS_H_
