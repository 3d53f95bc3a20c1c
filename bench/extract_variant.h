#ifndef ACTEX_BENCH_EXTRACT_VARIANT_H_
#define ACTEX_BENCH_EXTRACT_VARIANT_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace actex {

// One way of running an extraction: `actex extract` in one process, or `actex
// simulate` with node processes talking tcp over the loopback interface.
struct ExtractVariant {
  std::string name, description;
  bool simulate = false;
  int hosts = 1;            // simulate only
  std::string mesh = "1d";  // simulate only
  // Data-parallel replicas (simulate --mesh 2d: one per host). Each is given as many
  // documents as one process is, so the job's rate compares with one process's.
  int replicas = 1;
  int shards = 1;        // per host
  int blas_threads = 2;  // per shard
  int first_layer = 20, last_layer = 23;
  // Which corpus it reads: 256 pre-tokenized ids per document, or the same English-like
  // text documents as JSONL or as a FineWeb-Edu-shaped snappy Parquet file.
  enum class Corpus { kPretokenized, kTextJsonl, kTextParquet } corpus_kind = Corpus::kPretokenized;
  std::string model_dir, corpus;  // filled in by the driver
  // Runs the shorter corpus once, unmeasured, before the measured runs, so that both of
  // them find the weights in the page cache: for a model of many GB the first run's
  // reads from disk would otherwise fall into the difference of the two.
  bool warm_up = false;
  // A mixture of experts: its FLOPs are those of the experts each token ran, and it is
  // held to a lower share of the sgemm rate (its products are one per expert, over the
  // tokens routed there).
  bool routed = false;
  // The sae variant: one SAE (bench/random_sae.h, 16x) on the last layer's resid_post,
  // whose folder the driver fills in; empty: no --sae.
  bool with_sae = false;
  std::string sae_dir;
};

// The sae variant's SAE: latents per resid_post width, and latents kept per token.
inline constexpr int kSaeExpansion = 16;
inline constexpr int kSaeTopK = 64;

// The site the sae variant's SAE encodes: the last layer's resid_post.
std::string SaeSite(const ExtractVariant& variant);

// Bytes of the *.safetensors files in `model_dir`.
int64_t WeightBytes(const std::string& model_dir);

// shards1, shards2, sim1d, sim2d, early, text, parquet, sae, 7b, 7b-sim1d; an error names the known
// ones.
std::expected<ExtractVariant, std::string> FindVariant(const std::string& name);

// The most replicas a variant has: corpora hold that many times `long_docs`.
inline constexpr int kMostReplicas = 2;

struct VariantContext {
  std::string actex;     // the executable
  std::string work_dir;  // outputs, removed after each run
  std::string log_dir;   // one log per run, kept
  int batch_tokens = 2048;
  int document_tokens = 256;
  std::string precision = "fp32";  // --precision of every run: fp32 or bf16
};

struct VariantResult {
  ExtractVariant variant;
  int layers_computed = 0;
  int64_t tokens = 0;                      // of the longer run
  double tokens_per_second = 0;            // steady state (or the whole run when it ran once):
                                           // the median over the repeats
  std::vector<double> steady_rates;        // each repeat's
  double whole_run_tokens_per_second = 0;  // the longer run, first batch included
  double gflops = 0;                       // forward FLOPs per token × tokens_per_second
  double load_seconds = 0;                 // the slowest node's "ready in" over all runs
  double peak_rss_mb = 0;                  // the largest process (or node) over all runs
  std::vector<double> node_rss_mb;         // simulate: each node's peak, by host id
  int64_t weight_bytes = 0;                // the model's *.safetensors files
  // The 2-thread sgemm figure next to this variant: the mean of the measurements taken
  // just before and just after it, so a change of load on a shared machine hits both.
  double sgemm_gflops = 0;
  // The float32 FMA peak of the ISA the kernels use (fma_peak.h), measured once per run.
  double peak_gflops = 0;
};

// Runs `variant` on the first `short_docs` and then `long_docs` documents of its
// corpus (times its replicas; the corpus must hold that many), `repeats` times; the steady-state
// rate of a repeat is the difference of tokens over the difference of extraction seconds (so the
// first batch, start-up and shut-down cancel), and the result is the median. With `short_docs` 0
// each repeat runs once and reports that run's rate.
std::expected<VariantResult, std::string> RunVariant(const VariantContext& context,
                                                     const ExtractVariant& variant,
                                                     const ModelConfig& config, int64_t short_docs,
                                                     int64_t long_docs, int repeats);

// The results as a table; each row's GFLOPS is compared with its own sgemm_gflops and
// with the FMA peak.
void PrintResultTable(const std::vector<VariantResult>& results);

}  // namespace actex

#endif  // ACTEX_BENCH_EXTRACT_VARIANT_H_
