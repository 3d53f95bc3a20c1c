#include "actors/extract_options.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <thread>
#include <type_traits>

#include "model/tokenizer/post_processor.h"

namespace actex {
namespace {

std::expected<int, std::string> ParseInt(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::unexpected("\"" + std::string(text) + "\" is not a whole number");
  }
  return value;
}

std::expected<OutputDtype, std::string> ParseDtype(const std::string& name) {
  if (name == "float32") return OutputDtype::kF32;
  if (name == "bfloat16") return OutputDtype::kBF16;
  if (name == "float16") return OutputDtype::kF16;
  return std::unexpected("--dtype " + name + ": expected bfloat16, float16 or float32");
}

}  // namespace

std::expected<std::vector<int>, std::string> ParseLayerList(const std::string& text) {
  std::vector<int> layers;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string_view item(text.data() + start, comma - start);
    if (item.empty()) return std::unexpected("--layers \"" + text + "\": empty entry");
    size_t dash = item.find('-', 1);
    if (dash == std::string_view::npos) {
      auto layer = ParseInt(item);
      if (!layer) return std::unexpected("--layers: " + layer.error());
      layers.push_back(*layer);
    } else {
      auto first = ParseInt(item.substr(0, dash));
      auto last = ParseInt(item.substr(dash + 1));
      if (!first || !last || *last < *first) {
        return std::unexpected("--layers: \"" + std::string(item) + "\" is not a range like 20-23");
      }
      for (int layer = *first; layer <= *last; ++layer) layers.push_back(layer);
    }
    start = comma + 1;
  }
  return layers;
}

std::expected<ExtractPlan, std::string> PlanExtraction(const ExtractOptions& options,
                                                       const ModelConfig& config) {
  ExtractPlan plan;
  plan.config = config;
  for (int layer : options.layers) {
    if (layer < 0 || layer >= config.layers) {
      return std::unexpected("--layers " + std::to_string(layer) + ": the model has " +
                             std::to_string(config.layers) + " layers (0.." +
                             std::to_string(config.layers - 1) + ")");
    }
  }
  auto sites = ParseSites(options.sites, options.layers, config.layers);
  if (!sites) return std::unexpected("--sites: " + sites.error());
  if (sites->empty()) return std::unexpected("--sites: no site to capture");
  plan.sites = std::move(*sites);

  if (options.shards < 1 || options.shards > config.heads) {
    return std::unexpected("--shards " + std::to_string(options.shards) +
                           ": must be between 1 and the model's " + std::to_string(config.heads) +
                           " attention heads");
  }
  plan.dtype_name = options.dtype.empty() ? config.torch_dtype : options.dtype;
  auto dtype = ParseDtype(plan.dtype_name);
  if (!dtype) return std::unexpected(dtype.error());
  plan.dtype = *dtype;

  if (options.max_seq_len < 1) return std::unexpected("--max-seq-len must be at least 1");
  if (options.batch_tokens < 1) return std::unexpected("--batch-tokens must be at least 1");
  if (options.shard_bytes < 1) return std::unexpected("--shard-size must be positive");
  if (options.data.empty()) return std::unexpected("--data: give at least one corpus file");
  if (options.out_dir.empty()) return std::unexpected("--out: give an output folder");
  if (options.text_field.empty()) return std::unexpected("--text-field must not be empty");
  if (options.max_docs == 0 || options.max_docs < -1) {
    return std::unexpected("--max-docs must be positive");
  }
  if (!options.upload.command.empty()) {
    if (auto checked = CheckUploadTemplate(options.upload.command); !checked) {
      return std::unexpected(checked.error());
    }
  } else if (options.upload.delete_after_upload) {
    return std::unexpected(
        "--delete-after-upload needs --upload-cmd: without an upload the "
        "shards would only be deleted");
  }
  if (options.upload.retries < 0) return std::unexpected("--upload-retries must be >= 0");
  if (!(options.upload.backoff_seconds >= 0)) {
    return std::unexpected("--upload-backoff must be >= 0 seconds");
  }
  if (!(options.upload.timeout_seconds > 0)) {
    return std::unexpected("--upload-timeout must be > 0 seconds");
  }
  if (options.bos == "yes") {
    if (!config.bos_token_id) {
      return std::unexpected("--bos yes: the model's config.json has no bos_token_id");
    }
    plan.bos_token_id = *config.bos_token_id;
    plan.bos_on_pretokenized = true;
  } else if (options.bos == "auto") {
    auto bos = PostProcessorBos(options.model_dir);
    if (!bos) return std::unexpected("--bos auto: " + bos.error());
    plan.bos_token_id = bos->value_or(-1);
  } else if (options.bos != "no") {
    return std::unexpected("--bos " + options.bos + ": use yes, no or auto");
  }
  int cores = std::max(1u, std::thread::hardware_concurrency());
  plan.blas_threads =
      options.blas_threads > 0 ? options.blas_threads : std::max(1, cores / options.shards);
  return plan;
}

