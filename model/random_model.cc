#include "model/random_model.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "model/architecture.h"
#include "model/config_fields.h"
#include "model/config_reader.h"
#include "model/kernels/half_float.h"
#include "model/model_presets.h"
#include "storage/safetensors.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// splitmix64: a fast generator with good statistics, used both to derive per-tensor
// seeds and to produce values.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t TensorSeed(uint64_t seed, const std::string& name) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ull;
  uint64_t state = seed ^ hash;
  return SplitMix64(state);
}

// Every tensor of the model's family (architecture.h), the LM head only when untied.
std::vector<TensorSpec> TensorList(const ModelConfig& c) {
  std::vector<TensorSpec> list;
  for (TensorSpec& tensor : ArchitectureTensors(c)) {
    if (tensor.role == TensorRole::kLmHead && c.tie_word_embeddings) continue;
    list.push_back(std::move(tensor));
  }
  return list;
}

// Fills `bytes` with values of `distribution` in `dtype` ("F32", "BF16" or "F16"),
// from a generator seeded by the tensor's seed.
void FillRandom(std::span<uint8_t> bytes, const std::string& dtype, uint64_t seed,
                TensorInit distribution) {
  uint64_t state = seed;
  constexpr float kToUnit = 1.0f / 2147483648.0f;  // int32 -> [-1, 1)
  auto value = [&](uint32_t bits) {
    return distribution.center +
           distribution.half_width * (static_cast<float>(static_cast<int32_t>(bits)) * kToUnit);
  };
  // Each 64-bit draw gives two values; `store` writes element i.
  auto generate = [&](size_t count, auto store) {
    for (size_t i = 0; i < count; i += 2) {
      const uint64_t random = SplitMix64(state);
      store(i, value(static_cast<uint32_t>(random)));
      if (i + 1 < count) store(i + 1, value(static_cast<uint32_t>(random >> 32)));
    }
  };
  uint8_t* out = bytes.data();
  if (dtype == "F32") {
    generate(bytes.size() / 4, [out](size_t i, float v) { std::memcpy(out + 4 * i, &v, 4); });
  } else if (dtype == "BF16") {
    generate(bytes.size() / 2, [out](size_t i, float v) {
      const uint16_t bits = FloatToBfloat16Bits(v);
      std::memcpy(out + 2 * i, &bits, 2);
    });
  } else {
    generate(bytes.size() / 2, [out](size_t i, float v) {
      const uint16_t bits = FloatToFloat16(v);
      std::memcpy(out + 2 * i, &bits, 2);
    });
  }
}

// The preset's config.json with the options' overrides, `_name_or_path` first.
std::expected<nlohmann::ordered_json, std::string> OptionsConfigJson(
    const RandomModelOptions& options) {
  auto preset = PresetConfigJson(options.preset);
  if (!preset) return std::unexpected(preset.error());
  if (options.vocab_size < 0 || options.layers < 0) {
    return std::unexpected("random model: vocab_size and layers must not be negative");
  }
  if (options.dtype != "float32" && options.dtype != "bfloat16" && options.dtype != "float16") {
    return std::unexpected("random model: dtype \"" + options.dtype +
                           "\" is not one of float32, bfloat16, float16");
  }
  nlohmann::ordered_json json;
  json["_name_or_path"] = "actex-random-" + options.preset + "-seed" + std::to_string(options.seed);
  for (const auto& [key, value] : preset->items()) json[key] = value;
  const bool gpt2 = json["model_type"] == "gpt2";
  if (options.vocab_size > 0) json["vocab_size"] = options.vocab_size;
  if (options.layers > 0) json[gpt2 ? "n_layer" : "num_hidden_layers"] = options.layers;
  if (options.tie_word_embeddings) json["tie_word_embeddings"] = *options.tie_word_embeddings;
  json["torch_dtype"] = options.dtype;
  return json;
}

std::expected<void, std::string> WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return std::unexpected("cannot write " + path.string() + ": " + std::strerror(errno));
  return {};
}

