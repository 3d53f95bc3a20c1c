#include "actors/extract_flag_table.h"

#include <filesystem>

#include "actors/extract_flag_kinds.h"
#include "actors/upload_command.h"
#include "base/absolute_path.h"
#include "storage/shard_writer.h"

namespace actex {
namespace {

using flag_kinds::Join;
using flag_kinds::kMaxFlagSeconds;
using flag_kinds::kMaxFlagThreads;
using flag_kinds::List;
using flag_kinds::Number;
using flag_kinds::Row;
using flag_kinds::Scalar;
using flag_kinds::Status;
using flag_kinds::Switch;
using flag_kinds::Text;
using flag_kinds::Texts;

std::vector<ExtractFlag> MakeTable() {
  constexpr FlagRole kRunOnly = FlagRole::kRunOnly, kResumed = FlagRole::kResumed,
                     kShared = FlagRole::kShared;
  std::vector<ExtractFlag> table;
  ExtractFlag model = Text(
      "--model", "HuggingFace model folder", kResumed, "model_dir",
      [](auto& o) -> auto& { return o.model_dir; });
  model.required = true;
  model.parse = [](const Texts& texts, ExtractOptions& options) -> Status {
    std::error_code error;
    if (!std::filesystem::is_directory(texts.back(), error)) {
      return std::unexpected(texts.back() + " is not a folder");
    }
    options.model_dir = texts.back();
    return {};
  };
  // Recorded absolute, so that a resume from another directory, or with the path
  // spelled otherwise ("m/", "./m"), is compared as the folder it is (run_identity.h).
  model.record = [](const ExtractOptions& options) {
    return nlohmann::json(AbsolutePath(options.model_dir));
  };
  table.push_back(std::move(model));
  table.push_back(List(
      "--data", "corpus files or globs (JSONL, JSONL.gz, Parquet), in order", kResumed, "data",
      [](auto& o) -> auto& { return o.data; },
      /*comma_lists=*/false));
  table.back().required = true;
  // Absolute too: `actex verify OUT` reads these files from any working directory.
  table.back().record = [](const ExtractOptions& options) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const std::string& input : options.data) inputs.push_back(AbsolutePath(input));
    return inputs;
  };
  table.push_back(Text(
      "--out", "output folder", kRunOnly, "out", [](auto& o) -> auto& { return o.out_dir; }));
  table.back().required = true;

