#ifndef ACTEX_STORAGE_SHARD_LATENTS_H_
#define ACTEX_STORAGE_SHARD_LATENTS_H_

// One listed shard read for its tokens and an SAE site's stored latents (the tensors
// `S.latents.ids` [tokens, K] I32 and `S.latents.values` [tokens, K] in the output's float
// dtype, docs/sae.md), what `actex latents` and `actex export --format delphi` read.

#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/safetensors.h"

namespace actex {

class ShardLatents {
 public:
  // Maps the shard at `path` (not gzip'd) and checks token_ids [T] I32, doc_ids [T] I64
  // and positions [T] I32. Errors name the file and the tensor.
  static std::expected<std::unique_ptr<ShardLatents>, std::string> Open(const std::string& path);

  int64_t tokens() const { return tokens_; }
  int32_t token_id(int64_t row) const;
  int64_t doc_id(int64_t row) const;
  int32_t position(int64_t row) const;
  // The row of `position` in document `doc_id`, or -1 when the shard does not hold it.
  int64_t RowOf(int64_t doc_id, int32_t position) const;

  // `site`'s latents widened to float32: ids [T, K] and values [T, K], row by row.
  // Errors name the file and the tensor (missing, another shape or dtype).
  struct Latents {
    int64_t k = 0;
    std::vector<int32_t> ids;   // [T, K], -1 padding
    std::vector<float> values;  // [T, K]
  };
  std::expected<Latents, std::string> ReadLatents(std::string_view site) const;

 private:
  explicit ShardLatents(std::unique_ptr<SafetensorsFile> file) : file_(std::move(file)) {}

  std::unique_ptr<SafetensorsFile> file_;
  int64_t tokens_ = 0;
  std::span<const uint8_t> token_ids_, doc_ids_, positions_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_SHARD_LATENTS_H_
