#include "bench/extract_variant.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "bench/child_process.h"
#include "bench/throughput_setup.h"

namespace actex {
namespace {

// What one run printed: every host's "wrote ..." line, "ready in" and peak RSS.
struct RunFigures {
  int64_t tokens = 0;
  double extract_seconds = 0;  // the slowest writing host's
  double load_seconds = 0;
  double peak_rss_mb = 0;
  std::vector<double> node_rss_mb;
};

std::expected<RunFigures, std::string> ParseRun(const ChildResult& child, bool simulate) {
  RunFigures figures;
  // actors/cli: "wrote D documents (T tokens) in S shard(s) to DIR: X tokens/s", where X is
  // T over the seconds from the first document to the end.
  static const std::regex kWrote(R"(wrote \d+ documents \((\d+) tokens\) in \d+ shard\(s\) to )"
                                 R"(\S+: ([0-9.]+) tokens/s)");
  static const std::regex kReady(R"(ready in ([0-9.]+) s)");
  // actors/local_cluster.cc: "host H exited with code C; peak RSS M MB".
  static const std::regex kNodeRss(R"(host (\d+) exited with code \d+; peak RSS ([0-9.]+) MB)");
  const std::string& text = child.output;
  for (std::sregex_iterator it(text.begin(), text.end(), kWrote), end; it != end; ++it) {
    const int64_t tokens = std::stoll((*it)[1]);
    const double rate = std::stod((*it)[2]);
    figures.tokens += tokens;
    if (rate > 0) figures.extract_seconds = std::max(figures.extract_seconds, tokens / rate);
  }
  for (std::sregex_iterator it(text.begin(), text.end(), kReady), end; it != end; ++it) {
    figures.load_seconds = std::max(figures.load_seconds, std::stod((*it)[1]));
  }
  if (simulate) {
    for (std::sregex_iterator it(text.begin(), text.end(), kNodeRss), end; it != end; ++it) {
      const size_t host = std::stoul((*it)[1]);
      if (figures.node_rss_mb.size() <= host) figures.node_rss_mb.resize(host + 1);
      figures.node_rss_mb[host] = std::stod((*it)[2]);
    }
    for (double rss : figures.node_rss_mb) figures.peak_rss_mb = std::max(figures.peak_rss_mb, rss);
  } else {
    figures.peak_rss_mb = child.peak_rss_bytes / 1048576.0;
  }
  if (figures.tokens == 0 || figures.extract_seconds <= 0) {
    return std::unexpected("no \"wrote ... tokens/s\" line in the output");
  }
  return figures;
}

std::vector<std::string> CommandLine(const VariantContext& context, const ExtractVariant& variant,
                                     int64_t docs, const std::string& out_dir) {
  std::vector<std::string> args = {context.actex};
  if (variant.simulate) {
    args.insert(args.end(), {"simulate", "--hosts", std::to_string(variant.hosts), "--mesh",
                             variant.mesh, "--shards-per-host", std::to_string(variant.shards)});
  } else {
    args.insert(args.end(), {"extract", "--shards", std::to_string(variant.shards)});
  }
  args.insert(args.end(),
              {"--model", variant.model_dir, "--data", variant.corpus, "--out", out_dir, "--layers",
               std::to_string(variant.first_layer) + "-" + std::to_string(variant.last_layer),
               "--sites", "resid_post", "--blas-threads", std::to_string(variant.blas_threads),
               "--batch-tokens", std::to_string(context.batch_tokens), "--max-seq-len",
               std::to_string(context.document_tokens), "--max-docs", std::to_string(docs),
               // A chunk of one batch: replicas lease them one batch at a time.
               "--chunk-docs", std::to_string(context.batch_tokens / context.document_tokens),
               "--precision", context.precision});
  if (!variant.sae_dir.empty()) {
    args.insert(args.end(), {"--sae", SaeSite(variant) + "=" + variant.sae_dir, "--sae-top-k",
                             std::to_string(kSaeTopK)});
  }
  return args;
}

std::expected<RunFigures, std::string> RunOnce(const VariantContext& context,
                                               const ExtractVariant& variant, int64_t docs) {
  const std::string tag = variant.name + "-" + std::to_string(docs) + "docs";
  const std::string out_dir = (std::filesystem::path(context.work_dir) / tag).string();
  const std::string log = (std::filesystem::path(context.log_dir) / (tag + ".log")).string();
  std::filesystem::remove_all(out_dir);
  std::filesystem::create_directories(context.work_dir);
  const std::vector<std::string> args = CommandLine(context, variant, docs, out_dir);
  std::fprintf(stderr, "  %s\n", JoinArgs(args).c_str());
  auto child = RunChild(args, log);
  std::filesystem::remove_all(out_dir);
  if (!child) return std::unexpected(child.error());
  if (child->exit_code != 0) {
    return std::unexpected("exit code " + std::to_string(child->exit_code) + "; see " + log);
  }
  auto figures = ParseRun(*child, variant.simulate);
  if (!figures) return std::unexpected(figures.error() + "; see " + log);
  const int64_t expected = docs * context.document_tokens;
  if (figures->tokens != expected) {
    return std::unexpected("wrote " + std::to_string(figures->tokens) + " tokens, expected " +
                           std::to_string(expected) + "; see " + log);
  }
  std::fprintf(stderr, "  %lld tokens in %.2f s (load %.2f s, peak RSS %.0f MB)\n",
               static_cast<long long>(figures->tokens), figures->extract_seconds,
               figures->load_seconds, figures->peak_rss_mb);
  return figures;
}

}  // namespace

std::string SaeSite(const ExtractVariant& variant) {
  return "blocks." + std::to_string(variant.last_layer) + ".hook_resid_post";
}

int64_t WeightBytes(const std::string& model_dir) {
  int64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(model_dir)) {
    if (entry.path().extension() == ".safetensors") bytes += entry.file_size();
  }
  return bytes;
}

