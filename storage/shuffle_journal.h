#ifndef ACTEX_STORAGE_SHUFFLE_JOURNAL_H_
#define ACTEX_STORAGE_SHUFFLE_JOURNAL_H_

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "storage/file_io.h"
#include "storage/shuffle_options.h"
#include "storage/shuffle_rows.h"

namespace actex {

// What a shuffle records so that a killed one continues where it stopped:
// out_dir/metadata.json (the output's listing, with the parameters a resumed shuffle
// must share) and work_dir/state.json (how far scatter and permute got, the bucket
// count and the bytes each bucket holds).
struct ShuffleJournal {
  nlohmann::json metadata;
  nlohmann::json state;            // null when the shuffle is complete
  bool resumed = false;            // an earlier shuffle of the same parameters is continued
  std::set<int64_t> listed_files;  // output files metadata.json already lists
};

// Continues the shuffle in options.out_dir when its metadata.json names the same
// parameters (refused when they differ), or starts one afresh: sizes its buckets to a
// quarter of options.memory_bytes each (refused when that takes more than 4096), and
// writes both files. `entry_bytes` is one row's bytes in a bucket (key and record).
// Refusals (another shuffle or other files in out_dir, too little memory) are
// kRefused and leave out_dir as it was; read and write failures are kStopped.
std::expected<ShuffleJournal, CommandError> OpenShuffleJournal(
    const ShuffleOptions& options, const SourceOutput& source, const RecordLayout& layout,
    const std::string& work_dir, int64_t entry_bytes, WriteBudget* budget);

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLE_JOURNAL_H_