  ExtractFlag layers =
      Row("--layers", "layers to capture: 20,21,22,23 or 20-23", kShared, "layers");
  layers.required = true;
  layers.record = [](const ExtractOptions& options) { return nlohmann::json(options.layers); };
  layers.parse = [](const Texts& texts, ExtractOptions& options) -> Status {
    auto parsed = ParseIndexList(texts.back());
    if (!parsed) return std::unexpected(parsed.error());
    options.layers = *parsed;
    options.layers_text = texts.back();
    return {};
  };
  layers.print = [](const ExtractOptions& options) {
    Texts items;
    for (int layer : options.layers) items.push_back(std::to_string(layer));
    return options.layers.empty() ? Texts{} : Texts{Join(items)};
  };
  table.push_back(std::move(layers));
  table.push_back(List(
      "--sites",
      "hook names or short forms: resid_pre, z, resid_mid, resid_post, attn_out, "
      "mlp_out, mlp_post (dense MLPs), router_logits, expert_ids, expert_weights "
      "(mixture-of-experts layers), embed, ln_final",
      kShared, "sites", [](auto& o) -> auto& { return o.sites; },
      /*comma_lists=*/true));
  // Recorded as hook names and absolute folders, but compared as the SAEs' files (a
  // folder may move, or be mounted elsewhere on another host): metadata.json's "saes"
  // (ExtractOptionsToJson), the fingerprint's "SAE files" (run_fingerprint.h) and the
  // resume check (run_identity.h).
  ExtractFlag saes = List(
      "--sae",
      "SITE=DIR (repeatable): encode SITE's activations with the trained SAE in DIR (SAELens "
      "or sparsify) and store each token's strongest latents as SITE.latents.ids, "
      ".values and .count; SITE is a hook name, or a short form naming one site at "
      "--layers; --sites may leave SITE out (its statistics are still recorded)",
      kResumed, "sae", [](auto& o) -> auto& { return o.saes; },
      /*comma_lists=*/false);
  saes.record = [](const ExtractOptions& options) {
    nlohmann::json entries = nlohmann::json::array();
    for (const std::string& entry : options.saes) {
      auto split = SplitSaeEntry(entry);
      entries.push_back(split ? split->first + "=" + AbsolutePath(split->second) : entry);
    }
    return entries;
  };
  saes.parse = [](const Texts& texts, ExtractOptions& options) -> Status {
    for (const std::string& entry : texts) {
      if (auto split = SplitSaeEntry(entry); !split) return std::unexpected(split.error());
    }
    options.saes = texts;
    return {};
  };
  table.push_back(std::move(saes));
  table.push_back(Number(
      "--sae-top-k",
      "latents kept per token for each --sae, strongest first, at most the SAE's width (a "
      "TopK SAE keeps its own k)",
      kShared, "sae_top_k", [](auto& o) -> auto& { return o.sae_top_k; }, 1));
  table.push_back(Number(
      "--sae-examples", "strongest examples kept per latent of each --sae", kShared, "sae_examples",
      [](auto& o) -> auto& { return o.sae_examples; }, 1));
  table.push_back(Number(
      "--shards", "tensor-parallel device shards", kResumed, "shards",
      [](auto& o) -> auto& { return o.shards; }, 1));
  table.push_back(Text("--dtype", "output dtype (default: the model's torch_dtype)", kShared,
                       "dtype", [](auto& o) -> auto& { return o.dtype; },
                       {"bfloat16", "float16", "float32"}));
  table.push_back(Number(
      "--max-seq-len",
      "longest sequence in tokens (default 2048, or the model's n_positions when fewer: "
      "GPT-2's learned positions end there; a larger value given is refused)",
      kShared, "max_seq_len", [](auto& o) -> auto& { return o.max_seq_len; }, 1));
  // Resolved options hold the effective length; only --help sees "not given" (0).
  table.back().record = [](const ExtractOptions& options) {
    return nlohmann::json(options.max_seq_len == 0 ? kDefaultMaxSeqLen : options.max_seq_len);
  };

  ExtractFlag overflow =
      Row("--overflow", "longer documents: truncate or split", kShared, "overflow");
  overflow.parse = [](const Texts& texts, ExtractOptions& options) -> Status {
    if (texts.back() != "truncate" && texts.back() != "split") {
      return std::unexpected("\"" + texts.back() + "\" is not one of truncate,split");
    }
    options.overflow = texts.back() == "split" ? Overflow::kSplit : Overflow::kTruncate;
    return {};
  };
  overflow.record = [](const ExtractOptions& options) {
    return nlohmann::json(options.overflow == Overflow::kSplit ? "split" : "truncate");
  };
  overflow.print = [](const ExtractOptions& options) {
    return options.overflow == Overflow::kSplit ? Texts{"split"} : Texts{};
  };
  table.push_back(std::move(overflow));
  table.push_back(Number(
      "--batch-tokens", "tokens packed into one batch", kShared, "batch_tokens",
      [](auto& o) -> auto& { return o.batch_tokens; }, 1));
  table.push_back(Number(
      "--chunk-docs",
      "consecutive documents that travel together: a batch never crosses a chunk and a "
      "data-parallel replica takes whole chunks, so a document's activations are the same "
      "bits however many replicas or hosts the job has",
      kShared, "chunk_docs", [](auto& o) -> auto& { return o.chunk_docs; }, 1));

