#ifndef ACTEX_STORAGE_STORED_SITE_H_
#define ACTEX_STORAGE_STORED_SITE_H_

// A site as the output stores it: what the shard writer is told of each site, what
// metadata.json's "sites" entries say, and what every reader of shards (verify,
// resume, shuffle, export) expects of a site's tensor.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "storage/json_field.h"

namespace actex {

// The safetensors dtype of an integer site's tensor, whatever the output's dtype.
inline constexpr const char* kIntegerSiteDtype = "I32";

// One site's tensor in a shard: [tokens, width] named by its hook name. A float site
// (activations) is stored in the output's float dtype; an integer site (expert ids)
// is stored as I32 whatever that dtype is, has no statistics and no non-finite count.
struct StoredSite {
  std::string name;  // hook name, e.g. "blocks.3.mlp.hook_expert_indices"
  int width = 0;
  bool integer = false;
  // Captured for an SAE (`--sae`) but left out of --sites: its statistics are recorded,
  // no tensor is written, and metadata.json's "sites" does not list it.
  bool statistics_only = false;

  // The safetensors dtype of this site's tensor in an output whose float sites are in
  // `float_dtype` ("F32", "F16", "BF16").
  std::string Dtype(const std::string& float_dtype) const {
    return integer ? kIntegerSiteDtype : float_dtype;
  }
  bool operator==(const StoredSite&) const = default;
};

// The site's metadata.json "sites" entry: {"name", "width"} for a float site (its
// dtype is the file's "dtype"), plus "dtype": "I32" for an integer site. Outputs
// written before integer sites existed list float sites only, and read the same.
nlohmann::ordered_json StoredSiteJson(const StoredSite& site);
// Reads such an entry at `place`; an error names the place and what is wrong (no
// name, a width that is not a positive int32, a dtype other than "I32").
std::expected<StoredSite, std::string> ReadStoredSite(const nlohmann::json& entry,
                                                      const JsonPlace& place);

// One site's rows of one document (or a batch): float32 values for a float site,
// int32 for an integer site; the other span is empty. Spans point into the caller's
// buffers.
struct SiteRows {
  std::span<const float> values;      // [tokens, width] of a float site
  std::span<const int32_t> integers;  // [tokens, width] of an integer site

  // Implicit: a span of either element type is a site's rows as it stands.
  SiteRows() = default;
  SiteRows(std::span<const float> float_values) : values(float_values) {}          // NOLINT
  SiteRows(std::span<const int32_t> integer_values) : integers(integer_values) {}  // NOLINT

  // Empty rows read as a float site's; rows of a document hold at least one token.
  bool integer() const { return !integers.empty(); }
  size_t size() const { return values.size() + integers.size(); }
  size_t size_bytes() const { return values.size_bytes() + integers.size_bytes(); }
  const void* data() const {
    return integer() ? static_cast<const void*>(integers.data()) : values.data();
  }
  // Values [offset, offset + count) of whichever span holds them.
  SiteRows subspan(size_t offset, size_t count) const {
    return integer() ? SiteRows(integers.subspan(offset, count))
                     : SiteRows(values.subspan(offset, count));
  }
};

}  // namespace actex

#endif  // ACTEX_STORAGE_STORED_SITE_H_
