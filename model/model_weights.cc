#include "model/model_weights.h"

#include <algorithm>
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
#include "model/config_reader.h"
#include "model/tokenizer/file_digest.h"
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

// Which files hold a model's weights: model.safetensors, or those its index names.
struct WeightFileList {
  std::string listing;  // model.safetensors or model.safetensors.index.json: errors name it
  std::map<std::string, std::string> weight_map{};  // tensor -> file name; empty for one file
  std::set<std::string> file_names{};               // in name order, the fingerprint's order
};

// Reads model.safetensors.index.json's weight_map: every entry a plain file name of
// the model folder `model_dir`. Errors name the index and the entry.
std::expected<WeightFileList, std::string> ReadWeightIndex(const std::string& index_path,
                                                           const std::string& model_dir) {
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
  WeightFileList list{.listing = index_path};
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string()) {
      return std::unexpected(index_path + ": weight_map entry \"" + tensor +
                             "\" is not a file name");
    }
    const std::string name = file.get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name == "..") {
      return std::unexpected(index_path + ": weight_map entry \"" + tensor + "\" names \"" + name +
                             "\", not a file in " + model_dir);
    }
    list.weight_map[tensor] = name;
    list.file_names.insert(name);
  }
  return list;
}

// The weight files of `model_dir`: model.safetensors when it is there, else the files
// model.safetensors.index.json names. A dangling or looping symlink is reported as
// itself, not as a missing file; neither file is an error naming the folder.
std::expected<WeightFileList, std::string> ListWeightFiles(const std::string& model_dir) {
  const std::string single = (fs::path(model_dir) / "model.safetensors").string();
  auto has_single = PathEntryExists(single);
  if (!has_single) return std::unexpected(has_single.error());
  if (*has_single) return WeightFileList{.listing = single, .file_names = {"model.safetensors"}};
  const std::string index_path = (fs::path(model_dir) / "model.safetensors.index.json").string();
  auto has_index = PathEntryExists(index_path);
  if (!has_index) return std::unexpected(has_index.error());
  if (*has_index) return ReadWeightIndex(index_path, model_dir);
  return std::unexpected(model_dir +
                         " has neither model.safetensors nor model.safetensors.index.json");
}

// Each tensor of `files` (opened in the order of list.file_names), found where `list`
// places it. Fails when the index places a tensor in a file that lacks it.
std::expected<std::map<std::string, FoundTensor>, std::string> LocateTensors(
    const WeightFileList& list, const std::vector<std::unique_ptr<SafetensorsFile>>& files) {
  std::map<std::string, FoundTensor> found;
  if (list.weight_map.empty()) {  // model.safetensors: every tensor it holds
    for (const auto& file : files) {
      for (const auto& [name, tensor] : file->tensors()) found[name] = {&tensor, &file->path()};
    }
    return found;
  }
  std::map<std::string, const SafetensorsFile*> by_name;
  auto file = files.begin();
  for (const std::string& name : list.file_names) by_name[name] = (file++)->get();
  for (const auto& [name, file_name] : list.weight_map) {
    const SafetensorsFile& holder = *by_name.at(file_name);
    auto it = holder.tensors().find(name);
    if (it == holder.tensors().end()) {
      return std::unexpected(list.listing + " places tensor " + name + " in " + holder.path() +
                             ", which has no such tensor");
    }
    found[name] = {&it->second, &holder.path()};
  }
  return found;
}

// A view of every tensor the architecture table lists for `config`, each with the shape
// config.json implies, all in one dtype of F32, BF16 or F16; an optional tensor may be
// absent. Errors name the tensor, its file (or `listing` when it is missing) and what
// config.json says.
std::expected<std::map<std::string, WeightView>, std::string> ViewArchitectureTensors(
    const ModelConfig& config, const std::map<std::string, FoundTensor>& found,
    const std::string& listing) {
  std::map<std::string, WeightView> views;
  std::optional<WeightDtype> model_dtype;
  std::string first_dtype, first_name;
  // A config.json that says far more layers than the files hold (a typo of 1e9) must be
  // refused, not make a table of billions of names first: past one layer beyond the
  // deepest the files hold, the table would only name more missing tensors.
  int deepest = -1;
  for (const auto& [name, where_found] : found) deepest = std::max(deepest, LayerOfTensor(name));
  ModelConfig table_config = config;
  table_config.layers = std::min(config.layers, deepest + 2);
  for (const TensorSpec& expected : ArchitectureTensors(table_config)) {
    auto it = found.find(expected.name);
    if (it == found.end()) {
      if (!expected.required) continue;
      std::string why = listing + " has no tensor " + expected.name + ", which a " +
                        config.model_type + " model with config.json's " + expected.because +
                        " needs";
      if (LayerOfTensor(expected.name) > deepest) {
        why += " (config.json says num_hidden_layers " + std::to_string(config.layers) +
               "; the files hold " +
               (deepest < 0 ? std::string("no layer") : "layers 0.." + std::to_string(deepest)) +
               ")";
      }
      return std::unexpected(why);
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
    views[expected.name] = {.data = tensor.bytes.data(),
                            .dtype = *dtype,
                            .rows = tensor.shape.size() == 2 ? tensor.shape[0] : 1,
                            .cols = tensor.shape.back()};
  }
  return views;
}

// Fails when the weights hold a layer past config.json's num_hidden_layers (a config
// that says fewer layers than the weights hold).
std::expected<void, std::string> CheckNoLayerBeyond(
    const ModelConfig& config, const std::map<std::string, FoundTensor>& found) {
  for (const auto& [name, where_found] : found) {
    if (LayerOfTensor(name) >= config.layers) {
      return std::unexpected(*where_found.path + " has tensor " + name + ", but config.json " +
                             "says num_hidden_layers " + std::to_string(config.layers));
    }
  }
  return {};
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
  auto list = ListWeightFiles(model_dir);
  if (!list) return std::unexpected(list.error());
  // Map every file (headers only are read); the fingerprint is config.json's bytes and
  // every file's header, files in name order.
  std::string fingerprint_input = *config_bytes;
  for (const std::string& name : list->file_names) {
    auto file = SafetensorsFile::Open((fs::path(model_dir) / name).string());
    if (!file) return std::unexpected(file.error());
    state.file_bytes += (*file)->file_bytes();
    fingerprint_input += (*file)->header_json();
    state.files.push_back(std::move(*file));
  }
  auto found = LocateTensors(*list, state.files);
  if (!found) return std::unexpected(found.error());
  auto views = ViewArchitectureTensors(state.config, *found, list->listing);
  if (!views) return std::unexpected(views.error());
  state.views = std::move(*views);
  if (auto layers = CheckNoLayerBeyond(state.config, *found); !layers) {
    return std::unexpected(layers.error());
  }
  state.fingerprint = Sha256HexOfBytes(fingerprint_input);
  return std::shared_ptr<const ModelWeights>(std::move(weights));
}

}  // namespace actex