  ExtractFlag shard_size = Scalar(
      "--shard-size", "close a shard at this size (bytes, or with KB/MB/GB)", kShared,
      "shard_bytes", [](auto& o) -> auto& { return o.shard_bytes; });
  shard_size.parse = [](const Texts& texts, ExtractOptions& options) -> Status {
    auto bytes = ParseByteSize(texts.back());
    if (!bytes) return std::unexpected(bytes.error());
    options.shard_bytes = *bytes;
    return {};
  };
  table.push_back(std::move(shard_size));

  ExtractFlag compress = Row("--compress", "none or gzip", kShared, "compress");
  compress.parse = [](const Texts& texts, ExtractOptions& options) -> Status {
    if (texts.back() != "none" && texts.back() != "gzip") {
      return std::unexpected("\"" + texts.back() + "\" is not one of none,gzip");
    }
    options.gzip = texts.back() == "gzip";
    return {};
  };
  compress.record = [](const ExtractOptions& options) {
    return nlohmann::json(options.gzip ? "gzip" : "none");
  };
  compress.print = [](const ExtractOptions& options) {
    return options.gzip ? Texts{"gzip"} : Texts{};
  };
  table.push_back(std::move(compress));
  table.push_back(Text(
      "--text-field", "the field (JSONL) or column (Parquet) holding the text", kShared,
      "text_field", [](auto& o) -> auto& { return o.text_field; }));
  table.push_back(Text("--bos",
                       "yes: the model's BOS before every document; no: none; auto: as HF's "
                       "tokenizer(text), from tokenizer.json's post-processor",
                       kShared, "bos", [](auto& o) -> auto& { return o.bos; },
                       {"yes", "no", "auto"}));
  table.push_back(Number(
      "--max-docs", "stop after this many documents (default: all)", kShared, "max_docs",
      [](auto& o) -> auto& { return o.max_docs; }, 1));
  table.push_back(Switch(
      "--overwrite", "replace an earlier run's output in --out instead of resuming it", "overwrite",
      [](auto& o) -> auto& { return o.overwrite; }));
  table.push_back(Number(
      "--blas-threads", "threads per device shard (default: cores / shards)", kRunOnly,
      "blas_threads", [](auto& o) -> auto& { return o.blas_threads; }, 1, kMaxFlagThreads));
  table.push_back(Number(
      "--tokenizer-threads",
      "threads tokenizing each replica's text documents, each with its own tokenizer "
      "(default: 1 on the CPU; with --device cuda a quarter of the cores per local "
      "replica, 1 to 4)",
      kRunOnly, "tokenizer_threads", [](auto& o) -> auto& { return o.tokenizer_threads; }, 1,
      kMaxFlagThreads));
  table.push_back(
      Text("--device", "where device shards run: cpu, or cuda (GPUs; needs a build with CUDA)",
           kRunOnly, "device", [](auto& o) -> auto& { return o.device; }, {"cpu", "cuda"}));
  table.push_back(Text(
      "--gpus",
      "--device cuda: the GPUs this host's shards take in turn, e.g. 0,1 or "
      "0-3 (default: every GPU CUDA sees)",
      kRunOnly, "gpus", [](auto& o) -> auto& { return o.gpus; }));
  table.push_back(Text("--precision",
                       "matrix products: fp32 (float32, as HF's float32 model) or bf16 "
                       "(bfloat16 inputs, float32 accumulation; --device cuda, or a CPU with "
                       "AVX512_BF16)",
                       kShared, "precision", [](auto& o) -> auto& { return o.precision; },
                       {"fp32", "bf16"}));
  table.push_back(Number(
      "--drain-timeout",
      "seconds a SIGTERM/SIGINT/SIGHUP may take to finish the chunks in progress "
      "before the node stops where it is",
      kRunOnly, "drain_timeout", [](auto& o) -> auto& { return o.drain_timeout_seconds; }, 0,
      kMaxFlagSeconds));
  ExtractFlag max_reject_fraction = Number(
      "--max-reject-fraction",
      "exit with status 3 when the host rejected more than this fraction of the documents it "
      "read (or rejected some and wrote none); what was written stays",
      kRunOnly, "max_reject_fraction", [](auto& o) -> auto& { return o.max_reject_fraction; }, 0);
  max_reject_fraction.parse = [](const Texts& texts, ExtractOptions& options) -> Status {
    auto fraction = flag_kinds::ParseNumber<double>(texts.back(), 0);
    if (!fraction) return std::unexpected(fraction.error());
    if (*fraction > 1) return std::unexpected(texts.back() + " is above 1");
    options.max_reject_fraction = *fraction;
    return {};
  };
  table.push_back(std::move(max_reject_fraction));
  table.push_back(Text(
      "--upload-cmd",
      "shell command run for every closed shard and metadata.json, e.g. "
      "'gsutil cp {path} gs://bucket/prefix/{host_dir}/{name}'",
      kRunOnly, "upload_cmd", [](auto& o) -> auto& { return o.upload.command; }));
  table.push_back(Switch(
      "--delete-after-upload", "delete each shard once its upload command succeeded",
      "delete_after_upload", [](auto& o) -> auto& { return o.upload.delete_after_upload; }));
  table.push_back(Number(
      "--upload-retries", "further attempts after a failed upload (doubling waits)", kRunOnly,
      "upload_retries", [](auto& o) -> auto& { return o.upload.retries; }, 0));
  table.push_back(Number(
      "--upload-backoff", "seconds before the first retry; doubles up to 300", kRunOnly,
      "upload_backoff", [](auto& o) -> auto& { return o.upload.backoff_seconds; }, 0,
      kMaxBackoffSeconds));
  table.push_back(Number(
      "--upload-timeout", "seconds one upload attempt may take before it is killed", kRunOnly,
      "upload_timeout", [](auto& o) -> auto& { return o.upload.timeout_seconds; }, 1e-3,
      kMaxFlagSeconds));
  return table;
}

}  // namespace

