#include "storage/folder_digests.h"

#include <map>
#include <tuple>

#include "storage/chunk_digest.h"

namespace actex {

std::vector<VerifyFinding> FindChangedFolders(const std::vector<JobFolder>& folders,
                                              const std::vector<std::string>& inputs) {
  struct Reading {
    std::map<int64_t, std::string> digests;  // over the folders read this way
    std::map<int64_t, size_t> folder_of;     // chunk -> index into `folders`
  };
  std::map<std::tuple<std::string, ChunkRule, int64_t>, Reading> readings;
  for (size_t i = 0; i < folders.size(); ++i) {
    const OutputFolder& output = folders[i].output;
    if (output.chunk_digests.empty()) continue;
    const auto text_field = output.config.find("text_field");
    const std::string field = text_field != output.config.end() && text_field->is_string()
                                  ? text_field->get<std::string>()
                                  : "text";
    Reading& reading = readings[{field, output.chunk_rule, folders[i].max_docs}];
    for (const auto& [chunk, digest] : output.chunk_digests) {
      // A chunk listed by two folders is a duplicate, which the coverage reports.
      if (reading.digests.emplace(chunk, digest).second) reading.folder_of[chunk] = i;
    }
  }
  std::vector<VerifyFinding> faults;
  for (const auto& [how, reading] : readings) {
    const auto& [field, chunk_rule, max_docs] = how;
    auto changed =
        FindChangedChunks(CorpusOptions{inputs, field, max_docs}, chunk_rule, reading.digests);
    if (!changed) {
      faults.push_back(
          {"", "cannot read the corpus again to check its chunk digests: " + changed.error()});
      continue;
    }
    std::map<size_t, std::vector<ChangedChunk>> by_folder;
    for (ChangedChunk& chunk : *changed) {
      by_folder[reading.folder_of.at(chunk.chunk)].push_back(std::move(chunk));
    }
    for (const auto& [index, chunks] : by_folder) {
      const std::string& label = folders[index].output.label;
      faults.push_back({label + "/metadata.json",
                        DescribeChangedChunks(label, chunks) +
                            ": its activations are not of this corpus's documents; give the "
                            "corpus it was written from with --data"});
    }
  }
  return faults;
}

}  // namespace actex
