#ifndef ACTEX_STORAGE_ACTIVATION_SHUFFLE_H_
#define ACTEX_STORAGE_ACTIVATION_SHUFFLE_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace actex {

struct ShuffleOptions {
  std::string source_dir;  // an extraction's output (host folders below it) or one host folder
  std::string out_dir;     // SHUFFLED: created; an unfinished shuffle there is resumed
  int64_t rows_per_file = 65536;
  uint64_t seed = 0;
  int64_t memory_bytes = int64_t{4} << 30;
  std::vector<std::string> sites;               // empty: every site of the source
  std::string dtype;                            // "F32", "F16", "BF16"; empty: the source's
  std::vector<int32_t> skip_token_ids;          // rows of these tokens are left out
  int64_t fail_after_bytes = -1;                // tests only: writes fail with ENOSPC after this
  std::function<void(const std::string&)> log;  // progress lines; may be empty
};

// Why a shuffle did not finish. Callers tell the kinds apart by `kind`, never by the
// message, which names the cause (flag, file, OS error) and what to do.
struct ShuffleError {
  enum class Kind {
    // Refused before anything was written: a bad parameter, a refused --to (empty, the
    // root, the source, inside it or holding it, another shuffle's or a non-empty
    // folder), a source that is not an extraction's output, or sites not in it.
    kRefused,
    // Stopped part way (disk full, a damaged shard, an I/O error): what was written
    // stays valid and the same parameters continue from the last record.
    kStopped,
  };
  Kind kind = Kind::kStopped;
  std::string message;

  static std::unexpected<ShuffleError> Refused(std::string message) {
    return std::unexpected(ShuffleError{Kind::kRefused, std::move(message)});
  }
  static std::unexpected<ShuffleError> Stopped(std::string message) {
    return std::unexpected(ShuffleError{Kind::kStopped, std::move(message)});
  }
};

struct ShuffleResult {
  int64_t rows = 0, skipped = 0, files = 0, bytes = 0;
  int buckets = 0;
  bool resumed = false;  // an unfinished shuffle of the same parameters was continued
};

// The sort key of source row `row` (numbered over the source's listed shards in
// order): the output holds the kept rows in increasing key order, ties by row.
// 64 random bits per row make that a uniformly random permutation fixed by the seed
// alone, whatever --memory, --rows-per-file or the number of buckets.
uint64_t ShuffleKey(uint64_t seed, int64_t row);

// Writes the rows of `source_dir` in random order into out_dir/shuffled_NNNNNN.safetensors,
// rows_per_file rows each (the last may be short), with out_dir/metadata.json.
// Two passes: every kept row goes, with its key, to the bucket file of its key
// range (out_dir/.shuffle_work/bucket_NNNNN.bin); then each bucket, about a
// quarter of memory_bytes, is read, sorted by key and written to the output files
// at its rows' places, and deleted. Progress is recorded after every source shard
// and every bucket, so a killed shuffle started again with the same parameters
// continues where it stopped. Errors name the cause; their kind says whether anything
// was written (kRefused: nothing; kStopped: files already listed stay valid).
std::expected<ShuffleResult, ShuffleError> ShuffleActivations(const ShuffleOptions& options);

}  // namespace actex

#endif  // ACTEX_STORAGE_ACTIVATION_SHUFFLE_H_
