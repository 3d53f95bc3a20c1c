#ifndef ACTEX_TESTS_ACTORS_EXTRACTION_READER_H_
#define ACTEX_TESTS_ACTORS_EXTRACTION_READER_H_

// Test support: runs an extraction into a fresh temporary folder and reads every
// shard it listed back, so tests compare what users would load.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/extract_options.h"
#include "tests/support/test_files.h"

namespace actex {

struct DocumentRows {
  std::vector<int32_t> token_ids, positions;
  std::map<std::string, std::vector<float>> sites;            // hook name -> [tokens, width]
  std::map<std::string, std::vector<int32_t>> integer_sites;  // I32 sites (expert ids), alike
};

// Everything one host folder holds, by document id. Fails the calling test (gtest
// ADD_FAILURE) when a listed shard is unreadable.
std::map<int64_t, DocumentRows> ReadHostFolder(const std::string& host_dir);

// Every host folder below OUT merged by document id; fails the calling test on a
// document written twice.
std::map<int64_t, DocumentRows> ReadJob(const std::string& out);

// The doc ids in every rejects.jsonl below OUT whose chunk its folder lists, repeats
// kept (as verify counts them: the others were left by a run that stopped).
std::multiset<int64_t> RejectedIds(const std::string& out);

// Reads one F32 or I32 tensor of a fixture file, widened to float.
std::vector<float> FixtureTensor(const std::string& file, const std::string& name);
std::vector<int32_t> FixtureIds(const std::string& file, const std::string& name);

// A corpus line of the pre-tokenized document `ids`: {"input_ids":[...]} and a newline.
std::string InputIdsLine(const std::vector<int32_t>& ids);

// Largest |a - b| and largest |b| over the two tensors (which must be equally long).
struct Deviation {
  double max_abs_error = 0, max_abs_reference = 0;
};
Deviation Compare(const std::vector<float>& actual, const std::vector<float>& reference);

}  // namespace actex

#endif  // ACTEX_TESTS_ACTORS_EXTRACTION_READER_H_