const std::vector<ExtractFlag>& ExtractFlagTable() {
  static const std::vector<ExtractFlag> table = MakeTable();
  return table;
}

std::string ConfigValueText(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) return value.dump();
  Texts items;
  for (const nlohmann::json& item : value) items.push_back(ConfigValueText(item));
  return Join(items);
}

std::string FlagOfConfigKey(const std::string& key) {
  if (key == "model") return "the model's name in config.json";
  if (key == "bos_token_id" || key == "bos_on_pretokenized") return "--bos";
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    if (flag.config_key == key) return flag.name;
  }
  return "the recorded \"" + key + "\"";
}

nlohmann::json DefaultRecordOfConfigKey(const std::string& key) {
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    if (flag.config_key == key) return flag.record(ExtractOptions{});
  }
  return nullptr;
}

nlohmann::json ExtractOptionsToJson(const ExtractOptions& options, const ExtractPlan& plan) {
  const ExtractOptions resolved = ResolvedOptions(options, plan);
  nlohmann::json config = {{"model", plan.config.name},
                           {"bos_token_id", plan.bos_token_id},
                           {"bos_on_pretokenized", plan.bos_on_pretokenized}};
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    if (flag.role != FlagRole::kRunOnly) config[flag.config_key] = flag.record(resolved);
  }
  if (!plan.saes.empty()) {
    nlohmann::json saes = nlohmann::json::array();
    for (const PlannedSae& sae : plan.saes) saes.push_back(SaeRecordJson(sae.record));
    config[kSaesConfigKey] = saes;
  }
  return config;
}

std::vector<std::string> ExtractOptionsToArgs(const ExtractOptions& options) {
  std::vector<std::string> args;
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    std::vector<std::string> texts = flag.print(options);
    if (texts.empty()) continue;
    args.push_back(flag.name == "--shards" ? "--shards-per-host" : flag.name);
    if (flag.arity != ExtractFlag::Arity::kSwitch)
      args.insert(args.end(), texts.begin(), texts.end());
  }
  return args;
}

}  // namespace actex
