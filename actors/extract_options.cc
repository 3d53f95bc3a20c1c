#include "actors/extract_options.h"

#include <algorithm>
#include <cstdint>
#include <charconv>
#include <set>
#include <thread>

#include "model/tokenizer/post_processor.h"

namespace actex {
namespace {

// The machine's hardware threads, at least one (0 where it cannot tell).
int Cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

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

// A document's tokens must stay inside the model's positions: with learned
// positions (GPT-2) a sequence past n_positions has no embedding, so every sequence
// is cut to fit before any work. The default is capped and the log says so; a value
// the user gave that does not fit is refused, as quietly computing something other
// than what was asked for would be wrong (--overflow split keeps such documents
// whole in windows that fit).
std::expected<void, std::string> PlanMaxSeqLen(int given, const ModelConfig& config,
                                               ExtractPlan* plan) {
  const int limit = config.PositionLimit();
  if (given == 0) {
    plan->max_seq_len = std::min(kDefaultMaxSeqLen, limit);
    if (plan->max_seq_len < kDefaultMaxSeqLen) {
      plan->max_seq_len_note = "--max-seq-len " + std::to_string(plan->max_seq_len) + ": " +
                               config.name + " has " + config.PositionLimitSource() +
                               ", fewer than the default " + std::to_string(kDefaultMaxSeqLen) +
                               "; longer documents are cut per --overflow";
    }
    return {};
  }
  if (given < 1) return std::unexpected(std::string("--max-seq-len must be at least 1"));
  if (given > limit) {
    return std::unexpected("--max-seq-len " + std::to_string(given) + ": " + config.name + " has " +
                           config.PositionLimitSource() + "; give at most " +
                           std::to_string(limit) +
                           " (--overflow split keeps longer documents whole in windows)");
  }
  plan->max_seq_len = given;
  return {};
}

// Each SAE's site is captured even when --sites leaves it out: it is added to the
// captured sites (in forward order) and marked statistics-only.
std::expected<void, std::string> AddSaeSites(const ExtractOptions& options,
                                             const ModelConfig& config, ExtractPlan* plan) {
  std::vector<std::string> entries = options.sites;
  for (const PlannedSae& sae : plan->saes) {
    if (std::find(plan->sites.begin(), plan->sites.end(), sae.site) != plan->sites.end()) continue;
    plan->statistics_only_sites.push_back(sae.site);
    entries.push_back(sae.site.HookName());
  }
  if (plan->statistics_only_sites.empty()) return {};
  auto sites = ParseSites(entries, options.layers, config);
  if (!sites) return std::unexpected("--sae: " + sites.error());
  plan->sites = std::move(*sites);
  return {};
}

}  // namespace

std::expected<std::vector<int>, std::string> ParseIndexList(const std::string& text) {
  constexpr int64_t kMaxIndices = 1 << 16;  // far past any model's layers or host's GPUs
  std::vector<int> indices;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string_view item(text.data() + start, comma - start);
    if (item.empty()) return std::unexpected("\"" + text + "\" has an empty entry");
    size_t dash = item.find('-', 1);
    if (dash == std::string_view::npos) {
      auto index = ParseInt(item);
      if (!index) return std::unexpected(index.error());
      indices.push_back(*index);
    } else {
      auto first = ParseInt(item.substr(0, dash));
      auto last = ParseInt(item.substr(dash + 1));
      if (!first || !last || *last < *first) {
        return std::unexpected("\"" + std::string(item) + "\" is not a range like 20-23");
      }
      // A typo such as 0-2000000000 must be refused, not made into a vector of 8 GB.
      if (int64_t{*last} - *first + 1 + static_cast<int64_t>(indices.size()) > kMaxIndices) {
        return std::unexpected("\"" + text + "\" lists more than " + std::to_string(kMaxIndices) +
                               " indices");
      }
      for (int index = *first; index <= *last; ++index) indices.push_back(index);
    }
    start = comma + 1;
  }
  return indices;
}

