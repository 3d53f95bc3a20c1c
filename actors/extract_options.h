#ifndef ACTEX_ACTORS_EXTRACT_OPTIONS_H_
#define ACTEX_ACTORS_EXTRACT_OPTIONS_H_

#include <algorithm>
#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/device_plan.h"
#include "actors/sae_plan.h"
#include "actors/upload_command.h"
#include "model/model_config.h"
#include "model/sites.h"
#include "storage/corpus_reader.h"
#include "storage/shard_writer.h"

namespace actex {

enum class Overflow { kTruncate, kSplit };

// --max-seq-len when not given, unless the model's positions end sooner.
inline constexpr int kDefaultMaxSeqLen = 2048;

// Everything `actex extract` is told on its command line; one host's node runs from
// this struct alone.
struct ExtractOptions {
  std::string model_dir;
  std::vector<std::string> data;  // files or globs, in order
  std::string out_dir;
  std::vector<int> layers;
  // --layers as typed ("0-5"), quoted back in messages about a layer of it; empty
  // when the options were built in code (messages then list `layers`).
  std::string layers_text;
  std::vector<std::string> sites = {"resid_post"};
  int shards = 1;
  std::string dtype;  // bfloat16 | float16 | float32; empty: the model's torch_dtype
  // 0: not given, so kDefaultMaxSeqLen capped at the model's PositionLimit (see
  // ExtractPlan::max_seq_len); a value given is never changed.
  int max_seq_len = 0;
  Overflow overflow = Overflow::kTruncate;
  int64_t batch_tokens = 8192;
  // Consecutive documents that travel together (actors/mesh_plan.h): batches never
  // cross a chunk and data-parallel replicas take whole chunks.
  int64_t chunk_docs = 64;
  int64_t shard_bytes = int64_t{1} << 30;
  bool gzip = false;
  std::string text_field = "text";
  // yes: the model's bos_token_id before every document; no: none; auto: as HF's
  // tokenizer(text) does (the tokenizer.json post-processor's leading special token) for
  // text documents, pre-tokenized ones taken as given.
  std::string bos = "auto";
  int64_t max_docs = -1;
  int blas_threads = 0;  // per device shard; 0: the machine's cores divided by shards
  // Threads tokenizing each local replica's text documents, each with its own tokenizer
  // (a GPU shard consumes text faster than one thread tokenizes it: bench/README.md);
  // 0: DefaultTokenizerThreads.
  int tokenizer_threads = 0;
  // Where device shards run (actors/device_plan.h): "cpu" or "cuda"; the GPUs as given
  // ("0,1"; empty: all visible); how products are computed ("fp32" or "bf16").
  std::string device = "cpu";
  std::string gpus;
  std::string precision = "fp32";
  // --sae SITE=DIR entries as given: each SAE encodes its site's activations into latents
  // (storage/latent_sites.h); --sae-top-k latents kept per token (a TopK SAE keeps its
  // own k); --sae-examples strongest examples the writer keeps per latent.
  std::vector<std::string> saes;
  int64_t sae_top_k = 64;
  int64_t sae_examples = 32;
  bool show_progress = false;
  // Replace an earlier run's output instead of resuming it.
  bool overwrite = false;
  UploadOptions upload;  // --upload-cmd and friends; not compared on resume
  // After SIGTERM/SIGINT, how long the pipeline may take to finish the chunks in
  // progress before it is stopped where it is (the chunks that ended still listed).
  double drain_timeout_seconds = 20;
  // A completed run whose host folder rejected more than this fraction of the documents
  // it handled (or wrote none and rejected some) exits with kExitTooManyRejected.
  double max_reject_fraction = 0.5;
  // For tests only: the writer's disk "fills up" after this many bytes (-1: never).
  int64_t fail_after_bytes = -1;
};

// What the options resolve to once the model's config is known.
struct ExtractPlan {
  ModelConfig config;
  // Every site the forward pass captures, in its order: --sites, and each --sae's site.
  std::vector<Site> sites;
  // The --sae sites --sites leaves out: captured for their SAE and their statistics,
  // no tensor written (StoredSite::statistics_only).
  std::vector<Site> statistics_only_sites;
  // Each --sae, its site resolved; the SAEs themselves are loaded by PrepareNode.
  std::vector<PlannedSae> saes;
  OutputDtype dtype = OutputDtype::kF32;
  std::string dtype_name;  // as written in metadata: "bfloat16", "float16", "float32"
  int blas_threads = 1;
  int tokenizer_threads = 1;  // per local replica
  int spill_threads = 1;      // per local replica's writer (ShardWriterOptions)
  DevicePlan devices;
  int32_t bos_token_id = -1;         // >= 0: put before documents (see --bos)
  bool bos_on_pretokenized = false;  // --bos yes: before pre-tokenized documents too
  // The longest sequence: --max-seq-len as given, or when not given the default
  // capped at the model's position limit (GPT-2's n_positions); recorded in metadata.
  int max_seq_len = kDefaultMaxSeqLen;
  // Non-empty when the default was capped: a line for the log saying so.
  std::string max_seq_len_note;

  bool IsStatisticsOnly(const Site& site) const {
    return std::find(statistics_only_sites.begin(), statistics_only_sites.end(), site) !=
           statistics_only_sites.end();
  }
};

// How the corpus is read: its inputs, text field and document limit.
CorpusOptions CorpusOptionsOf(const ExtractOptions& options);

// Checks every option against the model before any work starts. Errors name the
// flag as given and the allowed values ("--layers 20-30: layer 24 is not in the model,
// which has 24 layers (0..23)").
std::expected<ExtractPlan, std::string> PlanExtraction(const ExtractOptions& options,
                                                       const ModelConfig& config);

// Threads per device shard when --blas-threads is not given: the machine's cores
// shared by the shards this host runs, at least one.
int DefaultBlasThreads(int shards_on_this_host);
// Tokenizer threads per replica when --tokenizer-threads is not given. On the CPU one:
// the forward wants every core and runs far below one thread's tokenizing rate. With
// --device cuda the cores are free and a GPU forward outruns one thread on long or
// slow-to-tokenize documents: a quarter of the cores per local replica, 1 to 4.
int DefaultTokenizerThreads(const DevicePlan& devices, int replicas_on_this_host);
// Threads a replica's writer rounds and spills its sites on (no more than it stores).
// On the CPU one: the forward is thousands of times slower than one thread's writing.
// With --device cuda a shard of several sites would hold a GPU to one core's rate
// (~0.2M tokens/s for four 896-wide sites): half the cores per local replica, 1 to 8.
int DefaultSpillThreads(const DevicePlan& devices, int replicas_on_this_host);

// Parses "20,21,22,23" or "20-23" or a mix ("0,4-6") (--layers, --gpus); an error
// names the entry at fault, and its caller the flag.
std::expected<std::vector<int>, std::string> ParseIndexList(const std::string& text);

// The options with what the plan resolved put in: the dtype the model's torch_dtype
// gave, the sites as hook names (those --sites asked for), each --sae's site as a hook
// name, the effective --max-seq-len. What is
// recorded and compared is this.
ExtractOptions ResolvedOptions(const ExtractOptions& options, const ExtractPlan& plan);

}  // namespace actex

#endif  // ACTEX_ACTORS_EXTRACT_OPTIONS_H_
