#include "bench/throughput_targets.h"

#include <algorithm>
#include <cstdio>

namespace actex {

std::vector<Target> ThroughputTargets(const std::vector<VariantResult>& results,
                                      const std::vector<std::string>& families, VectorIsa isa) {
  auto find = [&](const std::string& name) -> const VariantResult* {
    for (const VariantResult& result : results) {
      if (result.variant.name == name) return &result;
    }
    return nullptr;
  };
  const VariantResult* single = find("shards1");
  std::vector<Target> targets;
  auto relative = [&](const std::string& what, const std::string& name, double bound) {
    const VariantResult* other = find(name);
    Target target{what, 0, bound, false, single != nullptr && other != nullptr};
    if (target.measured) target.ratio = other->tokens_per_second / single->tokens_per_second;
    targets.push_back(target);
  };
  targets.push_back({"achieved GFLOPS / sgemm GFLOPS, shards 1 x 2 threads",
                     single ? single->gflops / single->sgemm_gflops : 0, 0.85, false,
                     single != nullptr});
  for (const std::string& preset : families) {
    if (const VariantResult* family = find(preset)) {
      // A mixture of experts runs one product per expert over the tokens routed to it
      // (about batch x top_k / experts rows), and routes, gathers and scatters besides.
      targets.push_back({"achieved GFLOPS / sgemm GFLOPS, " + preset,
                         family->gflops / family->sgemm_gflops, family->variant.routed ? 0.6 : 0.85,
                         false, true});
    }
  }
  if (isa == VectorIsa::kAvx512) {
    // On AVX-512 the products are oneDNN's, and the figure that matters is the share
    // of the machine: the FMA peak.
    targets.push_back({"achieved GFLOPS / AVX-512 FMA peak, shards 1 x 2 threads",
                       single ? single->gflops / single->peak_gflops : 0, 0.65, false,
                       single != nullptr});
    for (const VariantResult& result : results) {
      const bool family = std::ranges::find(families, result.variant.name) != families.end();
      if ((result.variant.name.starts_with("7b") && !result.variant.simulate) || family) {
        targets.push_back({"achieved GFLOPS / AVX-512 FMA peak, " + result.variant.name,
                           result.gflops / result.peak_gflops, 0.6, false, true});
      }
    }
  }
  relative("tokens/s, shards 2 x 1 thread / shards 1 x 2 threads", "shards2", 0.9);
  relative("tokens/s, simulate 2 hosts tcp, mesh 1d / single process", "sim1d", 0.8);
  relative("tokens/s, simulate 2 hosts tcp, mesh 2d / single process", "sim2d", 0.9);
  const VariantResult* early = find("early");
  targets.push_back({"seconds per token, layers 0-3 / layers 20-23",
                     early && single ? single->tokens_per_second / early->tokens_per_second : 0,
                     0.2, true, early != nullptr && single != nullptr});
  relative("tokens/s, text corpus / pre-tokenized", "text", 0.95);
  relative("tokens/s, with a 16x SAE on one resid site / without", "sae", 0.9);
  // Interleaved runs of one variant (--variants text,parquet,text,parquet) average out
  // the machine's drift between them.
  auto mean_rate = [&](const std::string& name) {
    double sum = 0;
    int runs = 0;
    for (const VariantResult& result : results) {
      if (result.variant.name != name) continue;
      sum += result.tokens_per_second;
      ++runs;
    }
    return runs > 0 ? sum / runs : 0.0;
  };
  const double jsonl_rate = mean_rate("text"), parquet_rate = mean_rate("parquet");
  targets.push_back({"tokens/s, text corpus from Parquet / the same from JSONL (means)",
                     jsonl_rate > 0 ? parquet_rate / jsonl_rate : 0, 0.97, false,
                     jsonl_rate > 0 && parquet_rate > 0});
  for (const VariantResult& result : results) {
    const double limit_mb = result.weight_bytes * 1.15 / 1048576.0 + 512;
    targets.push_back({"peak RSS MB / (weights x 1.15 + 512 MB), " + result.variant.name,
                       result.peak_rss_mb / limit_mb, 1.0, true, true});
  }
  for (const VariantResult& result : results) {
    targets.push_back({"model load seconds / 3 s, " + result.variant.name,
                       result.load_seconds / 3.0, 1.0, true, true});
  }
  if (const VariantResult* sim = find("7b-sim1d")) {
    targets.push_back({"7B simulate 1d: largest node RSS / weight-file size",
                       sim->peak_rss_mb * 1048576.0 / sim->weight_bytes, 0.6, true, true});
  }
  return targets;
}

void PrintTargets(const std::vector<Target>& targets) {
  std::printf("\n%-66s %8s %8s %6s\n", "target", "ratio", "bound", "");
  for (const Target& target : targets) {
    if (!target.measured) {
      std::printf("%-66s %8s %8s %6s\n", target.what.c_str(), "-", "-", "n/a");
      continue;
    }
    const bool pass = target.at_most ? target.ratio <= target.bound : target.ratio >= target.bound;
    std::printf("%-66s %8.3f %7s%.2f %6s\n", target.what.c_str(), target.ratio,
                target.at_most ? "<=" : ">=", target.bound, pass ? "PASS" : "FAIL");
  }
}

}  // namespace actex