std::expected<ExtractVariant, std::string> FindVariant(const std::string& name) {
  ExtractVariant v;
  v.name = name;
  if (name == "shards1") {
    v.description = "extract, 1 shard x 2 threads";
  } else if (name == "shards2") {
    v.description = "extract, 2 shards x 1 thread";
    v.shards = 2;
    v.blas_threads = 1;
  } else if (name == "sim1d" || name == "sim2d" || name == "7b-sim1d") {
    v.simulate = true;
    v.hosts = 2;
    v.mesh = name == "sim2d" ? "2d" : "1d";
    v.replicas = name == "sim2d" ? v.hosts : 1;
    v.blas_threads = 1;
    v.description = "simulate 2 hosts x 1 thread, mesh " + v.mesh;
  } else if (name == "early") {
    v.description = "extract, 1 x 2, layers 0-3";
    v.first_layer = 0;
    v.last_layer = 3;
  } else if (name == "text") {
    v.description = "extract, 1 x 2, text corpus";
    v.corpus_kind = ExtractVariant::Corpus::kTextJsonl;
  } else if (name == "parquet") {
    v.description = "extract, 1 x 2, text corpus as Parquet";
    v.corpus_kind = ExtractVariant::Corpus::kTextParquet;
  } else if (name == "sae") {
    v.description = "extract, 1 x 2, 16x SAE";
    v.with_sae = true;
  } else if (name == "7b") {
    v.description = "extract, 1 shard x 2 threads";
  } else {
    return std::unexpected("unknown variant " + name +
                           "; known: shards1, shards2, sim1d, sim2d, early, text, parquet, sae");
  }
  if (name.starts_with("7b")) v.description = "7B " + v.description;
  return v;
}

