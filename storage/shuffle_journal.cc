#include "storage/shuffle_journal.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/json_field.h"
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
  for (const StoredSite& site : layout.sites) sites.push_back(json(StoredSiteJson(site)));
  std::set<int32_t> skip(options.skip_token_ids.begin(), options.skip_token_ids.end());
  return {{"source_shards", shards},
          {"seed", options.seed},
          {"rows_per_file", options.rows_per_file},
          {"sites", sites},
          {"dtype", DtypeName(layout.dtype)},
          {"skip_token_ids", skip}};
}

// Checks the fields a resumed shuffle reads from the output's metadata.json (whose
// parameters already matched) and from state.json, so that either file damaged is
// an error naming it and the field, never an exception later.
std::expected<void, std::string> CheckJournal(const json& metadata,
                                              const std::string& metadata_file, const json& state,
                                              const std::string& state_file, size_t source_shards) {
  const JsonPlace top{metadata_file, ""};
  auto files = JsonArrayField(metadata, top, "files");
  if (!files) return std::unexpected(files.error());
  for (size_t i = 0; i < files->get().size(); ++i) {
    if (auto index = JsonIntField(files->get()[i], top.Member("files").Element(i), "index", 0);
        !index) {
      return std::unexpected(index.error());
    }
  }
  auto totals = JsonObjectField(metadata, top, "totals");
  if (!totals) return std::unexpected(totals.error());
  for (const char* key : {"rows", "files", "bytes"}) {
    if (auto value = JsonIntField(totals->get(), top.Member("totals"), key, 0); !value) {
      return std::unexpected(value.error());
    }
  }
  const JsonPlace at{state_file, ""};
  auto buckets = JsonIntField(state, at, "buckets", 1);
  if (!buckets) return std::unexpected(buckets.error());
  if (*buckets > kMaxBuckets) {
    return std::unexpected(at.Member("buckets").Describe() + " is " + std::to_string(*buckets) +
                           ", more than " + std::to_string(kMaxBuckets));
  }
  auto scatter_done = JsonIntField(state, at, "scatter_done", 0);
  if (!scatter_done) return std::unexpected(scatter_done.error());
  if (*scatter_done > static_cast<int64_t>(source_shards)) {
    return std::unexpected(at.Member("scatter_done").Describe() + " is past the source's " +
                           std::to_string(source_shards) + " shards");
  }
  auto permute_done = JsonIntField(state, at, "permute_done", 0);
  if (!permute_done) return std::unexpected(permute_done.error());
  if (*permute_done > *buckets) {
    return std::unexpected(at.Member("permute_done").Describe() + " is past the " +
                           std::to_string(*buckets) + " buckets");
  }
  for (const char* key : {"rows", "skipped"}) {
    if (auto value = JsonIntField(state, at, key, 0); !value) return std::unexpected(value.error());
  }
  auto bucket_bytes = JsonArrayField(state, at, "bucket_bytes");
  if (!bucket_bytes) return std::unexpected(bucket_bytes.error());
  if (static_cast<int64_t>(bucket_bytes->get().size()) != *buckets) {
    return std::unexpected(JsonTypeError(at.Member("bucket_bytes"), &bucket_bytes->get(),
                                         "one byte count per bucket"));
  }
  for (size_t b = 0; b < bucket_bytes->get().size(); ++b) {
    if (auto value = JsonInt(bucket_bytes->get()[b], at.Member("bucket_bytes").Element(b), 0);
        !value) {
      return std::unexpected(value.error());
    }
  }
  return {};
}

