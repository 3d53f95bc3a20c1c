#ifndef ACTEX_COORDINATION_LEASE_TABLE_H_
#define ACTEX_COORDINATION_LEASE_TABLE_H_

#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "storage/chunk_rule.h"

namespace actex {

// The coordinator's table of work leases. The corpus is cut into chunks of
// consecutive documents (chunk c holds documents [c*K, (c+1)*K) for the job's chunk
// size K, the same whatever the host count), and a data-parallel replica is granted
// the lowest free chunk whenever it has room for more, so fast replicas take more
// and slow ones fewer. A chunk is free, granted to one holder, or listed: a shard its
// holder's folder lists holds its documents, for good. A free chunk can be listed
// too, when a folder lists what the table never granted (its log was lost, or the
// output was written before leases).
//
// Independent jobs splitting one corpus (--machine-id M of --total-machines K) each
// lease only their own share of the chunks (MachineShare, storage/chunk_rule.h).
//
// Exactly once: a chunk is granted again only after its holder was released (lost,
// or the job restarted) without having listed it. A holder says it is listing a chunk
// before its folder lists it, so a holder lost in between keeps the chunks it was
// listing until its folder is seen again (kLost, then kReleased once its folder's
// listing was taken in). Every change is a Record, which the lease log (lease_log.h)
// appends before the change is acted on, so replaying a log rebuilds the table.
class LeaseTable {
 public:
  struct Record {
    enum class Kind {
      kGranted,   // chunk to holder
      kListing,   // chunk by holder: about to be listed in its folder
      kListed,    // chunk by holder
      kLost,      // holder: its chunks are free again, but those it was listing
      kReleased,  // holder: its unlisted chunks are free again
      kEnded,     // the corpus holds no document at or past chunk
    };
    Kind kind = Kind::kGranted;
    int64_t chunk = -1;  // kGranted, kListed, kEnded
    std::string holder;  // kGranted, kListed, kReleased: no spaces, not empty

    bool operator==(const Record&) const = default;
  };

  // The share of chunks this table deals: one machine's of an independent split.
  using Share = MachineShare;
  LeaseTable() = default;  // every chunk
  explicit LeaseTable(Share share) : share_(share), fresh_(share.FirstChunk()) {}

  // The grant of the lowest free chunk below the corpus's end to `holder`, not yet
  // applied; nullopt when every such chunk is granted or listed.
  std::optional<Record> NextGrant(const std::string& holder) const;

  // Whether `record` fits the table: refused are granting a chunk that is not the next
  // free one, listing one outside the share or granted to another holder (or listed already), an
  // end other than the one known, a negative chunk, a holder that is empty or holds a space.
  std::expected<void, std::string> Check(const Record& record) const;
  // Applies one change; refused as Check refuses it, leaving the table as it was.
  std::expected<void, std::string> Apply(const Record& record);

  // True once the end is known and every chunk of the share below it is listed.
  bool finished() const;
  std::optional<int64_t> end() const { return end_; }
  const Share& share() const { return share_; }
  int64_t listed_chunks() const { return static_cast<int64_t>(listed_.size()); }
  // Holders of at least one chunk granted and not listed.
  std::vector<std::string> holders() const;
  // Chunks granted to `holder` and not listed, lowest first.
  std::vector<int64_t> HeldBy(const std::string& holder) const;
  // Of those, the ones it said it is listing.
  std::vector<int64_t> BeingListedBy(const std::string& holder) const;
  // Who holds `chunk`, if it is granted and not listed.
  std::optional<std::string> HolderOf(int64_t chunk) const;
  bool IsListed(int64_t chunk) const { return listed_.contains(chunk); }

 private:
  Share share_;
  int64_t fresh_ = 0;           // every chunk of the share at or past it was never granted
  std::set<int64_t> returned_;  // free chunks below fresh_ (released, not listed)
  std::map<int64_t, std::string> granted_;
  std::map<std::string, std::set<int64_t>> held_;  // granted_, by holder
  std::set<int64_t> listed_;
  std::set<int64_t> listing_;  // granted, and being listed by their holder
  std::optional<int64_t> end_;
};

// "granted 12 host-1", "listing 12 host-1", "listed 12 host-1", "lost host-1",
// "released host-1", "ended 37".
std::string DescribeRecord(const LeaseTable::Record& record);

}  // namespace actex

#endif  // ACTEX_COORDINATION_LEASE_TABLE_H_
