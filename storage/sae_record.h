#ifndef ACTEX_STORAGE_SAE_RECORD_H_
#define ACTEX_STORAGE_SAE_RECORD_H_

// What metadata.json's config records of each SAE a run encoded with (`--sae`), under
// "saes": enough to say which SAE made the latents (its files' digests), to check
// them (`actex verify`: ids below d_sae) and to print them (`actex inspect`).

#include <cstdint>
#include <expected>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/json_field.h"

namespace actex {

// The config key the records are kept under.
inline constexpr const char* kSaesConfigKey = "saes";

struct SaeRecord {
  std::string site;          // hook name, "blocks.5.hook_resid_post"
  std::string dir;           // the folder, absolute
  std::string format;        // "saelens" or "sparsify"
  std::string architecture;  // "standard", "jumprelu" or "topk"
  int64_t d_in = 0;
  int64_t d_sae = 0;
  int64_t k = 0;                             // latents kept per token
  std::map<std::string, std::string> files;  // file name -> sha256 hex

  bool operator==(const SaeRecord&) const = default;
};

nlohmann::json SaeRecordJson(const SaeRecord& record);

// The records in `config` (metadata.json's "config", at `place`); none when it has no
// "saes" (a run without --sae, or an output written before SAEs). A damaged record is
// an error naming the field.
std::expected<std::vector<SaeRecord>, std::string> ReadSaeRecords(const nlohmann::json& config,
                                                                  const JsonPlace& place);

// One line per SAE for people: "blocks.5.hook_resid_post: saelens topk 64 -> 1024, K 8,
// DIR (cfg.json 1a2b3c4d..., sae_weights.safetensors 5e6f...)"; without ", DIR" when the
// record's dir is empty (a comparison of files alone).
std::string DescribeSaeRecord(const SaeRecord& record);

}  // namespace actex

#endif  // ACTEX_STORAGE_SAE_RECORD_H_
