#include "coordination/lease_table.h"

#include <iterator>

namespace actex {

namespace {

bool ValidHolder(const std::string& holder) {
  return !holder.empty() && holder.find_first_of(" \t\r\n") == std::string::npos;
}

}  // namespace

std::optional<LeaseTable::Record> LeaseTable::NextGrant(const std::string& holder) const {
  int64_t chunk = fresh_;
  if (!returned_.empty()) {
    chunk = *returned_.begin();
  } else {
    // Chunks a folder listed without a grant (adopted) are passed over.
    while (listed_.contains(chunk)) chunk = share_.NextChunk(chunk);
  }
  if (end_ && chunk >= *end_) return std::nullopt;
  return Record{Record::Kind::kGranted, chunk, holder};
}

std::expected<void, std::string> LeaseTable::Check(const Record& record) const {
  const bool needs_holder = record.kind != Record::Kind::kEnded;
  const bool needs_chunk =
      record.kind != Record::Kind::kReleased && record.kind != Record::Kind::kLost;
  if (needs_holder && !ValidHolder(record.holder)) {
    return std::unexpected("holder \"" + record.holder + "\" is empty or holds a space");
  }
  if (needs_chunk && record.chunk < 0) {
    return std::unexpected("chunk " + std::to_string(record.chunk) + " is negative");
  }
  switch (record.kind) {
    case Record::Kind::kGranted:
      // Grants come lowest free chunk first, so a log never skips ahead.
      if (auto next = NextGrant(record.holder); next && next->chunk == record.chunk) return {};
      if (IsListed(record.chunk))
        return std::unexpected(DescribeRecord(record) + ": listed already");
      if (auto holder = HolderOf(record.chunk)) {
        return std::unexpected(DescribeRecord(record) + ": granted to " + *holder + " already");
      }
      return std::unexpected(DescribeRecord(record) + ": not the next free chunk");
    case Record::Kind::kListed: {
      // A chunk held by no one may be listed too: a folder that lists what the
      // log does not know (a lost log, an output written before leases).
      if (!share_.Owns(record.chunk)) {
        return std::unexpected(
            DescribeRecord(record) + ": not a chunk of this job, which takes chunks c with c % " +
            std::to_string(share_.machines) + " == " + std::to_string(share_.machine));
      }
      const std::optional<std::string> holder = HolderOf(record.chunk);
      if (!IsListed(record.chunk) && (!holder || *holder == record.holder)) return {};
      if (IsListed(record.chunk))
        return std::unexpected(DescribeRecord(record) + ": listed already");
      return std::unexpected(DescribeRecord(record) + ": the chunk is granted to " + *holder);
    }
    case Record::Kind::kListing:
      if (HolderOf(record.chunk) == record.holder) return {};
      return std::unexpected(DescribeRecord(record) + ": the chunk is not granted to " +
                             record.holder);
    case Record::Kind::kLost:
    case Record::Kind::kReleased:
      return {};
    case Record::Kind::kEnded:
      if (!end_ || *end_ == record.chunk) return {};
      return std::unexpected(DescribeRecord(record) + ": the corpus was known to end at chunk " +
                             std::to_string(*end_));
  }
  return std::unexpected(std::string("a record of an unknown kind"));
}

std::expected<void, std::string> LeaseTable::Apply(const Record& record) {
  if (auto fits = Check(record); !fits) return fits;
  switch (record.kind) {
    case Record::Kind::kGranted:
      if (record.chunk >= fresh_) {
        fresh_ = share_.NextChunk(record.chunk);
      } else {
        returned_.erase(record.chunk);
      }
      granted_[record.chunk] = record.holder;
      held_[record.holder].insert(record.chunk);
      break;
    case Record::Kind::kListing:
      listing_.insert(record.chunk);
      break;
    case Record::Kind::kListed:
      if (granted_.erase(record.chunk) > 0) held_[record.holder].erase(record.chunk);
      listing_.erase(record.chunk);
      returned_.erase(record.chunk);
      listed_.insert(record.chunk);
      break;
    case Record::Kind::kLost:
    case Record::Kind::kReleased:
      if (auto held = held_.find(record.holder); held != held_.end()) {
        const bool keep_listing = record.kind == Record::Kind::kLost;
        for (auto chunk = held->second.begin(); chunk != held->second.end();) {
          if (keep_listing && listing_.contains(*chunk)) {
            ++chunk;
            continue;
          }
          granted_.erase(*chunk);
          listing_.erase(*chunk);
          if (!end_ || *chunk < *end_) returned_.insert(*chunk);
          chunk = held->second.erase(chunk);
        }
      }
      break;
    case Record::Kind::kEnded:
      end_ = record.chunk;
      returned_.erase(returned_.lower_bound(record.chunk), returned_.end());
      // A chunk granted past the end (before the end was known) holds no work.
      for (auto past = granted_.lower_bound(record.chunk); past != granted_.end();) {
        held_[past->second].erase(past->first);
        listing_.erase(past->first);
        past = granted_.erase(past);
      }
      break;
  }
  return {};
}

bool LeaseTable::finished() const {
  if (!end_) return false;
  const auto below_end = std::distance(listed_.begin(), listed_.lower_bound(*end_));
  return below_end == share_.ChunksBelow(*end_);
}

std::vector<int64_t> LeaseTable::HeldBy(const std::string& holder) const {
  auto held = held_.find(holder);
  if (held == held_.end()) return {};
  return {held->second.begin(), held->second.end()};
}

std::vector<int64_t> LeaseTable::BeingListedBy(const std::string& holder) const {
  std::vector<int64_t> chunks;
  for (int64_t chunk : HeldBy(holder)) {
    if (listing_.contains(chunk)) chunks.push_back(chunk);
  }
  return chunks;
}

std::vector<std::string> LeaseTable::holders() const {
  std::vector<std::string> names;
  for (const auto& [holder, chunks] : held_) {
    if (!chunks.empty()) names.push_back(holder);
  }
  return names;
}

std::optional<std::string> LeaseTable::HolderOf(int64_t chunk) const {
  auto granted = granted_.find(chunk);
  if (granted == granted_.end()) return std::nullopt;
  return granted->second;
}

std::string DescribeRecord(const LeaseTable::Record& record) {
  using Kind = LeaseTable::Record::Kind;
  switch (record.kind) {
    case Kind::kGranted:
      return "granted " + std::to_string(record.chunk) + " " + record.holder;
    case Kind::kListing:
      return "listing " + std::to_string(record.chunk) + " " + record.holder;
    case Kind::kListed:
      return "listed " + std::to_string(record.chunk) + " " + record.holder;
    case Kind::kLost:
      return "lost " + record.holder;
    case Kind::kReleased:
      return "released " + record.holder;
    case Kind::kEnded:
      return "ended " + std::to_string(record.chunk);
  }
  return "unknown";
}

}  // namespace actex
