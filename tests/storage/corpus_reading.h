#ifndef ACTEX_TESTS_STORAGE_CORPUS_READING_H_
#define ACTEX_TESTS_STORAGE_CORPUS_READING_H_

// Test support: a whole corpus read through CorpusReader, records and the error
// that ended it.

#include <string>
#include <utility>
#include <vector>

#include "storage/corpus_reader.h"

namespace actex {

struct ReadResult {
  std::vector<CorpusRecord> records;
  std::string error;  // empty when the reader reached the end
};

inline ReadResult ReadAll(const CorpusOptions& options) {
  ReadResult result;
  auto reader = CorpusReader::Open(options);
  if (!reader) {
    result.error = reader.error();
    return result;
  }
  while (true) {
    auto record = (*reader)->Next();
    if (!record) {
      result.error = record.error();
      return result;
    }
    if (!*record) return result;
    result.records.push_back(std::move(**record));
  }
}

}  // namespace actex

#endif  // ACTEX_TESTS_STORAGE_CORPUS_READING_H_
