#ifndef ACTEX_TESTS_MODEL_TOKENIZER_TOKENIZER_CASES_H_
#define ACTEX_TESTS_MODEL_TOKENIZER_TOKENIZER_CASES_H_

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace actex {

// The records of a fixture's cases.jsonl, one JSON object per non-empty line.
inline std::vector<nlohmann::json> ReadCaseRecords(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) records.push_back(nlohmann::json::parse(line));
  }
  return records;
}

// "[1, 2, 3]", for failure messages.
inline std::string IdsToString(const std::vector<int32_t>& ids) {
  std::string text = "[";
  for (size_t i = 0; i < ids.size(); ++i) text += (i ? ", " : "") + std::to_string(ids[i]);
  return text + "]";
}

}  // namespace actex

#endif  // ACTEX_TESTS_MODEL_TOKENIZER_TOKENIZER_CASES_H_
