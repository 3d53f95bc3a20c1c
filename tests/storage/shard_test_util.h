#ifndef ACTEX_TESTS_STORAGE_SHARD_TEST_UTIL_H_
#define ACTEX_TESTS_STORAGE_SHARD_TEST_UTIL_H_

#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "storage/host_folder_files.h"
#include "storage/shard_writer.h"
#include "tests/support/test_files.h"

namespace actex {

// A document's activations held by the test, with spans for ShardWriter::Add.
struct OwnedDocument {
  int64_t doc_id = 0;
  std::vector<int32_t> token_ids;
  std::vector<int32_t> positions;
  std::vector<std::vector<float>> sites;       // per site, [tokens, width]; empty: integer
  std::vector<std::vector<int32_t>> integers;  // per site, [tokens, width] of an integer site

  DocumentActivations View() const {
    DocumentActivations view;
    view.doc_id = doc_id;
    view.token_ids = token_ids;
    view.positions = positions;
    for (size_t s = 0; s < sites.size(); ++s) {
      const bool integer = s < integers.size() && !integers[s].empty();
      view.sites.push_back(integer ? SiteRows(integers[s]) : SiteRows(sites[s]));
    }
    return view;
  }
};

// Adds `document` as a chunk of its own (the writer's default ChunkRule deals
// single documents) and ends that chunk.
inline std::expected<void, std::string> AddWhole(ShardWriter& writer,
                                                 const OwnedDocument& document) {
  if (auto added = writer.Add(document.View()); !added) return added;
  return writer.EndChunk(document.doc_id, 1);
}

// The value at (doc, token, site, dim): varied in sign and magnitude, not rounded
// to any dtype, and recomputable by the tests that read it back.
inline float ActivationValue(int64_t doc, int64_t token, size_t site, int64_t dim) {
  const double x = static_cast<double>(doc * 7919 + token * 131 + dim * 17 + site * 3);
  return static_cast<float>(std::sin(x) * std::exp2(static_cast<double>((dim % 7) - 3)) +
                            1e-3 * static_cast<double>(doc));
}

// The value of an integer site at (doc, token, site, dim): an expert id 0..63.
inline int32_t ExpertIdValue(int64_t doc, int64_t token, size_t site, int64_t dim) {
  return static_cast<int32_t>((doc * 13 + token * 5 + dim * 3 + static_cast<int64_t>(site)) % 64);
}

inline OwnedDocument MakeDocument(int64_t doc_id, int tokens,
                                  const std::vector<StoredSite>& sites) {
  OwnedDocument document;
  document.doc_id = doc_id;
  for (int t = 0; t < tokens; ++t) {
    document.token_ids.push_back(static_cast<int32_t>((doc_id * 31 + t * 7) % 151000));
    document.positions.push_back(t);
  }
  for (size_t s = 0; s < sites.size(); ++s) {
    std::vector<float> values;
    std::vector<int32_t> integers;
    for (int t = 0; t < tokens; ++t) {
      for (int d = 0; d < sites[s].width; ++d) {
        if (sites[s].integer) {
          integers.push_back(ExpertIdValue(doc_id, t, s, d));
        } else {
          values.push_back(ActivationValue(doc_id, t, s, d));
        }
      }
    }
    document.sites.push_back(std::move(values));
    document.integers.push_back(std::move(integers));
  }
  return document;
}

inline uint32_t Crc32Of(const std::string& bytes) {
  return static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                     reinterpret_cast<const Bytef*>(bytes.data()),
                                     static_cast<uInt>(bytes.size())));
}

inline std::string Gunzip(const std::string& path) {
  std::string out;
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return out;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(gz, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  gzclose(gz);
  return out;
}

// The metadata.json of the output folder `dir`, parsed.
inline nlohmann::json ReadMetadata(const std::string& dir) {
  return ReadJson(dir + "/" + kMetadataFile);
}

}  // namespace actex

#endif  // ACTEX_TESTS_STORAGE_SHARD_TEST_UTIL_H_
