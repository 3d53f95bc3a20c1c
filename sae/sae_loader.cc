#include "sae/sae_loader.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "sae/sae_folders.h"

namespace actex {
namespace {

bool HasFile(const std::filesystem::path& dir, const char* name) {
  std::error_code error;
  return std::filesystem::is_regular_file(dir / name, error);
}

// The subfolders of `dir` that hold a sparsify SAE, sorted by name.
std::vector<std::string> SparsifySubfolders(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_directory(error) && HasFile(entry.path(), kSparsifyWeightsFile)) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::expected<SaeModel, std::string> LoadSae(const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return std::unexpected(std::string("SAE folder ") + dir + " is not a directory" +
                           (error ? ": " + error.message() : ""));
  }
  if (HasFile(dir, kSaeLensWeightsFile)) return ReadSaeLensFolder(dir);
  if (HasFile(dir, kSparsifyWeightsFile)) return ReadSparsifyFolder(dir);
  const std::vector<std::string> hookpoints = SparsifySubfolders(dir);
  if (!hookpoints.empty()) {
    std::string listed;
    for (const std::string& name : hookpoints) listed += (listed.empty() ? "" : ", ") + name;
    return std::unexpected(dir + " holds sparsify SAEs of several hookpoints (" + listed +
                           "): give one of their folders, such as " + dir + "/" +
                           hookpoints.front());
  }
  return std::unexpected(dir + " holds no SAE: expected SAELens's " + kSaeLensConfigFile + " and " +
                         kSaeLensWeightsFile + ", or sparsify's " + kSparsifyConfigFile + " and " +
                         kSparsifyWeightsFile);
}

}  // namespace actex
