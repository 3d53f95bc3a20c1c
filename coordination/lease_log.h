#ifndef ACTEX_COORDINATION_LEASE_LOG_H_
#define ACTEX_COORDINATION_LEASE_LOG_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coordination/lease_table.h"
#include "storage/file_io.h"

namespace actex {

// The lease table on disk: an append-only text file the coordinator keeps in host
// 0's output folder, so the table survives the coordinator's own restart. Its first
// line names the format and the chunk size ("actex-leases 1 chunk_docs 64"); every
// further line is one record as DescribeRecord writes it ("granted 12 replica-1"),
// appended and synced to the disk before the change is acted on.
class LeaseLog {
 public:
  // Opens the log at `path`, creating it when absent, and replays it into `table`
  // (which must be empty). A last line without its newline is what a crash
  // mid-append leaves: it is cut off. Refused, naming the path and the line: another
  // format or chunk size, a line that is not a record, a record the table refuses.
  static std::expected<std::unique_ptr<LeaseLog>, std::string> Open(const std::string& path,
                                                                    int64_t chunk_docs,
                                                                    LeaseTable* table);

  // Applies `record` to the table once it is on disk. A write error (disk full)
  // names the path; the table is then left as it was.
  std::expected<void, std::string> Append(const LeaseTable::Record& record);
  // Appends `records` with one write and one sync (a standby's copy receives them in
  // batches); refused as a whole, leaving the log and the table as they were, when
  // one of them does not fit the table as the ones before it leave it.
  std::expected<void, std::string> AppendAll(const std::vector<LeaseTable::Record>& records);

  int64_t records() const { return static_cast<int64_t>(lines_.size()); }  // replayed and appended
  // Every record's line (without its newline), replayed and appended, in order.
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  LeaseLog() = default;

  std::string path_;
  ScopedFd fd_;
  LeaseTable* table_ = nullptr;
  std::vector<std::string> lines_;
};

// A chunk number as the log writes it ("12"); refused: anything else, negatives.
std::expected<int64_t, std::string> ParseChunkNumber(std::string_view text);

// Parses one record line (without its newline) as DescribeRecord wrote it.
std::expected<LeaseTable::Record, std::string> ParseRecord(const std::string& line);

}  // namespace actex

#endif  // ACTEX_COORDINATION_LEASE_LOG_H_
