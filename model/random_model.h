#ifndef ACTEX_MODEL_RANDOM_MODEL_H_
#define ACTEX_MODEL_RANDOM_MODEL_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "model/model_config.h"

namespace actex {

// A random model of any supported family in HF's folder layout, for tests, demos and
// benchmarks of real shapes without downloading weights.
struct RandomModelOptions {
  std::string output_dir;  // created if missing; earlier weight files in it are replaced
  // "tiny" (the qwen2-tiny fixture's shape: hidden 64, intermediate 176, 2 layers,
  // 4 heads, 2 KV heads, tied) or a real model's shapes and features: see
  // model_presets.h (qwen2.5-0.5b, qwen2.5-7b, gpt2, llama-3.2-1b, gemma-2-2b,
  // qwen3-0.6b, mistral-7b, olmoe-1b-7b, qwen3-30b-a3b, mixtral-8x7b).
  std::string preset = "tiny";
  int vocab_size = 0;                         // 0: the preset's own (tiny: 4096)
  int layers = 0;                             // 0: the preset's own
  std::optional<bool> tie_word_embeddings{};  // unset: the preset's own; false writes lm_head
  std::string dtype = "float32";              // "float32", "bfloat16" or "float16"
  uint64_t seed = 0;
  // > 0: split the weights into model-0000N-of-0000M.safetensors files of at most this
  // many bytes (a larger single tensor gets a file of its own) with
  // model.safetensors.index.json; 0: one model.safetensors.
  int64_t max_file_bytes = 0;
  std::string tokenizer_file{};  // copied into output_dir under its own name when not empty
};

// Writes config.json and the weights, streaming each tensor from a per-tensor
// generator seeded by (seed, tensor name), so a 7B model never sits in memory and the
// same options always give the same bytes. The tensors and their value ranges come from
// the architecture table (architecture.h): scales keep activations O(1).
// Returns the config that was written.
std::expected<ModelConfig, std::string> MakeRandomModel(const RandomModelOptions& options);

// The config MakeRandomModel would write for `options`, without writing anything.
std::expected<ModelConfig, std::string> RandomModelConfig(const RandomModelOptions& options);

}  // namespace actex

#endif  // ACTEX_MODEL_RANDOM_MODEL_H_
