#include "storage/corpus_inputs.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/regular_file.h"

namespace actex {
namespace {

bool HasWildcard(const std::string& text) { return text.find_first_of("*?[") != std::string::npos; }

// The folder a pattern searches before its first wildcard component: "nope" of
// "nope/*.jsonl", "." of "*.jsonl", "/" of "/x*/a".
std::string LiteralFolder(const std::string& pattern) {
  std::filesystem::path folder;
  const std::filesystem::path whole(pattern);
  for (auto part = whole.begin(); part != whole.end(); ++part) {
    if (HasWildcard(part->string())) break;
    folder /= *part;
  }
  return folder.empty() ? "." : folder.string();
}

// Why a pattern found nothing (or could not be expanded), naming its folder.
std::string WhyNoMatch(const std::string& pattern, bool aborted) {
  const std::string folder = LiteralFolder(pattern);
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      struct stat link {};
      if (::lstat(folder.c_str(), &link) == 0) {
        return "input pattern \"" + pattern + "\": " + DescribeOpenError(folder, ENOENT);
      }
      return "input pattern \"" + pattern + "\": the folder " + folder + " does not exist";
    }
    return "input pattern \"" + pattern + "\": cannot read the folder " + folder + ": " +
           std::strerror(errno);
  }
  if (!S_ISDIR(info.st_mode)) {
    return "input pattern \"" + pattern + "\": " + folder + " is " +
           DescribeFileType(info.st_mode) + ", not a folder";
  }
  if (aborted) {
    return "input pattern \"" + pattern + "\": cannot read a folder it searches under " + folder +
           " (is it readable?)";
  }
  return "input pattern \"" + pattern + "\" matches no file in " + folder;
}

// A file the corpus reader may read again and again, or why not.
std::expected<void, std::string> CheckCorpusFile(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return std::unexpected("input " + DescribeOpenError(path, errno));
  }
  if (S_ISREG(info.st_mode)) return {};
  if (S_ISDIR(info.st_mode)) {
    return std::unexpected("input " + path + " is a directory, not a corpus file");
  }
  return std::unexpected("input " + path + " is " + DescribeFileType(info.st_mode) +
                         ", not a regular file: actex reads each corpus file more than once "
                         "(to measure it, and again to resume or verify), so save the stream "
                         "to a file and give that");
}

std::expected<std::vector<std::string>, std::string> ExpandInput(const std::string& input) {
  std::vector<std::string> matches;
  if (HasWildcard(input)) {
    glob_t found{};
    const int status = ::glob(input.c_str(), GLOB_ERR, nullptr, &found);
    for (size_t i = 0; status == 0 && i < found.gl_pathc; ++i) {
      matches.emplace_back(found.gl_pathv[i]);
    }
    ::globfree(&found);
    if (status == GLOB_NOSPACE) {
      return std::unexpected("input pattern \"" + input + "\": out of memory expanding it");
    }
    std::sort(matches.begin(), matches.end());
    // A literal file whose name holds a wildcard character is read as named.
    struct stat literal {};
    if (matches.empty() && ::lstat(input.c_str(), &literal) != 0) {
      return std::unexpected(WhyNoMatch(input, status == GLOB_ABORTED));
    }
  }
  if (matches.empty()) matches.push_back(input);
  for (const auto& path : matches) {
    if (auto checked = CheckCorpusFile(path); !checked) return std::unexpected(checked.error());
  }
  return matches;
}

}  // namespace

std::expected<std::vector<std::string>, std::string> ExpandCorpusInputs(
    const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    auto expanded = ExpandInput(input);
    if (!expanded) return std::unexpected(expanded.error());
    files.insert(files.end(), expanded->begin(), expanded->end());
  }
  return files;
}

}  // namespace actex
