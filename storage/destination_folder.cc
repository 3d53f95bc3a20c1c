#include "storage/destination_folder.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace actex {
namespace {

namespace fs = std::filesystem;

// `path` with symlinks and dot components resolved as far as it exists, without a
// trailing separator.
std::expected<fs::path, std::string> Resolved(const std::string& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (!error) absolute = fs::weakly_canonical(absolute, error);
  if (error) return std::unexpected("cannot resolve " + path + ": " + error.message());
  if (!absolute.has_filename() && absolute != absolute.root_path()) {
    absolute = absolute.parent_path();  // "a/b/" -> "a/b"
  }
  return absolute;
}

// True when `inner` is `outer` or lies below it, component by component (so that
// /data/out2 is not taken for a folder inside /data/out).
bool IsWithin(const fs::path& inner, const fs::path& outer) {
  auto [outer_end, inner_end] =
      std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  (void)inner_end;
  return outer_end == outer.end();
}

}  // namespace

std::expected<void, std::string> CheckDestinationFolder(const std::string& flag,
                                                        const std::string& to,
                                                        const std::string& source) {
  const std::string named = flag + " " + (to.empty() ? "''" : to);
  if (to.empty()) {
    return std::unexpected(flag +
                           " is empty: name the folder to write, a new or empty one "
                           "outside " +
                           source);
  }
  auto destination = Resolved(to);
  if (!destination) return std::unexpected(flag + ": " + destination.error());
  auto origin = Resolved(source);
  if (!origin) return std::unexpected("the source: " + origin.error());
  if (*destination == destination->root_path()) {
    return std::unexpected(named +
                           " is the filesystem root (/): name a folder of its own to "
                           "write, a new or empty one outside " +
                           source);
  }
  if (*destination == *origin) {
    return std::unexpected(named + " is the source folder " + source + " itself (both are " +
                           origin->string() + "): choose a new or empty folder outside it");
  }
  if (IsWithin(*destination, *origin)) {
    return std::unexpected(named + " is inside the source folder " + source + " (" +
                           destination->string() +
                           "), where it would be taken for a host folder: choose a folder "
                           "outside it");
  }
  if (IsWithin(*origin, *destination)) {
    return std::unexpected(named + " holds the source folder " + source + " (" + origin->string() +
                           "), and what is written would mix with it: choose a new or empty "
                           "folder that neither holds nor lies inside the source");
  }
  return {};
}

std::expected<std::optional<std::string>, std::string> FirstSafetensorsNotWritten(
    const std::string& folder, const std::set<std::string>& written) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) return std::nullopt;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".safetensors" && !written.contains(name)) return name;
  }
  if (error) return std::unexpected("cannot list " + folder + ": " + error.message());
  return std::nullopt;
}

}  // namespace actex
