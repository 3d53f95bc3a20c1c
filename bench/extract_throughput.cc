// bench_extract_throughput: end-to-end extraction speed of a Qwen2.5-0.5B-shaped model
// against the sgemm figure of the same machine in the same run. Every variant runs as
// child `actex extract` / `actex simulate` processes (see bench/README.md for the
// figures, their definitions and the targets).

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/extract_variant.h"
#include "bench/machine_figures.h"
#include "bench/random_sae.h"
#include "bench/routing_overhead.h"
#include "bench/throughput_setup.h"
#include "bench/throughput_targets.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/gemm.h"

namespace actex {
namespace {

constexpr int kDocumentTokens = 256;

std::string OwnDirectory() {
  char path[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return ".";
  return std::filesystem::path(std::string(path, length)).parent_path().string();
}

std::string LoadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

std::string Today() {
  char text[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M", std::localtime(&now));
  return text;
}

struct Flags {
  std::string actex;
  std::string cache = "/tmp/actex-bench";
  std::vector<std::string> variants = {"shards1", "shards2", "sim1d", "sim2d", "early", "text"};
  int warmup_batches = 1;
  int repeats = 2;
  int measured_batches = 3;
  int batch_tokens = 2048;
  int sgemm_repeats = 5;
  bool with_7b = false;
  int docs_7b = 8;
  std::string precision = "fp32";  // every variant's --precision
  // make-model presets of other families, each extracted like shards1 (its last 4 layers)
  std::vector<std::string> families;
};

int Run(const Flags& flags) {
  const std::filesystem::path cache(flags.cache);
  std::filesystem::create_directories(cache / "logs");
  const std::string tokenizer =
      std::string(ACTEX_SOURCE_DIR) + "/tests/fixtures/tokenizers/bpe-qwen2-style/tokenizer.json";
  const std::string model_dir = (cache / "qwen2.5-0.5b-bf16").string();
  auto config = EnsureRandomModel(flags.actex, "qwen2.5-0.5b", model_dir, tokenizer,
                                  (cache / "logs" / "make-model-0.5b.log").string());
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().c_str());
    return 1;
  }
  const int64_t docs_per_batch = flags.batch_tokens / kDocumentTokens;
  const int64_t short_docs = flags.warmup_batches * docs_per_batch;
  const int64_t long_docs = (flags.warmup_batches + flags.measured_batches) * docs_per_batch;
  const std::string pretokenized = (cache / "corpus_pretokenized.jsonl").string();
  const std::string text = (cache / "corpus_text.jsonl").string();
  const std::string parquet = (cache / "corpus_text.parquet").string();
  if (auto written = WritePretokenizedCorpus(pretokenized, kMostReplicas * long_docs,
                                             kDocumentTokens, config->vocab_size);
      !written) {
    std::fprintf(stderr, "%s\n", written.error().c_str());
    return 1;
  }
  for (auto written : {WriteTextCorpus(text, kMostReplicas * long_docs),
                       WriteTextParquet(parquet, kMostReplicas * long_docs)}) {
    if (!written) {
      std::fprintf(stderr, "%s\n", written.error().c_str());
      return 1;
    }
  }

  const std::string load_before = LoadAverage();
  // The kernels' ISA and gemm backend are what the child processes choose too: they
  // inherit this environment (ACTEX_ISA included).
  const VectorIsa isa = ActiveIsa();
  // The peaks and both libraries are measured before the first variant and after every
  // one; each variant is compared with the mean of its two neighbours, so a change of
  // background load hits both sides of a ratio.
  MachineFigures machine(isa, flags.batch_tokens, config->hidden, config->intermediate,
                         flags.sgemm_repeats);
  machine.Measure();

  VariantContext context;
  context.actex = flags.actex;
  context.work_dir = (cache / "runs").string();
  context.log_dir = (cache / "logs").string();
  context.batch_tokens = flags.batch_tokens;
  context.document_tokens = kDocumentTokens;
  context.precision = flags.precision;
  std::vector<VariantResult> results;
  // Runs one variant on `model_dir` and measures sgemm after it, so its ratio uses the
  // measurements on either side.
  auto run = [&](ExtractVariant variant, const std::string& model_dir, const ModelConfig& config,
                 const std::string& corpus, int64_t short_docs, int64_t long_docs,
                 int repeats) -> bool {
    variant.model_dir = model_dir;
    variant.corpus = corpus;
    std::fprintf(stderr, "variant %s ...\n", variant.name.c_str());
    auto result = RunVariant(context, variant, config, short_docs, long_docs, repeats);
    if (!result) {
      std::fprintf(stderr, "variant %s failed: %s\n", variant.name.c_str(), result.error().c_str());
      return false;
    }
    machine.Measure();
    result->sgemm_gflops = machine.NeighbourSgemm();
    result->peak_gflops = machine.NeighbourPeak();
    results.push_back(*result);
    return true;
  };
  for (const std::string& name : flags.variants) {
    if (name.empty() || name == "none") continue;  // `--variants none --with-7b`: 7B only
    auto variant = FindVariant(name);
    if (!variant) {
      std::fprintf(stderr, "%s\n", variant.error().c_str());
      return 2;
    }
    if (variant->with_sae) {
      // 16x the residual stream, as SAEs of it are commonly trained (896 -> 14336).
      variant->sae_dir = (cache / "sae-16x").string();
      if (auto made = EnsureRandomSae(variant->sae_dir, SaeSite(*variant), config->hidden,
                                      kSaeExpansion * config->hidden);
          !made) {
        std::fprintf(stderr, "%s\n", made.error().c_str());
        return 1;
      }
    }
    const std::string& corpus = variant->corpus_kind == ExtractVariant::Corpus::kTextJsonl ? text
                                : variant->corpus_kind == ExtractVariant::Corpus::kTextParquet
                                    ? parquet
                                    : pretokenized;
    if (!run(*variant, model_dir, *config, corpus, short_docs, long_docs, flags.repeats)) {
      return 1;
    }
  }
  if (flags.with_7b) {
    const std::string model_7b = (cache / "qwen2.5-7b-bf16").string();
    auto config_7b = EnsureRandomModel(flags.actex, "qwen2.5-7b", model_7b, "",
                                       (cache / "logs" / "make-model-7b.log").string());
    if (!config_7b) {
      std::fprintf(stderr, "%s\n", config_7b.error().c_str());
      return 1;
    }
    for (const std::string name : {"7b", "7b-sim1d"}) {
      if (!run(*FindVariant(name), model_7b, *config_7b, pretokenized, 0, flags.docs_7b, 1)) {
        return 1;
      }
    }
  }

  std::vector<std::string> routing_lines;  // one per mixture-of-experts family
  for (const std::string& preset : flags.families) {
    const std::string family_dir = (cache / (preset + "-bf16")).string();
    auto family = EnsureRandomModel(flags.actex, preset, family_dir, "",
                                    (cache / "logs" / ("make-model-" + preset + ".log")).string());
    if (!family) {
      std::fprintf(stderr, "%s\n", family.error().c_str());
      return 1;
    }
    // Ids drawn from the family's own vocabulary, so no document is rejected.
    const std::string corpus = (cache / ("corpus_" + preset + ".jsonl")).string();
    if (auto written =
            WritePretokenizedCorpus(corpus, long_docs, kDocumentTokens, family->vocab_size);
        !written) {
      std::fprintf(stderr, "%s\n", written.error().c_str());
      return 1;
    }
    ExtractVariant variant = *FindVariant("shards1");
    variant.name = preset;
    variant.description = preset + ", 1 shard x 2 threads";
    variant.first_layer = family->layers - 4;
    variant.last_layer = family->layers - 1;
    // 7B-sized families run over --docs-7b documents and twice as many, once each, after
    // a warm-up run: the difference is then a steady batch, with no disk reads of 14 GB
    // of weights in either run.
    const bool large = WeightBytes(family_dir) > (int64_t{8} << 30);
    variant.warm_up = large;
    variant.routed = family->moe.experts > 0;
    // A family is held to the sgemm of its own MLP shapes, measured on either side of it:
    // GPT-2's [2048 x 768] products cannot run as near the peak as Qwen2.5-0.5B's. A
    // mixture of experts's own shapes are an expert's, over a whole batch of rows.
    const int64_t mlp_columns =
        variant.routed ? family->moe.expert_intermediate : family->intermediate;
    auto own_sgemm = [&] {
      return MeasureSgemm(machine.backend(), flags.batch_tokens, family->hidden, mlp_columns, 2,
                          flags.sgemm_repeats)
          .combined_gflops;
    };
    const double own_before = own_sgemm();
    if (!run(variant, family_dir, *family, corpus, large ? flags.docs_7b : short_docs,
             large ? 2 * flags.docs_7b : long_docs, large ? 1 : flags.repeats)) {
      return 1;
    }
    results.back().sgemm_gflops = (own_before + own_sgemm()) / 2;
    if (variant.routed) {
      auto overhead =
          MeasureRoutingOverhead(family_dir, flags.batch_tokens, /*threads=*/2, /*repeats=*/5);
      if (!overhead) {
        std::fprintf(stderr, "%s\n", overhead.error().c_str());
        return 1;
      }
      routing_lines.push_back(RoutingOverheadLine(preset, flags.batch_tokens, *overhead));
    }
  }

  std::printf("actex extraction throughput, %s; load average before %s, after %s\n",
              Today().c_str(), load_before.c_str(), LoadAverage().c_str());
  std::printf(
      "model %s: %lld-token documents, %d-token batches, steady state over %d batches "
      "after %d, median of %d repeat(s)\n",
      model_dir.c_str(), static_cast<long long>(kDocumentTokens), flags.batch_tokens,
      flags.measured_batches, flags.warmup_batches, flags.repeats);
  std::printf("CPU %s; kernels %s (widest on this CPU: %s), products by %s; the runs' "
              "--precision %s%s\n",
              CpuModelName().c_str(), IsaName(isa), IsaName(DetectedIsa()),
              GemmBackendName(machine.backend()), flags.precision.c_str(),
              flags.precision == "bf16" ? " (bf16 products by oneDNN; the sgemm columns stay fp32)"
                                        : "");
  machine.Print();
  std::printf("\n");
  PrintResultTable(results);
  for (const std::string& line : routing_lines) std::printf("%s\n", line.c_str());

  if (std::ranges::any_of(results, [](const VariantResult& r) { return r.variant.with_sae; })) {
    // Per token of the SAE's site: the dense row in bfloat16 against K ids (I32), K
    // values (bfloat16) and a count (I32).
    const int64_t dense = 2 * config->hidden, latents = kSaeTopK * (4 + 2) + 4;
    std::printf("\nbytes per token at %s: dense bfloat16 %lld, latents (K %d) %lld (%.1fx less)\n",
                SaeSite(*FindVariant("sae")).c_str(), static_cast<long long>(dense), kSaeTopK,
                static_cast<long long>(latents), static_cast<double>(dense) / latents);
  }
  PrintTargets(ThroughputTargets(results, flags.families, isa));
  std::printf("\nlogs: %s\n", context.log_dir.c_str());
  return 0;
}

}  // namespace
}  // namespace actex