std::expected<VariantResult, std::string> RunVariant(const VariantContext& context,
                                                     const ExtractVariant& variant,
                                                     const ModelConfig& config, int64_t short_docs,
                                                     int64_t long_docs, int repeats) {
  if (variant.replicas > 1 && short_docs > 0) {
    // A replica asks for a second chunk before its first is through, so in a shorter
    // run of one chunk per replica one of them might take two and leave another none.
    const int64_t docs_per_batch = context.batch_tokens / context.document_tokens;
    short_docs = std::max(short_docs, 2 * docs_per_batch);
    long_docs = std::max(long_docs, short_docs + docs_per_batch);
  }
  short_docs *= variant.replicas;
  long_docs *= variant.replicas;
  VariantResult result;
  result.variant = variant;
  result.layers_computed = variant.last_layer + 1;
  result.weight_bytes = WeightBytes(variant.model_dir);
  std::vector<RunFigures> runs;
  std::vector<double> whole_rates;
  if (variant.warm_up) {
    auto warmed = RunOnce(context, variant, short_docs > 0 ? short_docs : long_docs);
    if (!warmed) return std::unexpected(warmed.error());
  }
  for (int repeat = 0; repeat < std::max(repeats, 1); ++repeat) {
    std::vector<RunFigures> pair;
    for (int64_t docs : {short_docs, long_docs}) {
      if (docs <= 0) continue;
      auto figures = RunOnce(context, variant, docs);
      if (!figures) return std::unexpected(figures.error());
      pair.push_back(*figures);
      runs.push_back(*figures);
    }
    const RunFigures& longer = pair.back();
    result.tokens = longer.tokens;
    whole_rates.push_back(longer.tokens / longer.extract_seconds);
    if (pair.size() == 1) {
      result.steady_rates.push_back(whole_rates.back());
      continue;
    }
    const double seconds = longer.extract_seconds - pair[0].extract_seconds;
    if (seconds <= 0) {
      return std::unexpected(
          "the longer run was not slower than the shorter one; the machine "
          "is too busy to measure");
    }
    result.steady_rates.push_back((longer.tokens - pair[0].tokens) / seconds);
  }
  result.tokens_per_second = Median(result.steady_rates);
  result.whole_run_tokens_per_second = Median(whole_rates);
  for (const RunFigures& run : runs) {
    result.load_seconds = std::max(result.load_seconds, run.load_seconds);
    result.peak_rss_mb = std::max(result.peak_rss_mb, run.peak_rss_mb);
    if (result.node_rss_mb.size() < run.node_rss_mb.size()) {
      result.node_rss_mb.resize(run.node_rss_mb.size());
    }
    for (size_t host = 0; host < run.node_rss_mb.size(); ++host) {
      result.node_rss_mb[host] = std::max(result.node_rss_mb[host], run.node_rss_mb[host]);
    }
  }
  const FlopsPerToken flops =
      ForwardFlopsPerToken(config, result.layers_computed, context.document_tokens);
  result.gflops = flops.total() * result.tokens_per_second / 1e9;
  return result;
}

void PrintResultTable(const std::vector<VariantResult>& results) {
  std::printf("%-9s %-38s %6s %9s %9s %8s %8s %8s %7s %7s %-24s %s\n", "variant", "what", "layers",
              "tok/s", "tok/s all", "GFLOPS", "sgemm", "x sgemm", "x peak", "load s",
              "peak RSS MB (per node)", "tok/s of each repeat");
  for (const VariantResult& r : results) {
    std::string rss = std::to_string(static_cast<int64_t>(r.peak_rss_mb));
    if (!r.node_rss_mb.empty()) {
      rss += " (";
      for (size_t host = 0; host < r.node_rss_mb.size(); ++host) {
        rss += (host ? ", " : "") + std::to_string(static_cast<int64_t>(r.node_rss_mb[host]));
      }
      rss += ")";
    }
    rss += " / weights " + std::to_string(r.weight_bytes >> 20);
    std::string rates;
    for (double rate : r.steady_rates) {
      rates += (rates.empty() ? "" : " ") + std::to_string(static_cast<int64_t>(rate + 0.5));
    }
    std::printf("%-9s %-38s %6s %9.1f %9.1f %8.1f %8.1f %8.3f %7.3f %7.2f %-24s %s\n",
                r.variant.name.c_str(), r.variant.description.c_str(),
                (std::to_string(r.variant.first_layer) + "-" + std::to_string(r.variant.last_layer))
                    .c_str(),
                r.tokens_per_second, r.whole_run_tokens_per_second, r.gflops, r.sgemm_gflops,
                r.gflops / r.sgemm_gflops, r.gflops / r.peak_gflops, r.load_seconds, rss.c_str(),
                rates.c_str());
  }
}

}  // namespace actex
