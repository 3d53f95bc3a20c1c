#ifndef ACTEX_MODEL_MODEL_PRESETS_H_
#define ACTEX_MODEL_MODEL_PRESETS_H_

#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace actex {

// The config.json of a make-model preset: the real model's shapes and features, in the
// layout HF writes for its family (parsed back by LoadModelConfig like any download).
// "tiny" (the qwen2-tiny fixture's shape), "qwen2.5-0.5b", "qwen2.5-7b", "gpt2",
// "llama-3.2-1b", "gemma-2-2b", "qwen3-0.6b", "mistral-7b", and the mixtures of experts
// "olmoe-1b-7b", "qwen3-30b-a3b", "mixtral-8x7b".
std::expected<nlohmann::ordered_json, std::string> PresetConfigJson(const std::string& name);

const std::vector<std::string>& PresetNames();

}  // namespace actex

#endif  // ACTEX_MODEL_MODEL_PRESETS_H_
