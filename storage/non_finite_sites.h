#ifndef ACTEX_STORAGE_NON_FINITE_SITES_H_
#define ACTEX_STORAGE_NON_FINITE_SITES_H_

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace actex {

// A site whose stored activations hold values that are not finite: NaN (NaN weights,
// say) or infinite (float32 values beyond the output dtype's range: from 65520 up in
// float16), as a host folder's metadata.json statistics count them.
struct NonFiniteSite {
  std::string site;    // hook name
  int64_t values = 0;  // values that are not finite
  int64_t rows = 0;    // rows (tokens) holding at least one
};

// The sites of a metadata.json (parsed) whose statistics count non-finite values, by
// name. Read defensively: no statistics, or a site without the counts (an output
// written before they existed) or with counts that are not whole numbers, adds none.
std::vector<NonFiniteSite> NonFiniteSites(const nlohmann::json& metadata);

// What a host folder's metadata.json says about non-finite values.
struct FolderNonFinite {
  std::string dtype;  // as recorded ("float16"); empty when it records none
  std::vector<NonFiniteSite> sites;
};

// Reads the metadata.json at `metadata_path`; an error names the file when it is
// missing or not a JSON object.
std::expected<FolderNonFinite, std::string> ReadNonFiniteSites(const std::string& metadata_path);

// "blocks.0.hook_resid_post: 12 values in 3 rows; ln_final.hook_normalized: ...".
std::string DescribeNonFinite(const std::vector<NonFiniteSite>& sites);

}  // namespace actex

#endif  // ACTEX_STORAGE_NON_FINITE_SITES_H_
