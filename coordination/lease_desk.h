#ifndef ACTEX_COORDINATION_LEASE_DESK_H_
#define ACTEX_COORDINATION_LEASE_DESK_H_

#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace actex {

// The coordinator's side of work leases (PROTOCOL.md "Leases"), as the coordinator
// session sees it: who holds which chunk of the corpus, kept durable by whoever
// implements it (job_leases.h keeps a lease log in host 0's folder). The
// session calls it from one thread. Every error is one the job cannot go on with
// (the log cannot be written, a host's folder contradicts the table): the session
// ends the job with it, and what is listed stays.
class LeaseDesk {
 public:
  virtual ~LeaseDesk() = default;

  // Once every host joined, before any grant: `published` holds what each host's
  // Hello published, among it the chunks its folder lists already (a resumed job).
  // Those are listed; every lease of an earlier run is void.
  virtual std::expected<void, std::string> Begin(
      const std::map<std::string, std::string>& published) = 0;
  // A node that took a lost host's place: what its Hello published.
  virtual std::expected<void, std::string> Rejoin(
      int host, const std::map<std::string, std::string>& published) = 0;

  // The chunk `host` now holds, or nullopt when none is free. `corpus_chunks` >= 0
  // tells where the corpus ends.
  virtual std::expected<std::optional<int64_t>, std::string> Grant(int host,
                                                                   int64_t corpus_chunks) = 0;
  // `host` is about to list `chunks`: false when it does not hold them all.
  virtual std::expected<bool, std::string> BeginListing(int host,
                                                        const std::vector<int64_t>& chunks) = 0;
  virtual std::expected<void, std::string> List(int host, const std::vector<int64_t>& chunks) = 0;
  // `host` was lost: the chunks it held are free again, but those it was listing,
  // which wait for its folder to be seen again (Rejoin, or the next Begin).
  virtual std::expected<void, std::string> Lose(int host) = 0;

  // Replication to the standby coordinator (PROTOCOL.md "Standby"). A desk that keeps
  // no log has nothing to replicate, and cannot be a standby's.
  // How many records the desk's log holds, and their lines from number `first` on.
  virtual uint64_t records() const { return 0; }
  virtual std::vector<std::string> RecordsSince(uint64_t /*first*/) const { return {}; }
  // On the standby: appends what host 0's desk recorded (RecordsSince's lines, in
  // order), so both tables agree; refused when they do not fit this table.
  virtual std::expected<void, std::string> Replicate(const std::vector<std::string>& /*records*/) {
    return std::unexpected(std::string("this lease desk keeps no log to replicate into"));
  }
  // After a takeover: what host `host` says it holds and listed. A listed chunk the
  // table does not know as listed is listed now (its report was lost with host 0).
  // Returns the chunks the table gives the host that it does not know of (their
  // grants were lost with host 0): the host's next requests are answered with them.
  virtual std::expected<std::vector<int64_t>, std::string> Reattach(
      int /*host*/, const std::vector<int64_t>& /*held*/, const std::vector<int64_t>& /*listed*/) {
    return std::vector<int64_t>{};
  }

  // True once the corpus's end is known and every chunk below it is listed.
  virtual bool finished() const = 0;
  // True when no host in the job has anything left to do: the end is known, no chunk
  // is free, and every one not listed waits for a lost host's folder.
  virtual bool stalled() const = 0;
  // "37 of 40 chunks listed" (or "of ?" before the end is known), and which chunks
  // wait for a lost host's folder, for messages.
  virtual std::string Progress() const = 0;
};

}  // namespace actex

#endif  // ACTEX_COORDINATION_LEASE_DESK_H_
