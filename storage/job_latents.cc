#include "storage/job_latents.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/host_folder_files.h"
#include "storage/json_field.h"
#include "storage/shard_listing.h"

namespace actex {
namespace {

// Merges `dir/file` into `job` once its bytes and crc32 are as listed.
std::expected<void, std::string> MergeListedFile(const std::string& dir, const ListedShard& file,
                                                 JobLatents* job) {
  const std::string path = dir + "/" + file.file;
  auto bytes = ReadWholeFile(path);
  if (!bytes) {
    return std::unexpected(bytes.error() +
                           " (an examples file uploaded and deleted must be downloaded back)");
  }
  const std::string crc32 = Crc32Hex(*bytes);
  if (static_cast<int64_t>(bytes->size()) != file.bytes || crc32 != file.crc32) {
    return std::unexpected(path + " holds " + std::to_string(bytes->size()) + " bytes, crc32 " +
                           crc32 + "; metadata.json lists " + std::to_string(file.bytes) +
                           " bytes, crc32 " + file.crc32 + " (see actex verify)");
  }
  auto loaded = LoadLatentExamples(path);
  if (!loaded) return std::unexpected(loaded.error());
  if (auto merged = MergeLatentExamples(job->by_site, *loaded); !merged) {
    return std::unexpected(path + ": " + merged.error());
  }
  ++job->files;
  return {};
}

}  // namespace

std::expected<JobLatents, std::string> MergeJobLatents(const std::vector<std::string>& host_dirs) {
  JobLatents job;
  for (const std::string& dir : host_dirs) {
    const std::string path = dir + "/" + kMetadataFile;
    auto text = ReadWholeFile(path);
    if (!text) return std::unexpected(text.error());
    const auto metadata = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    const JsonPlace top{path, ""};
    auto shards = metadata.is_object() ? JsonArrayField(metadata, top, "shards")
                                       : std::unexpected(path + " is not a JSON object");
    if (!shards) return std::unexpected(shards.error());
    for (size_t i = 0; i < shards->get().size(); ++i) {
      const nlohmann::json& shard = shards->get()[i];
      const JsonPlace place = top.Member("shards").Element(i);
      auto tokens = JsonIntField(shard, place, "tokens", 0);
      if (!tokens) return std::unexpected(tokens.error());
      job.tokens += *tokens;
      auto files = ListedFilesOf(shard, place);
      if (!files) return std::unexpected(files.error());
      if (files->size() < 2) continue;  // a shard written without an SAE
      if (auto merged = MergeListedFile(dir, files->back(), &job); !merged) {
        return std::unexpected(merged.error());
      }
    }
  }
  return job;
}

std::expected<JobLatents, std::string> WriteJobLatents(const std::string& out_dir,
                                                       const std::vector<std::string>& host_dirs) {
  auto job = MergeJobLatents(host_dirs);
  if (!job) return std::unexpected(job.error());
  if (job->by_site.empty()) {
    return std::unexpected(out_dir +
                           ": no listed shard has latent examples (the run had no --sae)");
  }
  const std::string path = (std::filesystem::path(out_dir) / kJobLatentsFile).string();
  if (auto saved = SaveLatentExamples(path, job->by_site); !saved) {
    return std::unexpected(saved.error());
  }
  return job;
}

JobLatentsCheck CheckJobLatentsFile(const std::string& out_dir,
                                    const std::vector<std::string>& host_dirs) {
  const std::string path = (std::filesystem::path(out_dir) / kJobLatentsFile).string();
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return {};
  auto job = MergeJobLatents(host_dirs);
  if (!job) return {true, "not checked: " + job.error()};
  auto expected = EncodeLatentExamples(job->by_site);
  if (!expected) return {true, "not checked: " + expected.error()};
  auto stored = ReadWholeFile(path);
  if (!stored) return {false, stored.error()};
  if (*stored == *expected) return {};
  return {false,
          "does not hold the merge of the latent examples the host folders list (made before a "
          "resume, or by another job): run `actex inspect --latents " +
              out_dir + "` to write it again"};
}

}  // namespace actex
