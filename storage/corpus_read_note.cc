#include "storage/corpus_read_note.h"

#include <algorithm>
#include <filesystem>

#include "base/absolute_path.h"
#include "storage/corpus_inputs.h"

namespace actex {

std::expected<std::pair<std::string, std::vector<std::string>>, std::string> DescribeCorpusRead(
    const std::vector<std::string>& inputs, const std::string& named_by, bool recorded) {
  const bool relative = std::any_of(inputs.begin(), inputs.end(), [](const std::string& input) {
    return std::filesystem::path(input).is_relative();
  });
  std::vector<std::string> absolute;
  for (const std::string& input : inputs) absolute.push_back(AbsolutePath(input));
  auto files = ExpandCorpusInputs(absolute);
  if (!files) return std::unexpected(files.error());
  std::string line = "corpus:";
  for (const std::string& file : *files) line += (line.size() > 7 ? ", " : " ") + file;
  line += " (as " + named_by + " names it";
  if (recorded && relative) {
    line += "; its relative paths are taken from the current directory " + CurrentDirectory();
  }
  line += ")";
  return std::make_pair(std::move(line), std::move(absolute));
}

}  // namespace actex
