#include "storage/unlisted_shards.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "storage/host_folder_files.h"
#include "storage/safetensors.h"

namespace actex {

namespace fs = std::filesystem;

bool IsShardFileName(const std::string& name) {
  static const std::regex pattern(R"(shard_[0-9]+\.safetensors(\.gz)?)");
  return std::regex_match(name, pattern);
}

std::string DescribeShardFile(const std::string& path) {
  if (path.ends_with(".gz")) return "gzip'd (not checked)";
  auto file = SafetensorsFile::Open(path);
  if (!file) return "not whole: " + file.error();
  // Open checked every tensor lies inside the data and none overlaps another; the
  // file is whole when they fill the data exactly, nothing missing and nothing after.
  int64_t tensor_bytes = 0;
  for (const auto& [name, tensor] : (*file)->tensors()) {
    tensor_bytes += static_cast<int64_t>(tensor.bytes.size());
  }
  const int64_t data_bytes = (*file)->data_bytes();
  if (tensor_bytes != data_bytes) {
    return "not whole: its tensors take " + std::to_string(tensor_bytes) + " bytes of the " +
           std::to_string(data_bytes) + " after its header";
  }
  return "whole (its header and size agree)";
}

namespace {

// Where `name` goes in `aside`: its own name, or the first free "<n>_<name>".
fs::path FreeName(const fs::path& aside, const std::string& name) {
  fs::path target = aside / name;
  std::error_code error;
  for (int n = 2; fs::exists(target, error); ++n) {
    target = aside / (std::to_string(n) + "_" + name);
  }
  return target;
}

}  // namespace

std::expected<UnlistedCleanup, std::string> SetAsideUnlisted(const std::string& dir,
                                                             const std::set<std::string>& listed) {
  UnlistedCleanup cleanup;
  std::vector<fs::path> unlisted;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (IsTemporaryFileName(name) && entry.is_regular_file()) {
      if (!fs::remove(entry.path(), error)) {
        return std::unexpected("cannot remove " + entry.path().string() + ": " + error.message());
      }
      cleanup.removed_tmp.push_back(name);
    } else if ((IsShardFileName(name) || IsExamplesFileName(name)) && !listed.contains(name)) {
      unlisted.push_back(entry.path());
    }
  }
  if (error) return std::unexpected("cannot list " + dir + ": " + error.message());
  if (unlisted.empty()) return cleanup;
  const fs::path aside = fs::path(dir) / kUnlistedFolder;
  fs::create_directories(aside, error);
  if (error) return std::unexpected("cannot create " + aside.string() + ": " + error.message());
  std::sort(unlisted.begin(), unlisted.end());
  for (const fs::path& path : unlisted) {
    const std::string what = DescribeShardFile(path.string());
    const fs::path target = FreeName(aside, path.filename().string());
    fs::rename(path, target, error);  // same folder tree: the bytes stay as they are
    if (error) {
      return std::unexpected("cannot move the unlisted shard " + path.string() + " to " +
                             target.string() + ": " + error.message());
    }
    spdlog::warn(
        "{} is not listed in metadata.json ({}): moved to {}; its chunks are computed again. "
        "Delete it once the resumed run has finished, unless metadata.json lost its entry by "
        "mistake",
        path.string(), what, target.string());
    cleanup.set_aside.push_back(target.string());
  }
  return cleanup;
}

}  // namespace actex
