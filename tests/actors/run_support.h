#ifndef ACTEX_TESTS_ACTORS_RUN_SUPPORT_H_
#define ACTEX_TESTS_ACTORS_RUN_SUPPORT_H_

// Test support for runs that survive (resume, uploads): a corpus with split documents
// and rejects, small shards, kill -9 loops and bit-for-bit comparison of two outputs.

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actex_process.h"
#include "actors/extract_options.h"

namespace actex {

// `documents` lines: pre-tokenized documents of 10 to 70 tokens (some split into
// windows by Options' --max-seq-len) and, every 23rd line, a reject.
std::string Corpus(int documents);

// The tiny fixture model, two sites of layers 0-1 in float32, small batches and
// 48 KB shards, one BLAS thread.
ExtractOptions SmallShardOptions(const std::string& corpus, const std::string& out);

// `actex extract` with `options`: the same flags a node takes, but --shards.
std::vector<std::string> ExtractArgs(const ExtractOptions& options);

// Same documents, same tokens, every activation equal to the last bit, same rejects.
void ExpectIdentical(const std::string& out, const std::string& reference_out);

// Waits until `host_dir`'s metadata.json lists at least one shard; false past `limit`.
bool WaitForFirstShard(const std::string& host_dir, std::chrono::seconds limit);

// Runs `start` again and again, killing it with SIGKILL after a random moment,
// until a run ends by itself (each process must then exit 0) or `max_kills` runs
// were killed (the next then runs to its end); returns how many runs were killed.
// Each moment is drawn between 1/50 and 1/8 of `uninterrupted`, the time the same
// work took in one go on this machine just before: a run cut that short cannot finish
// the work, so at least three runs are killed unless the machine became more than
// twice as fast in between.
int KillUntilDone(const std::function<std::vector<std::unique_ptr<ActexProcess>>()>& start,
                  std::chrono::milliseconds uninterrupted, std::mt19937& random, int max_kills);

}  // namespace actex

#endif  // ACTEX_TESTS_ACTORS_RUN_SUPPORT_H_
