#include "base/absolute_path.h"

#include <filesystem>
#include <system_error>

namespace actex {

std::string CurrentDirectory() {
  std::error_code error;
  const std::filesystem::path current = std::filesystem::current_path(error);
  return error ? std::string(".") : current.string();
}

std::string AbsolutePath(const std::string& path, const std::string& base) {
  if (path.empty()) return path;
  std::filesystem::path whole(path);
  if (whole.is_relative()) {
    whole = std::filesystem::path(base.empty() ? CurrentDirectory() : base) / whole;
  }
  whole = whole.lexically_normal();
  // "m/" normalizes to "m/" (an empty last name); drop it so both spellings agree.
  if (!whole.has_filename() && whole.has_relative_path()) whole = whole.parent_path();
  return whole.string();
}

}  // namespace actex