nlohmann::json ExtractOptionsToJson(const ExtractOptions& options, const ExtractPlan& plan) {
  nlohmann::json sites = nlohmann::json::array();
  for (const Site& site : plan.sites) sites.push_back(site.HookName());
  return {
      {"model", plan.config.name},
      {"model_dir", options.model_dir},
      {"data", options.data},
      {"layers", options.layers},
      {"sites", sites},
      {"shards", options.shards},
      {"dtype", plan.dtype_name},
      {"max_seq_len", options.max_seq_len},
      {"overflow", options.overflow == Overflow::kSplit ? "split" : "truncate"},
      {"batch_tokens", options.batch_tokens},
      {"shard_bytes", options.shard_bytes},
      {"compress", options.gzip ? "gzip" : "none"},
      {"text_field", options.text_field},
      {"bos", options.bos},
      {"bos_token_id", plan.bos_token_id},
      {"bos_on_pretokenized", plan.bos_on_pretokenized},
      {"max_docs", options.max_docs},
  };
}

std::vector<std::string> ExtractOptionsToArgs(const ExtractOptions& options) {
  auto join = [](const auto& items) {
    std::string joined;
    for (const auto& item : items) {
      if (!joined.empty()) joined += ',';
      if constexpr (std::is_same_v<std::decay_t<decltype(item)>, std::string>) {
        joined += item;
      } else {
        joined += std::to_string(item);
      }
    }
    return joined;
  };
  std::vector<std::string> args = {"--model",
                                   options.model_dir,
                                   "--out",
                                   options.out_dir,
                                   "--layers",
                                   join(options.layers),
                                   "--sites",
                                   join(options.sites),
                                   "--shards-per-host",
                                   std::to_string(options.shards),
                                   "--max-seq-len",
                                   std::to_string(options.max_seq_len),
                                   "--overflow",
                                   options.overflow == Overflow::kSplit ? "split" : "truncate",
                                   "--batch-tokens",
                                   std::to_string(options.batch_tokens),
                                   "--shard-size",
                                   std::to_string(options.shard_bytes),
                                   "--compress",
                                   options.gzip ? "gzip" : "none",
                                   "--text-field",
                                   options.text_field};
  args.push_back("--data");
  for (const std::string& input : options.data) args.push_back(input);
  if (!options.dtype.empty()) args.insert(args.end(), {"--dtype", options.dtype});
  args.insert(args.end(), {"--bos", options.bos});
  if (options.overwrite) args.push_back("--overwrite");
  if (options.max_docs > 0)
    args.insert(args.end(), {"--max-docs", std::to_string(options.max_docs)});
  if (options.blas_threads > 0) {
    args.insert(args.end(), {"--blas-threads", std::to_string(options.blas_threads)});
  }
  if (!options.upload.command.empty()) {
    args.insert(args.end(), {"--upload-cmd", options.upload.command, "--upload-retries",
                             std::to_string(options.upload.retries), "--upload-backoff",
                             std::to_string(options.upload.backoff_seconds), "--upload-timeout",
                             std::to_string(options.upload.timeout_seconds)});
    if (options.upload.delete_after_upload) args.push_back("--delete-after-upload");
  }
  return args;
}

}  // namespace actex
