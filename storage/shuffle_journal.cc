#include "storage/shuffle_journal.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/shuffled_output.h"

namespace actex {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A bucket is a quarter of --memory; with more buckets than this the scatter's buffers
// (a quarter of --memory over all buckets) would hold a row or two each.
constexpr int kMaxBuckets = 4096;

// The parameters a resumed shuffle must share with the one it continues.
json Parameters(const ShuffleOptions& options, const SourceOutput& source,
                const RecordLayout& layout) {
  json shards = json::array();
  for (const SourceShard& shard : source.shards) {
    shards.push_back({{"file", shard.file},
                      {"bytes", shard.bytes},
                      {"crc32", FormatCrc32(shard.crc32)},
                      {"tokens", shard.tokens}});
  }
  json sites = json::array();
  for (const auto& [name, width] : layout.sites)
    sites.push_back({{"name", name}, {"width", width}});
  std::set<int32_t> skip(options.skip_token_ids.begin(), options.skip_token_ids.end());
  return {{"source_shards", shards},
          {"seed", options.seed},
          {"rows_per_file", options.rows_per_file},
          {"sites", sites},
          {"dtype", DtypeName(layout.dtype)},
          {"skip_token_ids", skip}};
}

}  // namespace

std::expected<ShuffleJournal, ShuffleError> OpenShuffleJournal(
    const ShuffleOptions& options, const SourceOutput& source, const RecordLayout& layout,
    const std::string& work_dir, int64_t entry_bytes, WriteBudget* budget) {
  const json parameters = Parameters(options, source, layout);
  ShuffleJournal journal;
  std::error_code error;
  const std::string metadata_path = options.out_dir + "/metadata.json";
  if (fs::exists(metadata_path, error)) {
    auto text = ReadWholeFile(metadata_path);
    if (!text) return ShuffleError::Stopped(text.error());
    journal.metadata = json::parse(*text, nullptr, false);
    if (journal.metadata.is_discarded() ||
        journal.metadata.value("format", "") != kShuffledFormat ||
        journal.metadata.value("parameters", json()) != parameters) {
      return ShuffleError::Refused(
          options.out_dir +
          " already holds another shuffle (other source, seed, sites, dtype, "
          "skipped tokens or rows per file): remove it or choose another --to");
    }
    journal.resumed = true;
    if (journal.metadata.value("complete", false)) return journal;
    auto state_text = ReadWholeFile(work_dir + "/state.json");
    if (!state_text) return ShuffleError::Stopped(state_text.error());
    journal.state = json::parse(*state_text, nullptr, false);
    if (journal.state.is_discarded())
      return ShuffleError::Stopped(work_dir + "/state.json is not valid JSON");
    for (const json& file : journal.metadata["files"]) {
      journal.listed_files.insert(file["index"].get<int64_t>());
    }
    return journal;
  }
  const int64_t estimate = source.tokens * entry_bytes;
  const int64_t bucket_target = std::max<int64_t>(1, options.memory_bytes / 4);
  const int64_t buckets = std::max<int64_t>(1, (estimate + bucket_target - 1) / bucket_target);
  if (buckets > kMaxBuckets) {
    return ShuffleError::Refused("--memory " + std::to_string(options.memory_bytes) +
                                 " bytes is too small for " + std::to_string(estimate) +
                                 " bytes of rows: give at least " +
                                 std::to_string(estimate / kMaxBuckets * 4) + " bytes");
  }
  if (fs::exists(options.out_dir, error) && !fs::is_directory(options.out_dir, error)) {
    return ShuffleError::Refused("--to " + options.out_dir +
                                 " is a file, not a folder: choose a new folder");
  }
  if (fs::exists(options.out_dir, error)) {
    // A shuffle killed before its first metadata.json leaves only its work folder,
    // which holds nothing yet that a start afresh would not write again.
    for (const fs::directory_entry& entry : fs::directory_iterator(options.out_dir, error)) {
      if (entry.path() != fs::path(work_dir)) {
        return ShuffleError::Refused(
            "--to " + options.out_dir +
            " is not empty and holds no shuffle's metadata.json: choose a new or "
            "empty folder");
      }
    }
    fs::remove_all(work_dir, error);
    if (error) return ShuffleError::Stopped("cannot remove " + work_dir + ": " + error.message());
  }
  if (auto made = MakeDirectories(work_dir); !made) return ShuffleError::Stopped(made.error());
  journal.state = {{"buckets", buckets},
                   {"scatter_done", 0},
                   {"bucket_bytes", std::vector<int64_t>(static_cast<size_t>(buckets), 0)},
                   {"rows", 0},
                   {"skipped", 0},
                   {"permute_done", 0}};
  journal.metadata = {{"format", kShuffledFormat},
                      {"version", 1},
                      {"complete", false},
                      {"source", fs::absolute(source.dir).lexically_normal().string()},
                      {"parameters", parameters},
                      {"rows", nullptr},
                      {"skipped", nullptr},
                      {"files", json::array()},
                      {"totals", {{"rows", 0}, {"files", 0}, {"bytes", 0}}}};
  if (auto saved = WriteFileAtomically(work_dir + "/state.json", journal.state.dump(), budget);
      !saved) {
    return ShuffleError::Stopped(saved.error());
  }
  if (auto saved =
          WriteFileAtomically(options.out_dir + "/metadata.json", journal.metadata.dump(1), budget);
      !saved) {
    return ShuffleError::Stopped(saved.error());
  }
  return journal;
}

}  // namespace actex
