#ifndef ACTEX_BENCH_WRITER_STAGE_H_
#define ACTEX_BENCH_WRITER_STAGE_H_

// bench_pipeline_stages' writer stage: the writer actor's work for resid sites of
// Qwen2.5-0.5B's width, in tokens/s, and what the output folder's file system takes.

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace actex {

inline constexpr int kResidWidth = 896;  // Qwen2.5-0.5B's hidden size: one resid site

// Rows of plausible residual values, [tokens, kResidWidth], from a fixed generator.
std::vector<float> ResidActivations(int64_t tokens);

// Prints the writer's per-batch work alone, in tokens/s on one thread: rounding to
// bfloat16, statistics, CRC-32 of the rounded bytes.
void ReportWriterParts(const std::vector<float>& batch, int64_t tokens);

// How the writer is run: its sites (each the same rows), its shards' size, where it
// seals them and how many threads spill its sites.
struct WriterRun {
  int sites = 1;
  int64_t shard_bytes = int64_t{256} << 20;
  bool seal_in_background = false;
  int spill_threads = 1;
};

// The writer actor's work from the batches' float32 frames (`batch_values`, the rows of
// one batch of `batch_tokens`) to listed shard files in `dir`: the DocumentAssembler,
// ShardWriter::Add and EndChunk (64-document chunks of `document_tokens`-token
// documents), Finish, until `total_tokens` are written. Returns tokens/s; the folder is
// removed afterwards.
std::expected<double, std::string> WriteRate(const std::string& dir,
                                             const std::vector<float>& batch_values,
                                             int64_t batch_tokens, int64_t total_tokens,
                                             int document_tokens, const WriterRun& run);

// What the file system of `dir` takes, in MB/s: `bytes` written in 8 MiB writes and
// fsynced.
std::expected<double, std::string> DiskMegabytesPerSecond(const std::string& dir, int64_t bytes);

}  // namespace actex

#endif  // ACTEX_BENCH_WRITER_STAGE_H_
