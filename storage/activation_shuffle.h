#ifndef ACTEX_STORAGE_ACTIVATION_SHUFFLE_H_
#define ACTEX_STORAGE_ACTIVATION_SHUFFLE_H_

#include <cstdint>
#include <expected>

#include "storage/shuffle_options.h"

namespace actex {

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
std::expected<ShuffleResult, CommandError> ShuffleActivations(const ShuffleOptions& options);

}  // namespace actex

#endif  // ACTEX_STORAGE_ACTIVATION_SHUFFLE_H_