// Continues the shuffle whose metadata.json is in options.out_dir: refused unless it
// names the same `parameters`; a finished one is returned from its listing, an
// unfinished one with its work folder's state.json, both checked field by field.
std::expected<ShuffleJournal, CommandError> ResumeShuffleJournal(const ShuffleOptions& options,
                                                                 const json& parameters,
                                                                 const SourceOutput& source,
                                                                 const std::string& work_dir) {
  ShuffleJournal journal;
  const std::string metadata_path = options.out_dir + "/metadata.json";
  auto text = ReadWholeFile(metadata_path);
  if (!text) return CommandError::Stopped(text.error());
  journal.metadata = json::parse(*text, nullptr, false);
  const JsonPlace top{metadata_path, ""};
  if (journal.metadata.is_discarded() ||
      JsonStringField(journal.metadata, top, "format").value_or("") != kShuffledFormat ||
      !journal.metadata.contains("parameters") || journal.metadata["parameters"] != parameters) {
    return CommandError::Refused(
        options.out_dir +
        " already holds another shuffle (other source, seed, sites, dtype, "
        "skipped tokens or rows per file): remove it or choose another --to");
  }
  journal.resumed = true;
  auto complete = JsonBoolField(journal.metadata, top, "complete");
  if (!complete) return CommandError::Refused(complete.error());
  if (*complete) {
    // A finished shuffle is reported from its listing.
    for (const char* key : {"rows", "skipped"}) {
      if (auto value = JsonIntField(journal.metadata, top, key, 0); !value) {
        return CommandError::Refused(value.error());
      }
    }
    auto totals = JsonObjectField(journal.metadata, top, "totals");
    if (!totals) return CommandError::Refused(totals.error());
    for (const char* key : {"files", "bytes"}) {
      if (auto value = JsonIntField(totals->get(), top.Member("totals"), key, 0); !value) {
        return CommandError::Refused(value.error());
      }
    }
    return journal;
  }
  const std::string state_path = work_dir + "/state.json";
  auto state_text = ReadWholeFile(state_path);
  if (!state_text) return CommandError::Stopped(state_text.error());
  journal.state = json::parse(*state_text, nullptr, false);
  if (journal.state.is_discarded()) {
    return CommandError::Refused(state_path + " is not valid JSON; remove " + options.out_dir +
                                 " to shuffle afresh");
  }
  if (auto checked = CheckJournal(journal.metadata, metadata_path, journal.state, state_path,
                                  source.shards.size());
      !checked) {
    return CommandError::Refused(checked.error() + "; remove " + options.out_dir +
                                 " to shuffle afresh");
  }
  for (const json& file : journal.metadata["files"]) {
    journal.listed_files.insert(file["index"].get<int64_t>());
  }
  return journal;
}

// Starts a shuffle afresh in options.out_dir (absent, or empty but for a killed
// start's work folder): sizes its buckets to a quarter of options.memory_bytes each,
// refused when that takes more than kMaxBuckets, and writes state.json and
// metadata.json.
std::expected<ShuffleJournal, CommandError> StartShuffleJournal(
    const ShuffleOptions& options, const json& parameters, const SourceOutput& source,
    const std::string& work_dir, int64_t entry_bytes, WriteBudget* budget) {
  ShuffleJournal journal;
  std::error_code error;
  const int64_t estimate = source.tokens * entry_bytes;
  const int64_t bucket_target = std::max<int64_t>(1, options.memory_bytes / 4);
  const int64_t buckets = std::max<int64_t>(1, (estimate + bucket_target - 1) / bucket_target);
  if (buckets > kMaxBuckets) {
    return CommandError::Refused("--memory " + std::to_string(options.memory_bytes) +
                                 " bytes is too small for " + std::to_string(estimate) +
                                 " bytes of rows: give at least " +
                                 std::to_string(estimate / kMaxBuckets * 4) + " bytes");
  }
  if (fs::exists(options.out_dir, error) && !fs::is_directory(options.out_dir, error)) {
    return CommandError::Refused("--to " + options.out_dir +
                                 " is a file, not a folder: choose a new folder");
  }
  const std::string metadata_path = options.out_dir + "/metadata.json";
  if (fs::exists(options.out_dir, error)) {
    // A shuffle killed before its first metadata.json was renamed into place leaves
    // only its work folder and perhaps that file's temporary copy, which hold nothing
    // a start afresh does not write again.
    const std::set<fs::path> killed_start = {
        fs::path(work_dir).filename(), fs::path(AtomicWriteTempPath(metadata_path)).filename()};
    for (const fs::directory_entry& entry : fs::directory_iterator(options.out_dir, error)) {
      if (!killed_start.contains(entry.path().filename())) {
        return CommandError::Refused(
            "--to " + options.out_dir +
            " is not empty and holds no shuffle's metadata.json: choose a new or "
            "empty folder");
      }
    }
    fs::remove_all(work_dir, error);
    if (error) return CommandError::Stopped("cannot remove " + work_dir + ": " + error.message());
  }
  if (auto made = MakeDirectories(work_dir); !made) return CommandError::Stopped(made.error());
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
    return CommandError::Stopped(saved.error());
  }
  if (auto saved = WriteFileAtomically(metadata_path, journal.metadata.dump(1), budget); !saved) {
    return CommandError::Stopped(saved.error());
  }
  return journal;
}

}  // namespace

std::expected<ShuffleJournal, CommandError> OpenShuffleJournal(
    const ShuffleOptions& options, const SourceOutput& source, const RecordLayout& layout,
    const std::string& work_dir, int64_t entry_bytes, WriteBudget* budget) {
  const json parameters = Parameters(options, source, layout);
  std::error_code error;
  if (fs::exists(options.out_dir + "/metadata.json", error)) {
    return ResumeShuffleJournal(options, parameters, source, work_dir);
  }
  return StartShuffleJournal(options, parameters, source, work_dir, entry_bytes, budget);
}

}  // namespace actex
