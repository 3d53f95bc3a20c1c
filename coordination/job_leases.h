#ifndef ACTEX_COORDINATION_JOB_LEASES_H_
#define ACTEX_COORDINATION_JOB_LEASES_H_

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordination/lease_desk.h"
#include "coordination/lease_log.h"
#include "coordination/lease_table.h"

namespace actex {

// The lease desk of a job whose replicas each lie on one host: host h's replica
// holds leases as "host-h". The table lives in a lease log (lease_log.h) in
// host 0's folder, so a restarted job knows what was granted and listed before;
// what the hosts' folders list (published at the rendezvous under ListedKey) is
// the final word, as a host may have listed a chunk whose report never arrived.
class JobLeases : public LeaseDesk {
 public:
  // `share`: the chunks this job leases (--machine-id of --total-machines).
  static std::expected<std::unique_ptr<JobLeases>, std::string> Open(const std::string& log_path,
                                                                     int64_t chunk_docs,
                                                                     LeaseTable::Share share = {});
  // The standby coordinator's copy of host 0's log at `path`, started afresh: host 0
  // sends it from its first record (Replicate), and it is the job's desk once the
  // standby took over.
  static std::expected<std::unique_ptr<JobLeases>, std::string> OpenStandbyCopy(
      const std::string& path, int64_t chunk_docs, LeaseTable::Share share = {});
  // The rendezvous key under which host `host` publishes the chunks its folder lists.
  static std::string ListedKey(int host);
  // "0-2,4,7-9": ascending chunks as runs; "" for none.
  static std::string FormatChunks(const std::vector<int64_t>& chunks);
  static std::expected<std::vector<int64_t>, std::string> ParseChunks(const std::string& text);

  std::expected<void, std::string> Begin(
      const std::map<std::string, std::string>& published) override;
  std::expected<void, std::string> Rejoin(
      int host, const std::map<std::string, std::string>& published) override;
  std::expected<std::optional<int64_t>, std::string> Grant(int host,
                                                           int64_t corpus_chunks) override;
  std::expected<bool, std::string> BeginListing(int host,
                                                const std::vector<int64_t>& chunks) override;
  std::expected<void, std::string> List(int host, const std::vector<int64_t>& chunks) override;
  std::expected<void, std::string> Lose(int host) override;
  uint64_t records() const override { return log_->lines().size(); }
  std::vector<std::string> RecordsSince(uint64_t first) const override;
  std::expected<void, std::string> Replicate(const std::vector<std::string>& records) override;
  std::expected<std::vector<int64_t>, std::string> Reattach(
      int host, const std::vector<int64_t>& held, const std::vector<int64_t>& listed) override;
  bool finished() const override { return table_.finished(); }
  bool stalled() const override;
  std::string Progress() const override;

 private:
  JobLeases() = default;
  static std::string Holder(int host) { return "host-" + std::to_string(host); }
  // Lists what `host`'s folder lists, as published under ListedKey(host).
  std::expected<void, std::string> Adopt(int host,
                                         const std::map<std::string, std::string>& published);

  LeaseTable table_;
  std::set<std::string> lost_;  // holders lost and not seen since
  std::unique_ptr<LeaseLog> log_;
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_JOB_LEASES_H_
