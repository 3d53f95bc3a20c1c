#ifndef ACTEX_MODEL_MODEL_WEIGHTS_H_
#define ACTEX_MODEL_MODEL_WEIGHTS_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace actex {

enum class WeightDtype { kF32, kF16, kBF16 };

// A 2-D (or 1-D, rows == 1) weight as it lies in the mapped file: never copied.
struct WeightView {
  const void* data = nullptr;
  WeightDtype dtype = WeightDtype::kF32;
  int64_t rows = 0, cols = 0;  // [rows, cols], row-major, contiguous
};

// A HuggingFace model folder: config.json plus model.safetensors or the sharded
// model-0000N-of-0000M.safetensors with model.safetensors.index.json, mapped
// read-only. Open() checks that every tensor the config implies exists with the
// right shape and dtype before any work starts, naming the file and tensor otherwise.
class ModelWeights {
 public:
  static std::expected<std::shared_ptr<const ModelWeights>, std::string> Open(
      const std::string& model_dir);

  const ModelConfig& config() const;
  // `name` as HF names it ("model.layers.3.mlp.up_proj.weight"); must exist (an
  // unknown name gives an empty view, data == nullptr). Open checked every tensor the
  // forward pass reads.
  WeightView Get(const std::string& name) const;
  // Size of all weight files in bytes (what a user sees with `du`).
  int64_t file_bytes() const;
  // sha256 hex of config.json's bytes followed by each weight file's header JSON
  // (files in name order), for the run fingerprint: it changes with any tensor's
  // name, shape, dtype or placement, without hashing gigabytes of weights.
  const std::string& fingerprint() const;

  ~ModelWeights();

 private:
  ModelWeights();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_MODEL_WEIGHTS_H_
