#ifndef ACTEX_STORAGE_SHUFFLE_OPTIONS_H_
#define ACTEX_STORAGE_SHUFFLE_OPTIONS_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace actex {

// What `actex shuffle` is asked (storage/activation_shuffle.h), and why it did not
// finish: shared by the shuffle and its journal.

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

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLE_OPTIONS_H_
