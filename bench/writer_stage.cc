#include "bench/writer_stage.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <span>

#include "actors/document_assembler.h"
#include "bench/stopwatch.h"
#include "storage/crc32.h"
#include "storage/float_convert.h"
#include "storage/shard_writer.h"
#include "storage/site_statistics.h"

namespace actex {
namespace {

// `count` resid_post sites of kResidWidth, of the last layers of a 24-layer model.
std::vector<StoredSite> ResidSites(int count) {
  std::vector<StoredSite> sites;
  for (int i = 0; i < count; ++i) {
    sites.push_back(
        {.name = "blocks." + std::to_string(23 - i) + ".hook_resid_post", .width = kResidWidth});
  }
  return sites;
}

}  // namespace

std::vector<float> ResidActivations(int64_t tokens) {
  std::vector<float> values(static_cast<size_t>(tokens) * kResidWidth);
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& value : values) value = normal(random);
  return values;
}

void ReportWriterParts(const std::vector<float>& batch, int64_t tokens) {
  std::vector<uint16_t> rounded(batch.size());
  auto time = [&](auto&& work) {
    const auto start = BenchClock::now();
    int rounds = 0;
    while (SecondsSince(start) < 0.5 || rounds < 3) {
      work();
      ++rounds;
    }
    return tokens * rounds / SecondsSince(start);
  };
  const double rounding = time([&] { ConvertToBfloat16(batch, rounded.data()); });
  const double statistics = time([&] {
    SiteStatistics statistics(kResidWidth);
    statistics.AddRows(batch.data(), tokens, kBfloat16OverflowMagnitude);
  });
  uint32_t crc = 0;
  const double crc_rate =
      time([&] { crc = Crc32Update(crc, rounded.data(), rounded.size() * sizeof(uint16_t)); });
  std::printf(
      "  writer parts, 1 thread: f32->bf16 %.2fM tokens/s, "
      "statistics %.2fM tokens/s, crc32 %.2fM tokens/s (%.0f MB/s)\n",
      rounding / 1e6, statistics / 1e6, crc_rate / 1e6,
      crc_rate * kResidWidth * sizeof(uint16_t) / 1e6);
}

std::expected<double, std::string> WriteRate(const std::string& dir,
                                             const std::vector<float>& batch_values,
                                             int64_t batch_tokens, int64_t total_tokens,
                                             int document_tokens, const WriterRun& run) {
  const int site_count = run.sites;
  std::filesystem::remove_all(dir);
  auto chunks = ChunkRule::Of(64);
  if (!chunks) return std::unexpected(chunks.error());
  auto writer = ShardWriter::Open({.dir = dir,
                                   .shard_bytes = run.shard_bytes,
                                   .dtype = OutputDtype::kBF16,
                                   .sites = ResidSites(site_count),
                                   .chunks = *chunks,
                                   .seal_in_background = run.seal_in_background,
                                   .spill_threads = run.spill_threads});
  if (!writer) return std::unexpected(writer.error());
  DocumentAssembler assembler(ResidSites(site_count));
  auto sink = [&](const DocumentActivations& document) { return (*writer)->Add(document); };
  const std::span<const float> values(batch_values);
  int64_t doc_id = 0, written = 0;
  const auto start = BenchClock::now();
  while (written < total_tokens) {
    ActivationBatchMessage batch;
    for (int64_t row = 0; row + document_tokens <= batch_tokens; row += document_tokens) {
      batch.sequences.push_back({.doc_id = doc_id++,
                                 .doc_offset = 0,
                                 .length = document_tokens,
                                 .last_of_document = true});
    }
    batch.token_ids.assign(batch.sequences.size() * document_tokens, 17);
    const int64_t tokens = static_cast<int64_t>(batch.token_ids.size());
    const std::vector<SiteRows> rows(static_cast<size_t>(site_count),
                                     SiteRows(values.first(tokens * kResidWidth)));
    if (auto added = assembler.AddBatch(batch, rows, sink); !added)
      return std::unexpected(added.error());
    written += tokens;
    if (doc_id % 64 == 0) {
      if (auto ended = (*writer)->EndChunk(doc_id / 64 - 1, 64, ""); !ended)
        return std::unexpected(ended.error());
    }
  }
  if (doc_id % 64 != 0) {
    if (auto ended = (*writer)->EndChunk(doc_id / 64, doc_id % 64, ""); !ended)
      return std::unexpected(ended.error());
  }
  if (auto finished = (*writer)->Finish(true); !finished) return std::unexpected(finished.error());
  const double rate = written / SecondsSince(start);
  std::filesystem::remove_all(dir);
  return rate;
}

std::expected<double, std::string> DiskMegabytesPerSecond(const std::string& dir, int64_t bytes) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/disk-rate.tmp";
  std::vector<char> block(8 << 20, 'x');
  const auto start = BenchClock::now();
  {
    FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) return std::unexpected("cannot write " + path);
    for (int64_t done = 0; done < bytes; done += static_cast<int64_t>(block.size())) {
      std::fwrite(block.data(), 1, block.size(), file);
    }
    std::fflush(file);
    fsync(fileno(file));
    std::fclose(file);
  }
  const double rate = bytes / SecondsSince(start) / 1e6;
  std::filesystem::remove(path);
  return rate;
}

}  // namespace actex
