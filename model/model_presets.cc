#include "model/model_presets.h"

namespace actex {
namespace {

using Json = nlohmann::ordered_json;

// The fields every HF decoder config shares, in HF's order where it matters little.
Json Decoder(const char* type, const char* architecture, int vocab, int hidden, int intermediate,
             int layers, int heads, int kv_heads, double theta, double eps, bool tied,
             int max_positions) {
  Json json;
  json["architectures"] = {architecture};
  json["attention_dropout"] = 0.0;
  json["hidden_size"] = hidden;
  json["initializer_range"] = 0.02;
  json["intermediate_size"] = intermediate;
  json["max_position_embeddings"] = max_positions;
  json["model_type"] = type;
  json["num_attention_heads"] = heads;
  json["num_hidden_layers"] = layers;
  json["num_key_value_heads"] = kv_heads;
  json["rms_norm_eps"] = eps;
  json["rope_theta"] = theta;
  json["tie_word_embeddings"] = tied;
  json["use_cache"] = true;
  json["vocab_size"] = vocab;
  return json;
}

Json Qwen2(int vocab, int hidden, int intermediate, int layers, int heads, int kv_heads, bool tied,
           int max_positions, std::optional<int> bos) {
  Json json;
  json["architectures"] = {"Qwen2ForCausalLM"};
  json["attention_dropout"] = 0.0;
  json["bos_token_id"] = bos ? Json(*bos) : Json(nullptr);
  json["eos_token_id"] = bos ? Json(*bos) : Json(nullptr);
  json["hidden_act"] = "silu";
  json["hidden_size"] = hidden;
  json["initializer_range"] = 0.02;
  json["intermediate_size"] = intermediate;
  json["max_position_embeddings"] = max_positions;
  json["max_window_layers"] = layers;
  json["model_type"] = "qwen2";
  json["num_attention_heads"] = heads;
  json["num_hidden_layers"] = layers;
  json["num_key_value_heads"] = kv_heads;
  json["rms_norm_eps"] = 1e-6;
  json["rope_theta"] = 1e6;
  json["sliding_window"] = nullptr;
  json["tie_word_embeddings"] = tied;
  json["use_cache"] = true;
  json["use_sliding_window"] = false;
  json["vocab_size"] = vocab;
  return json;
}

Json Gpt2() {
  Json json;
  json["activation_function"] = "gelu_new";
  json["architectures"] = {"GPT2LMHeadModel"};
  json["bos_token_id"] = 50256;
  json["eos_token_id"] = 50256;
  json["layer_norm_epsilon"] = 1e-5;
  json["model_type"] = "gpt2";
  json["n_embd"] = 768;
  json["n_head"] = 12;
  json["n_inner"] = nullptr;
  json["n_layer"] = 12;
  json["n_positions"] = 1024;
  json["vocab_size"] = 50257;
  return json;
}

Json Llama32() {
  Json json = Decoder("llama", "LlamaForCausalLM", 128256, 2048, 8192, 16, 32, 8, 500000.0, 1e-5,
                      true, 131072);
  json["attention_bias"] = false;
  json["bos_token_id"] = 128000;
  json["head_dim"] = 64;
  json["hidden_act"] = "silu";
  json["mlp_bias"] = false;
  json["rope_scaling"] = {{"factor", 32.0},
                          {"high_freq_factor", 4.0},
                          {"low_freq_factor", 1.0},
                          {"original_max_position_embeddings", 8192},
                          {"rope_type", "llama3"}};
  return json;
}

Json Gemma2() {
  Json json = Decoder("gemma2", "Gemma2ForCausalLM", 256000, 2304, 9216, 26, 8, 4, 10000.0, 1e-6,
                      true, 8192);
  json["attn_logit_softcapping"] = 50.0;
  json["bos_token_id"] = 2;
  json["final_logit_softcapping"] = 30.0;
  json["head_dim"] = 256;
  json["hidden_activation"] = "gelu_pytorch_tanh";
  json["query_pre_attn_scalar"] = 256;
  json["sliding_window"] = 4096;
  return json;
}

Json Qwen3() {
  Json json = Decoder("qwen3", "Qwen3ForCausalLM", 151936, 1024, 3072, 28, 16, 8, 1e6, 1e-6, true,
                      40960);
  json["attention_bias"] = false;
  json["bos_token_id"] = 151643;
  json["head_dim"] = 128;
  json["hidden_act"] = "silu";
  json["sliding_window"] = nullptr;
  json["use_sliding_window"] = false;
  return json;
}

Json Mistral() {  // Mistral-7B-v0.1: a 4096-token sliding window
  Json json = Decoder("mistral", "MistralForCausalLM", 32000, 4096, 14336, 32, 32, 8, 10000.0,
                      1e-5, false, 32768);
  json["bos_token_id"] = 1;
  json["hidden_act"] = "silu";
  json["sliding_window"] = 4096;
  return json;
}

Json Olmoe() {  // OLMoE-1B-7B-0924: 64 experts, top-8 unrenormalised, q/k norm over all heads
  Json json = Decoder("olmoe", "OlmoeForCausalLM", 50304, 2048, 1024, 16, 16, 16, 10000.0, 1e-5,
                      false, 4096);
  json["attention_bias"] = false;
  json["clip_qkv"] = nullptr;
  json["eos_token_id"] = 50279;
  json["hidden_act"] = "silu";
  json["norm_topk_prob"] = false;
  json["num_experts"] = 64;
  json["num_experts_per_tok"] = 8;
  json["pad_token_id"] = 1;
  json["rope_scaling"] = nullptr;
  return json;
}

Json Qwen3Moe() {  // Qwen3-30B-A3B: 128 experts of 768 columns, top-8 renormalised
  Json json = Decoder("qwen3_moe", "Qwen3MoeForCausalLM", 151936, 2048, 6144, 48, 32, 4, 1e6, 1e-6,
                      false, 40960);
  json["attention_bias"] = false;
  json["bos_token_id"] = 151643;
  json["decoder_sparse_step"] = 1;
  json["head_dim"] = 128;
  json["hidden_act"] = "silu";
  json["mlp_only_layers"] = Json::array();
  json["moe_intermediate_size"] = 768;
  json["norm_topk_prob"] = true;
  json["num_experts"] = 128;
  json["num_experts_per_tok"] = 8;
  json["sliding_window"] = nullptr;
  json["use_sliding_window"] = false;
  return json;
}

Json Mixtral() {  // Mixtral-8x7B-v0.1: 8 experts of 14336 columns, top-2
  Json json = Decoder("mixtral", "MixtralForCausalLM", 32000, 4096, 14336, 32, 32, 8, 1e6, 1e-5,
                      false, 32768);
  json["bos_token_id"] = 1;
  json["hidden_act"] = "silu";
  json["num_experts_per_tok"] = 2;
  json["num_local_experts"] = 8;
  json["router_jitter_noise"] = 0.0;
  json["sliding_window"] = nullptr;
  return json;
}

}  // namespace

const std::vector<std::string>& PresetNames() {
  static const auto* names = new std::vector<std::string>{
      "tiny",       "qwen2.5-0.5b", "qwen2.5-7b",  "gpt2",          "llama-3.2-1b", "gemma-2-2b",
      "qwen3-0.6b", "mistral-7b",   "olmoe-1b-7b", "qwen3-30b-a3b", "mixtral-8x7b"};
  return *names;
}

std::expected<nlohmann::ordered_json, std::string> PresetConfigJson(const std::string& name) {
  if (name == "tiny") return Qwen2(4096, 64, 176, 2, 4, 2, true, 512, std::nullopt);
  if (name == "qwen2.5-0.5b") return Qwen2(151936, 896, 4864, 24, 14, 2, true, 32768, 151643);
  if (name == "qwen2.5-7b") return Qwen2(152064, 3584, 18944, 28, 28, 4, false, 131072, 151643);
  if (name == "gpt2") return Gpt2();
  if (name == "llama-3.2-1b") return Llama32();
  if (name == "gemma-2-2b") return Gemma2();
  if (name == "qwen3-0.6b") return Qwen3();
  if (name == "mistral-7b") return Mistral();
  if (name == "olmoe-1b-7b") return Olmoe();
  if (name == "qwen3-30b-a3b") return Qwen3Moe();
  if (name == "mixtral-8x7b") return Mixtral();
  std::string list;
  for (const std::string& preset : PresetNames()) list += (list.empty() ? "" : ", ") + preset;
  return std::unexpected("unknown random model preset \"" + name + "\"; use " + list);
}

}  // namespace actex