// Removes weight files of an earlier model in `dir`, which Open would otherwise mix in.
std::expected<void, std::string> RemoveOldWeights(const fs::path& dir) {
  std::error_code error;
  std::vector<fs::path> old_files;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const bool shard = name.starts_with("model-") && name.ends_with(".safetensors");
    if (name == "model.safetensors" || name == "model.safetensors.index.json" || shard) {
      old_files.push_back(entry.path());
    }
  }
  for (const fs::path& path : old_files) {
    if (error) break;
    fs::remove(path, error);
  }
  if (error) return std::unexpected("cannot clear " + dir.string() + ": " + error.message());
  return {};
}

std::string ShardFileName(int index, int count) {
  char name[64];
  std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", index, count);
  return name;
}

}  // namespace

std::expected<ModelConfig, std::string> RandomModelConfig(const RandomModelOptions& options) {
  auto json = OptionsConfigJson(options);
  if (!json) return std::unexpected(json.error());
  return ParseModelConfig(nlohmann::json::parse(json->dump()), "preset " + options.preset,
                          options.output_dir);
}

std::expected<ModelConfig, std::string> MakeRandomModel(const RandomModelOptions& options) {
  auto made_config = RandomModelConfig(options);
  if (!made_config) return std::unexpected(made_config.error());
  const ModelConfig& config = *made_config;
  const std::string dtype = options.dtype == "float32"    ? "F32"
                            : options.dtype == "bfloat16" ? "BF16"
                                                          : "F16";
  const nlohmann::ordered_json config_json = *OptionsConfigJson(options);

  const fs::path dir(options.output_dir);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return std::unexpected("cannot create " + dir.string() + ": " + error.message());
  if (auto cleared = RemoveOldWeights(dir); !cleared) return std::unexpected(cleared.error());

  // Group the tensors into files of at most max_file_bytes, in state_dict order.
  const std::vector<TensorSpec> list = TensorList(config);
  const int element = SafetensorsDtypeBytes(dtype);
  std::vector<std::vector<const TensorSpec*>> files(1);
  int64_t file_bytes = 0, total_bytes = 0;
  for (const TensorSpec& tensor : list) {
    int64_t bytes = element;
    for (int64_t extent : tensor.shape) bytes *= extent;
    if (options.max_file_bytes > 0 && !files.back().empty() &&
        file_bytes + bytes > options.max_file_bytes) {
      files.emplace_back();
      file_bytes = 0;
    }
    files.back().push_back(&tensor);
    file_bytes += bytes;
    total_bytes += bytes;
  }

  const bool sharded = options.max_file_bytes > 0;
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  for (size_t f = 0; f < files.size(); ++f) {
    const std::string file_name =
        sharded ? ShardFileName(static_cast<int>(f) + 1, static_cast<int>(files.size()))
                : "model.safetensors";
    std::vector<TensorToWrite> tensors;
    for (const TensorSpec* tensor : files[f]) {
      const uint64_t seed = TensorSeed(options.seed, tensor->name);
      const TensorInit distribution = tensor->init;
      tensors.push_back({tensor->name, dtype, tensor->shape,
                         [dtype, seed, distribution](std::span<uint8_t> bytes) {
                           FillRandom(bytes, dtype, seed, distribution);
                         }});
      weight_map[tensor->name] = file_name;
    }
    auto written = WriteSafetensors((dir / file_name).string(), tensors, {{"format", "pt"}});
    if (!written) return std::unexpected(written.error());
  }
  if (sharded) {
    nlohmann::ordered_json index;
    index["metadata"] = {{"total_size", total_bytes}};
    index["weight_map"] = weight_map;
    auto written = WriteText(dir / "model.safetensors.index.json", index.dump(2) + "\n");
    if (!written) return std::unexpected(written.error());
  }
  auto written = WriteText(dir / "config.json", config_json.dump(2) + "\n");
  if (!written) return std::unexpected(written.error());

  if (!options.tokenizer_file.empty()) {
    const fs::path source(options.tokenizer_file);
    fs::copy_file(source, dir / source.filename(), fs::copy_options::overwrite_existing, error);
    if (error) {
      return std::unexpected("cannot copy tokenizer " + source.string() + " into " + dir.string() +
                             ": " + error.message());
    }
  }
  return config;
}

}  // namespace actex
