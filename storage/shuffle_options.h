#ifndef ACTEX_STORAGE_SHUFFLE_OPTIONS_H_
#define ACTEX_STORAGE_SHUFFLE_OPTIONS_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "storage/command_error.h"

namespace actex {

// What `actex shuffle` is asked (storage/activation_shuffle.h): shared by the shuffle
// and its journal. Why it did not finish is a CommandError (storage/command_error.h).

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

}  // namespace actex

#endif  // ACTEX_STORAGE_SHUFFLE_OPTIONS_H_
