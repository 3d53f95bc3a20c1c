// The tensor tables: one function per layout of names. A new family with HF's usual
// "model.layers.N.self_attn..." names only adds its optional tensors to
// DecoderTensors; one with other names gets a function like Gpt2Tensors.

#include "model/architecture.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace actex {
namespace {

using Role = TensorRole;
using Split = TensorSplit;

TensorInit WithStd(double std) { return {0.0f, static_cast<float>(std * std::sqrt(3.0))}; }

// Norm multipliers in [0.5, 1.5]; Gemma stores w of (1 + w), so w in [-0.5, 0.5].
TensorInit NormInit(const ModelConfig& c) {
  return c.norm == NormKind::kRmsOnePlusWeight ? TensorInit{0.0f, 0.5f} : TensorInit{1.0f, 0.5f};
}

struct Sizes {
  int64_t hidden, q, kv, inter, vocab;
  std::string h, attention, mlp, vocab_text;
  explicit Sizes(const ModelConfig& c)
      : hidden(c.hidden),
        q(int64_t{c.heads} * c.head_dim),
        kv(int64_t{c.kv_heads} * c.head_dim),
        inter(c.intermediate),
        vocab(c.vocab_size),
        h("hidden_size " + std::to_string(c.hidden)),
        attention(h + ", num_attention_heads " + std::to_string(c.heads) +
                  ", num_key_value_heads " + std::to_string(c.kv_heads) + ", head_dim " +
                  std::to_string(c.head_dim)),
        mlp(h + ", intermediate_size " + std::to_string(c.intermediate)),
        vocab_text("vocab_size " + std::to_string(c.vocab_size) + ", " + h) {}
};

// A mixture-of-experts layer's MLP (`p` = "model.layers.N."): the router, every expert's
// gate/up/down (mixtral: block_sparse_moe.experts.<e>.w1/w3/w2) and qwen2_moe's shared
// expert with its sigmoid gate, appended to `t`.
void AddExperts(const ModelConfig& c, int layer, const std::string& p, std::vector<TensorSpec>& t) {
  const int64_t hidden = c.hidden, width = c.moe.expert_intermediate;
  const bool mixtral = c.model_type == "mixtral";
  const std::string block = p + (mixtral ? "block_sparse_moe." : "mlp.");
  const std::string experts =
      "num_experts " + std::to_string(c.moe.experts) + ", hidden_size " + std::to_string(hidden);
  const std::string expert_width = "expert intermediate size " + std::to_string(width) +
                                   ", hidden_size " + std::to_string(hidden);
  auto add = [&](const std::string& name, std::vector<int64_t> shape, Role role, Split split,
                 TensorInit init, const std::string& because, int expert = -1) {
    t.push_back({block + name, std::move(shape), role, layer, split, TensorLayout::kLinear, true,
                 init, because, expert});
  };
  add("gate.weight", {c.moe.experts, hidden}, Role::kRouter, Split::kReplicated,
      WithStd(2.0 / std::sqrt(hidden)), experts);
  const TensorInit from_hidden = WithStd(1.0 / std::sqrt(hidden));
  for (int e = 0; e < c.moe.experts; ++e) {
    const std::string expert = "experts." + std::to_string(e) + ".";
    add(expert + (mixtral ? "w1.weight" : "gate_proj.weight"), {width, hidden}, Role::kExpertGate,
        Split::kOutputByExpertColumns, from_hidden, expert_width, e);
    add(expert + (mixtral ? "w3.weight" : "up_proj.weight"), {width, hidden}, Role::kExpertUp,
        Split::kOutputByExpertColumns, from_hidden, expert_width, e);
    add(expert + (mixtral ? "w2.weight" : "down_proj.weight"), {hidden, width}, Role::kExpertDown,
        Split::kInputByExpertColumns, WithStd(1.0 / std::sqrt(width)), expert_width, e);
  }
  const int64_t shared = c.moe.shared_expert_intermediate;
  if (shared == 0) return;
  const std::string shared_width = "shared_expert_intermediate_size " + std::to_string(shared) +
                                   ", hidden_size " + std::to_string(hidden);
  add("shared_expert.gate_proj.weight", {shared, hidden}, Role::kSharedGate,
      Split::kOutputBySharedColumns, from_hidden, shared_width);
  add("shared_expert.up_proj.weight", {shared, hidden}, Role::kSharedUp,
      Split::kOutputBySharedColumns, from_hidden, shared_width);
  add("shared_expert.down_proj.weight", {hidden, shared}, Role::kSharedDown,
      Split::kInputBySharedColumns, WithStd(1.0 / std::sqrt(shared)), shared_width);
  add("shared_expert_gate.weight", {1, hidden}, Role::kSharedExpertGate, Split::kReplicated,
      WithStd(1.5 / std::sqrt(hidden)), "hidden_size " + std::to_string(hidden));
}

// llama, mistral, qwen2, qwen3, gemma2, gemma3_text and the mixtures of experts
// (mixtral, qwen2_moe, qwen3_moe, olmoe): HF's "model.layers.N." names.
std::vector<TensorSpec> DecoderTensors(const ModelConfig& c) {
  const Sizes s(c);
  const TensorInit norm = NormInit(c);
  const TensorInit qk_norm =
      c.norm == NormKind::kRmsOnePlusWeight ? TensorInit{0.4f, 0.6f} : TensorInit{1.4f, 0.6f};
  const TensorInit qk = WithStd(1.5 / std::sqrt(s.hidden));
  const TensorInit from_hidden = WithStd(1.0 / std::sqrt(s.hidden));
  std::vector<TensorSpec> t;
  t.push_back({"model.embed_tokens.weight", {s.vocab, s.hidden}, Role::kEmbed, -1,
               Split::kReplicated, TensorLayout::kLinear, true,
               WithStd(c.embed_scale > 0 ? 0.5 : 1.0), s.vocab_text});
  for (int layer = 0; layer < c.layers; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    auto add = [&](const std::string& name, std::vector<int64_t> shape, Role role, Split split,
                   TensorInit init, const std::string& because) {
      t.push_back({p + name, std::move(shape), role, layer, split, TensorLayout::kLinear, true,
                   init, because});
    };
    add("self_attn.q_proj.weight", {s.q, s.hidden}, Role::kQ, Split::kOutputByHeads, qk,
        s.attention);
    if (c.qkv_bias) {
      add("self_attn.q_proj.bias", {s.q}, Role::kQBias, Split::kOutputByHeads, WithStd(0.5),
          s.attention);
    }
    add("self_attn.k_proj.weight", {s.kv, s.hidden}, Role::kK, Split::kOutputByKvHeads, qk,
        s.attention);
    if (c.qkv_bias) {
      add("self_attn.k_proj.bias", {s.kv}, Role::kKBias, Split::kOutputByKvHeads, WithStd(0.5),
          s.attention);
    }
    add("self_attn.v_proj.weight", {s.kv, s.hidden}, Role::kV, Split::kOutputByKvHeads,
        from_hidden, s.attention);
    if (c.qkv_bias) {
      add("self_attn.v_proj.bias", {s.kv}, Role::kVBias, Split::kOutputByKvHeads, WithStd(0.3),
          s.attention);
    }
    add("self_attn.o_proj.weight", {s.hidden, s.q}, Role::kO, Split::kInputByHeads,
        WithStd(1.0 / std::sqrt(s.q)), s.attention);
    if (c.o_bias) {
      add("self_attn.o_proj.bias", {s.hidden}, Role::kOBias, Split::kReplicated, WithStd(0.1),
          s.h);
    }
    if (c.qk_norm && c.qk_norm_whole_projection) {  // OLMoE: over all heads at once
      add("self_attn.q_norm.weight", {s.q}, Role::kQNorm, Split::kOutputByHeads, qk_norm,
          s.attention);
      add("self_attn.k_norm.weight", {s.kv}, Role::kKNorm, Split::kOutputByKvHeads, qk_norm,
          s.attention);
    } else if (c.qk_norm) {
      const std::string dim = "head_dim " + std::to_string(c.head_dim);
      add("self_attn.q_norm.weight", {c.head_dim}, Role::kQNorm, Split::kReplicated, qk_norm,
          dim);
      add("self_attn.k_norm.weight", {c.head_dim}, Role::kKNorm, Split::kReplicated, qk_norm,
          dim);
    }
    if (c.IsSparse(layer)) {
      AddExperts(c, layer, p, t);
    } else {
      add("mlp.gate_proj.weight", {s.inter, s.hidden}, Role::kGate, Split::kOutputByIntermediate,
          from_hidden, s.mlp);
      if (c.mlp_bias) {
        add("mlp.gate_proj.bias", {s.inter}, Role::kGateBias, Split::kOutputByIntermediate,
            WithStd(0.1), s.mlp);
      }
      add("mlp.up_proj.weight", {s.inter, s.hidden}, Role::kUp, Split::kOutputByIntermediate,
          from_hidden, s.mlp);
      if (c.mlp_bias) {
        add("mlp.up_proj.bias", {s.inter}, Role::kUpBias, Split::kOutputByIntermediate,
            WithStd(0.1), s.mlp);
      }
      add("mlp.down_proj.weight", {s.hidden, s.inter}, Role::kDown, Split::kInputByIntermediate,
          WithStd(1.0 / std::sqrt(s.inter)), s.mlp);
      if (c.mlp_bias) {
        add("mlp.down_proj.bias", {s.hidden}, Role::kDownBias, Split::kReplicated, WithStd(0.1),
            s.h);
      }
    }
    add("input_layernorm.weight", {s.hidden}, Role::kInputNorm, Split::kReplicated, norm, s.h);
    if (c.sandwich_norms) {
      // Gemma: post_attention_layernorm normalises the attention output; the MLP's
      // input norm is pre_feedforward_layernorm.
      add("post_attention_layernorm.weight", {s.hidden}, Role::kPostAttentionNorm,
          Split::kReplicated, norm, s.h);
      add("pre_feedforward_layernorm.weight", {s.hidden}, Role::kPreMlpNorm, Split::kReplicated,
          norm, s.h);
      add("post_feedforward_layernorm.weight", {s.hidden}, Role::kPostMlpNorm,
          Split::kReplicated, norm, s.h);
    } else {
      add("post_attention_layernorm.weight", {s.hidden}, Role::kPreMlpNorm, Split::kReplicated,
          norm, s.h);
    }
  }
  t.push_back({"model.norm.weight", {s.hidden}, Role::kFinalNorm, -1, Split::kReplicated,
               TensorLayout::kLinear, true, norm, s.h});
  return t;
}

// gpt2: GPT2LMHeadModel's "transformer." names, Conv1D weights stored [in, out].
std::vector<TensorSpec> Gpt2Tensors(const ModelConfig& c) {
  const Sizes s(c);
  const TensorInit norm = NormInit(c), bias = WithStd(0.1);
  const std::string positions = "n_positions " + std::to_string(c.max_positions) + ", " + s.h;
  std::vector<TensorSpec> t;
  auto top = [&](const std::string& name, std::vector<int64_t> shape, Role role, TensorInit init,
                 const std::string& because) {
    t.push_back({"transformer." + name, std::move(shape), role, -1, Split::kReplicated,
                 TensorLayout::kLinear, true, init, because});
  };
  top("wte.weight", {s.vocab, s.hidden}, Role::kEmbed, WithStd(1.0), s.vocab_text);
  top("wpe.weight", {c.max_positions, s.hidden}, Role::kPositionEmbed, WithStd(0.5), positions);
  for (int layer = 0; layer < c.layers; ++layer) {
    const std::string p = "transformer.h." + std::to_string(layer) + ".";
    auto add = [&](const std::string& name, std::vector<int64_t> shape, Role role, Split split,
                   TensorInit init, const std::string& because) {
      const TensorLayout layout = shape.size() == 2 ? TensorLayout::kConv1D : TensorLayout::kLinear;
      t.push_back({p + name, std::move(shape), role, layer, split, layout, true, init, because});
    };
    add("ln_1.weight", {s.hidden}, Role::kInputNorm, Split::kReplicated, norm, s.h);
    add("ln_1.bias", {s.hidden}, Role::kInputNormBias, Split::kReplicated, bias, s.h);
    add("attn.c_attn.weight", {s.hidden, 3 * s.hidden}, Role::kQkv, Split::kOutputByFusedQkv,
        WithStd(1.0 / std::sqrt(s.hidden)), s.attention);
    add("attn.c_attn.bias", {3 * s.hidden}, Role::kQkvBias, Split::kOutputByFusedQkv,
        WithStd(0.5), s.attention);
    add("attn.c_proj.weight", {s.hidden, s.hidden}, Role::kO, Split::kInputByHeads,
        WithStd(1.0 / std::sqrt(s.hidden)), s.attention);
    add("attn.c_proj.bias", {s.hidden}, Role::kOBias, Split::kReplicated, bias, s.h);
    add("ln_2.weight", {s.hidden}, Role::kPreMlpNorm, Split::kReplicated, norm, s.h);
    add("ln_2.bias", {s.hidden}, Role::kPreMlpNormBias, Split::kReplicated, bias, s.h);
    add("mlp.c_fc.weight", {s.hidden, s.inter}, Role::kUp, Split::kOutputByIntermediate,
        WithStd(1.0 / std::sqrt(s.hidden)), s.mlp);
    add("mlp.c_fc.bias", {s.inter}, Role::kUpBias, Split::kOutputByIntermediate, WithStd(0.5),
        s.mlp);
    add("mlp.c_proj.weight", {s.inter, s.hidden}, Role::kDown, Split::kInputByIntermediate,
        WithStd(1.0 / std::sqrt(s.inter)), s.mlp);
    add("mlp.c_proj.bias", {s.hidden}, Role::kDownBias, Split::kReplicated, bias, s.h);
  }
  top("ln_f.weight", {s.hidden}, Role::kFinalNorm, norm, s.h);
  top("ln_f.bias", {s.hidden}, Role::kFinalNormBias, bias, s.h);
  return t;
}

}  // namespace

std::vector<TensorSpec> ArchitectureTensors(const ModelConfig& config) {
  std::vector<TensorSpec> tensors =
      config.model_type == "gpt2" ? Gpt2Tensors(config) : DecoderTensors(config);
  // The LM head is not read (no site needs logits) but must fit when present; a tied
  // model has none.
  tensors.push_back({"lm_head.weight", {config.vocab_size, config.hidden}, TensorRole::kLmHead, -1,
                     TensorSplit::kReplicated, TensorLayout::kLinear,
                     /*required=*/false, WithStd(1.0 / std::sqrt(config.hidden)),
                     "vocab_size, hidden_size"});
  return tensors;
}

int LayerOfTensor(const std::string& name) {
  for (std::string_view prefix : {std::string_view("model.layers."), std::string_view("transformer.h.")}) {
    if (!name.starts_with(prefix)) continue;
    int layer = -1;
    std::from_chars(name.data() + prefix.size(), name.data() + name.size(), layer);
    return layer;
  }
  return -1;
}

}  // namespace actex