int main(int argc, char** argv) {
  actex::Flags flags;
  flags.actex = actex::OwnDirectory() + "/../actors/actex";
  CLI::App app{"End-to-end extraction throughput of a Qwen2.5-0.5B-shaped model (bench/README.md)"};
  app.add_option("--actex", flags.actex, "the actex executable")->capture_default_str();
  app.add_option("--cache", flags.cache, "folder for models, corpora, logs and outputs (reused)")
      ->capture_default_str();
  app.add_option("--variants", flags.variants,
                 "any of shards1, shards2, sim1d, sim2d, early, text, parquet, sae; none")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--warmup-batches", flags.warmup_batches,
                 "batches of the shorter run, whose time is subtracted")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batches", flags.measured_batches,
                 "batches the longer run adds: the steady-state measurement")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--repeats", flags.repeats,
                 "pairs of runs per variant; the table shows the median steady-state rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batch-tokens", flags.batch_tokens, "tokens per batch (a multiple of 256)")
      ->check(CLI::Range(256, 1 << 20))
      ->capture_default_str();
  app.add_option("--sgemm-repeats", flags.sgemm_repeats, "timed sgemm calls per shape")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--with-7b", flags.with_7b,
               "also write a Qwen2.5-7B-shaped model (about 15 GB) and extract from it, in one "
               "process and in a 2-host 1d simulation");
  app.add_option(
         "--families", flags.families,
         "make-model presets of other families to extract from like shards1 (their "
         "last 4 layers): gpt2, llama-3.2-1b, gemma-2-2b, qwen3-0.6b, mistral-7b, olmoe-1b-7b")
      ->delimiter(',');
  app.add_option("--docs-7b", flags.docs_7b, "documents of the 7B runs (and 7B-sized families)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--precision", flags.precision,
                 "--precision of every run: fp32, or bf16 (bfloat16 products, where the CPU has "
                 "AVX512_BF16)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (flags.batch_tokens % 256 != 0) {
    std::fprintf(stderr, "--batch-tokens must be a multiple of 256 (whole documents)\n");
    return 2;
  }
  return actex::Run(flags);
}
