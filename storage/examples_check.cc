#include "storage/examples_check.h"

#include <filesystem>
#include <fstream>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/shard_examples.h"
#include "storage/shard_inflater.h"

namespace actex {
namespace {

constexpr size_t kInflateChunkBytes = size_t{1} << 20;

// The first difference between `listed` and `recomputed` (one SAE's), in words; empty
// when they are equal.
std::string FirstDifference(const LatentExamples& listed, const LatentExamples& recomputed) {
  if (listed.latents() != recomputed.latents() || listed.examples() != recomputed.examples()) {
    return "another shape";
  }
  for (int64_t latent = 0; latent < listed.latents(); ++latent) {
    const std::string which = "latent " + std::to_string(latent) + "'s ";
    if (listed.fire_count(latent) != recomputed.fire_count(latent)) {
      return which + "fire count " + std::to_string(listed.fire_count(latent)) + ", the shard's " +
             std::to_string(recomputed.fire_count(latent));
    }
    if (listed.value_sum_fixed(latent) != recomputed.value_sum_fixed(latent)) {
      return which + "value sum";
    }
    if (listed.ExamplesOf(latent) != recomputed.ExamplesOf(latent)) return which + "examples";
  }
  return "";
}

// What plain shard `path`'s latents give.
std::expected<LatentExamplesBySite, std::string> RecomputePlain(const std::string& path,
                                                                const LatentExamplesBySite& like) {
  auto file = SafetensorsFile::Open(path);
  if (!file) return std::unexpected(file.error());
  return RecomputeShardExamples((*file)->tensors(), path, like);
}

// What gzip'd shard `path`'s latents give: inflated as a stream keeping only the doc ids,
// positions and latents of `like`'s sites.
std::expected<LatentExamplesBySite, std::string> RecomputeGzipped(
    const std::string& path, const LatentExamplesBySite& like) {
  ShardInflater inflater;
  for (const auto& [site, examples] : like) {
    const LatentSiteNames names = LatentSiteNamesOf(site);
    inflater.CaptureAlso({names.ids, names.values});
  }
  std::ifstream file(path, std::ios::binary);
  std::vector<char> chunk(kInflateChunkBytes);
  while (file.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || file.gcount() > 0) {
    inflater.Feed(reinterpret_cast<const uint8_t*>(chunk.data()),
                  static_cast<size_t>(file.gcount()));
  }
  inflater.Finish();
  if (!inflater.error().empty()) return std::unexpected(path + ": " + inflater.error());
  return RecomputeShardExamples(inflater.CapturedTensors(), path, like);
}

}  // namespace

ExamplesCheck CheckShardExamples(const ShardEntry& shard, bool recompute) {
  ExamplesCheck check;
  const ListedShard& listed = *shard.examples;
  const std::string path = (std::filesystem::path(shard.path).parent_path() / listed.file).string();
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    check.missing = true;
    return check;
  }
  auto bytes = ReadWholeFile(path);
  if (!bytes) {
    check.faults.push_back(bytes.error());
    return check;
  }
  const std::string crc32 = Crc32Hex(*bytes);
  if (static_cast<int64_t>(bytes->size()) != listed.bytes || crc32 != listed.crc32) {
    check.faults.push_back("holds " + std::to_string(bytes->size()) + " bytes, crc32 " + crc32 +
                           "; metadata.json lists " + std::to_string(listed.bytes) +
                           " bytes, crc32 " + listed.crc32);
    return check;
  }
  auto loaded = LoadLatentExamples(path);
  if (!loaded) {
    check.faults.push_back(loaded.error());
    return check;
  }
  for (const auto& [site, columns] : FindLatentColumns(shard.sites)) {
    if (!loaded->contains(site)) check.faults.push_back("has no examples of SAE site " + site);
  }
  if (!check.faults.empty() || !recompute) return check;
  auto recomputed =
      shard.gzip ? RecomputeGzipped(shard.path, *loaded) : RecomputePlain(shard.path, *loaded);
  if (!recomputed) {
    check.faults.push_back(recomputed.error());
    return check;
  }
  for (const auto& [site, examples] : *loaded) {
    const std::string difference = FirstDifference(examples, recomputed->at(site));
    if (difference.empty()) continue;
    check.faults.push_back("site " + site + ": " + difference + " differ from what " +
                           std::filesystem::path(shard.path).filename().string() +
                           "'s latents give");
  }
  return check;
}

}  // namespace actex
