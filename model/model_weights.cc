#include "model/model_weights.h"

#include <sodium.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "base/regular_file.h"
#include "base/text.h"
#include "base/whole_file.h"
#include "model/architecture.h"
#include "storage/safetensors.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// One tensor as found in a weight file, with the file kept for error messages.
struct FoundTensor {
  const SafetensorsTensor* tensor = nullptr;
  const std::string* path = nullptr;
};

std::optional<WeightDtype> ParseDtype(const std::string& dtype) {
  if (dtype == "F32") return WeightDtype::kF32;
  if (dtype == "BF16") return WeightDtype::kBF16;
  if (dtype == "F16") return WeightDtype::kF16;
  return std::nullopt;
}

}  // namespace

struct ModelWeights::State {
  ModelConfig config;
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  std::map<std::string, WeightView> views;
  int64_t file_bytes = 0;
  std::string fingerprint;
};

ModelWeights::ModelWeights() : state_(std::make_unique<State>()) {}
ModelWeights::~ModelWeights() = default;

const ModelConfig& ModelWeights::config() const { return state_->config; }

WeightView ModelWeights::Get(const std::string& name) const {
  auto it = state_->views.find(name);
  return it == state_->views.end() ? WeightView{} : it->second;
}

int64_t ModelWeights::file_bytes() const { return state_->file_bytes; }

const std::string& ModelWeights::fingerprint() const { return state_->fingerprint; }

std::expected<std::shared_ptr<const ModelWeights>, std::string> ModelWeights::Open(
    const std::string& model_dir) {
  auto config = LoadModelConfig(model_dir);
  if (!config) return std::unexpected(config.error());
  auto config_bytes = ReadWholeFile((fs::path(model_dir) / "config.json").string());
  if (!config_bytes) return std::unexpected(config_bytes.error());

  std::shared_ptr<ModelWeights> weights(new ModelWeights());
  State& state = *weights->state_;
  state.config = *config;

  // Which file holds each tensor: one file, or the files an index names.
  const std::string single = (fs::path(model_dir) / "model.safetensors").string();
  const std::string index_path = (fs::path(model_dir) / "model.safetensors.index.json").string();
  std::map<std::string, std::string> weight_map;  // tensor -> file name, from the index
  std::set<std::string> file_names;
  // A dangling or looping symlink is reported as itself, not as a missing file.
  auto has_single = PathEntryExists(single);
  if (!has_single) return std::unexpected(has_single.error());
  std::expected<bool, std::string> has_index = false;
  if (!*has_single) has_index = PathEntryExists(index_path);
  if (!has_index) return std::unexpected(has_index.error());
  if (*has_single) {
    file_names.insert("model.safetensors");
  } else if (*has_index) {
    auto index_text = ReadWholeFile(index_path);
    if (!index_text) return std::unexpected(index_text.error());
    auto index = nlohmann::json::parse(*index_text, nullptr, /*allow_exceptions=*/false);
    if (index.is_discarded() || !index.is_object()) {
      return std::unexpected(index_path + ": not valid JSON");
    }
    auto map = index.find("weight_map");
    if (map == index.end() || !map->is_object()) {
      return std::unexpected(index_path + ": missing object \"weight_map\"");
    }
    for (const auto& [tensor, file] : map->items()) {
      if (!file.is_string()) {
        return std::unexpected(index_path + ": weight_map entry \"" + tensor +
                               "\" is not a file name");
      }
      const std::string name = file.get<std::string>();
      if (name.empty() || name.find('/') != std::string::npos || name == "..") {
        return std::unexpected(index_path + ": weight_map entry \"" + tensor + "\" names \"" +
                               name + "\", not a file in " + model_dir);
      }
      weight_map[tensor] = name;
      file_names.insert(name);
    }
  } else {
    return std::unexpected(model_dir +
                           " has neither model.safetensors nor model.safetensors.index.json");
  }

  // Map every file (headers only are read) and note each tensor's file.
  std::map<std::string, const SafetensorsFile*> by_name;
  std::string fingerprint_input = *config_bytes;
  for (const std::string& name : file_names) {
    auto file = SafetensorsFile::Open((fs::path(model_dir) / name).string());
    if (!file) return std::unexpected(file.error());
    state.file_bytes += (*file)->file_bytes();
    fingerprint_input += (*file)->header_json();
    by_name[name] = file->get();
    state.files.push_back(std::move(*file));
  }
  std::map<std::string, FoundTensor> found;
  if (weight_map.empty()) {
    const SafetensorsFile& file = *state.files.front();
    for (const auto& [name, tensor] : file.tensors()) found[name] = {&tensor, &file.path()};
  } else {
    for (const auto& [name, file_name] : weight_map) {
      const SafetensorsFile& file = *by_name.at(file_name);
      auto it = file.tensors().find(name);
      if (it == file.tensors().end()) {
        return std::unexpected(index_path + " places tensor " + name + " in " + file.path() +
                               ", which has no such tensor");
      }
      found[name] = {&it->second, &file.path()};
    }
  }
  const std::string where = weight_map.empty() ? single : index_path;

  // Every tensor the config implies, with its shape and one dtype for all.
  std::optional<WeightDtype> model_dtype;
  std::string first_dtype, first_name;
  for (const TensorSpec& expected : ArchitectureTensors(state.config)) {
    auto it = found.find(expected.name);
    if (it == found.end()) {
      if (!expected.required) continue;
      return std::unexpected(where + " has no tensor " + expected.name + ", which a " +
                             state.config.model_type + " model with config.json's " +
                             expected.because + " needs");
    }
    const SafetensorsTensor& tensor = *it->second.tensor;
    const std::string& path = *it->second.path;
    if (tensor.shape != expected.shape) {
      return std::unexpected("tensor " + expected.name + " in " + path + " has shape " +
                             ShapeText(tensor.shape) + ", but config.json (" + expected.because +
                             ") implies " + ShapeText(expected.shape));
    }
    const auto dtype = ParseDtype(tensor.dtype);
    if (!dtype) {
      return std::unexpected("tensor " + expected.name + " in " + path + " has dtype " +
                             tensor.dtype + "; actex reads F32, BF16 and F16 weights");
    }
    if (!model_dtype) {
      model_dtype = dtype;
      first_dtype = tensor.dtype;
      first_name = expected.name;
    } else if (*dtype != *model_dtype) {
      return std::unexpected("tensor " + expected.name + " in " + path + " is " + tensor.dtype +
                             " but " + first_name + " is " + first_dtype +
                             "; all weights must share one dtype");
    }
    WeightView view;
    view.data = tensor.bytes.data();
    view.dtype = *dtype;
    view.rows = tensor.shape.size() == 2 ? tensor.shape[0] : 1;
    view.cols = tensor.shape.back();
    state.views[expected.name] = view;
  }

  // A config that says fewer layers or another vocabulary than the weights hold.
  for (const auto& [name, where_found] : found) {
    const int layer = LayerOfTensor(name);
    if (layer >= state.config.layers) {
      return std::unexpected(*where_found.path + " has tensor " + name + ", but config.json " +
                             "says num_hidden_layers " + std::to_string(state.config.layers));
    }
  }
  if (sodium_init() < 0) return std::unexpected("libsodium failed to initialise");
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(fingerprint_input.data()),
                     fingerprint_input.size());
  char hex[2 * crypto_hash_sha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
  state.fingerprint = hex;
  return std::shared_ptr<const ModelWeights>(std::move(weights));
}

}  // namespace actex