std::expected<ExtractPlan, std::string> PlanExtraction(const ExtractOptions& options,
                                                       const ModelConfig& config) {
  ExtractPlan plan;
  plan.config = config;
  for (int layer : options.layers) {
    if (layer < 0 || layer >= config.layers) {
      // The flag as the user typed it: a range's out-of-model layer alone ("--layers
      // 2" for "0-5") would read as if they had typed that.
      std::string given = options.layers_text;
      if (given.empty()) {
        for (int each : options.layers) given += (given.empty() ? "" : ",") + std::to_string(each);
      }
      return std::unexpected("--layers " + given + ": layer " + std::to_string(layer) +
                             " is not in the model, which has " + std::to_string(config.layers) +
                             " layers (0.." + std::to_string(config.layers - 1) + ")");
    }
  }
  auto sites = ParseSites(options.sites, options.layers, config);
  if (!sites) return std::unexpected("--sites: " + sites.error());
  if (sites->empty()) return std::unexpected("--sites: no site to capture");
  plan.sites = std::move(*sites);
  auto saes = PlanSaes(options.saes, options.layers, config);
  if (!saes) return std::unexpected(saes.error());
  plan.saes = std::move(*saes);
  if (auto added = AddSaeSites(options, config, &plan); !added) {
    return std::unexpected(added.error());
  }
  if (options.sae_top_k < 1) return std::unexpected("--sae-top-k must be at least 1");

  if (options.shards < 1 || options.shards > config.heads) {
    return std::unexpected("--shards " + std::to_string(options.shards) +
                           ": must be between 1 and the model's " + std::to_string(config.heads) +
                           " attention heads");
  }
  plan.dtype_name = options.dtype.empty() ? config.torch_dtype : options.dtype;
  auto dtype = ParseDtype(plan.dtype_name);
  if (!dtype) return std::unexpected(dtype.error());
  plan.dtype = *dtype;

  if (auto length = PlanMaxSeqLen(options.max_seq_len, config, &plan); !length) {
    return std::unexpected(length.error());
  }
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
  plan.blas_threads =
      options.blas_threads > 0 ? options.blas_threads : DefaultBlasThreads(options.shards);
  auto devices = PlanDevices(options.device, options.gpus, options.precision);
  if (!devices) return std::unexpected(devices.error());
  plan.devices = std::move(*devices);
  plan.tokenizer_threads = options.tokenizer_threads > 0 ? options.tokenizer_threads
                                                         : DefaultTokenizerThreads(plan.devices, 1);
  plan.spill_threads = DefaultSpillThreads(plan.devices, 1);
  return plan;
}

int DefaultBlasThreads(int shards_on_this_host) {
  return std::max(1, Cores() / std::max(1, shards_on_this_host));
}

int DefaultTokenizerThreads(const DevicePlan& devices, int replicas_on_this_host) {
  if (!devices.cuda) return 1;
  return std::clamp(Cores() / (4 * std::max(1, replicas_on_this_host)), 1, 4);
}

int DefaultSpillThreads(const DevicePlan& devices, int replicas_on_this_host) {
  if (!devices.cuda) return 1;
  return std::clamp(Cores() / (2 * std::max(1, replicas_on_this_host)), 1, 8);
}

ExtractOptions ResolvedOptions(const ExtractOptions& options, const ExtractPlan& plan) {
  ExtractOptions resolved = options;
  resolved.dtype = plan.dtype_name;
  resolved.max_seq_len = plan.max_seq_len;
  resolved.sites.clear();
  for (const Site& site : plan.sites) {
    if (!plan.IsStatisticsOnly(site)) resolved.sites.push_back(site.HookName());
  }
  resolved.saes.clear();
  for (const PlannedSae& sae : plan.saes)
    resolved.saes.push_back(sae.site.HookName() + "=" + sae.dir);
  return resolved;
}

CorpusOptions CorpusOptionsOf(const ExtractOptions& options) {
  return CorpusOptions{options.data, options.text_field, options.max_docs};
}

}  // namespace actex
