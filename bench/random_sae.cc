#include "bench/random_sae.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <vector>

#include "storage/safetensors.h"

namespace actex {
namespace {

constexpr const char* kCompleteMarker = ".bench-complete";

// A float32 tensor of `shape` drawn from N(0, stddev²) by a generator seeded with `seed`.
TensorToWrite RandomTensor(const std::string& name, std::vector<int64_t> shape, float stddev,
                           unsigned seed) {
  return {name, "F32", std::move(shape), [stddev, seed](std::span<uint8_t> bytes) {
            std::mt19937 rng(seed);
            std::normal_distribution<float> normal(0.0f, stddev);
            for (size_t at = 0; at < bytes.size(); at += sizeof(float)) {
              const float value = normal(rng);
              std::memcpy(bytes.data() + at, &value, sizeof(value));
            }
          }};
}

}  // namespace

std::expected<void, std::string> EnsureRandomSae(const std::string& dir, const std::string& site,
                                                 int64_t d_in, int64_t d_sae) {
  const std::filesystem::path folder(dir);
  if (std::filesystem::exists(folder / kCompleteMarker)) return {};
  std::filesystem::create_directories(folder);
  const nlohmann::json config = {{"architecture", "standard"},
                                 {"d_in", d_in},
                                 {"d_sae", d_sae},
                                 {"dtype", "float32"},
                                 {"apply_b_dec_to_input", true},
                                 {"normalize_activations", "none"},
                                 {"reshape_activations", "none"},
                                 {"metadata", {{"hook_name", site}}}};
  std::ofstream(folder / "cfg.json") << config.dump(2) << "\n";
  const float weight_scale = 1.0f / std::sqrt(static_cast<float>(d_in));
  auto written = WriteSafetensors((folder / "sae_weights.safetensors").string(),
                                  {RandomTensor("W_enc", {d_in, d_sae}, weight_scale, 1),
                                   RandomTensor("b_enc", {d_sae}, 0.05f, 2),
                                   RandomTensor("W_dec", {d_sae, d_in}, weight_scale, 3),
                                   RandomTensor("b_dec", {d_in}, 0.05f, 4)},
                                  {{"format", "pt"}});
  if (!written) return written;
  std::ofstream(folder / kCompleteMarker) << "done\n";
  return {};
}

}  // namespace actex
