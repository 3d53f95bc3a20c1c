#include "actors/run_fingerprint.h"

#include <filesystem>

namespace actex {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ",") + item;
  return joined;
}

// Names and sizes, not paths: hosts may mount the same corpus at different places
// but must read the same files in the same order.
std::string DescribeCorpus(const std::vector<std::string>& files) {
  std::vector<std::string> described;
  for (const std::string& file : files) {
    std::error_code error;
    auto bytes = std::filesystem::file_size(file, error);
    described.push_back(std::filesystem::path(file).filename().string() + ":" +
                        (error ? "?" : std::to_string(bytes)));
  }
  return Join(described);
}

}  // namespace

const char* SoftwareVersion() { return "actex " ACTEX_VERSION; }

std::map<std::string, std::string> RunFingerprint(const ExtractOptions& options,
                                                  const ExtractPlan& plan, const MeshPlan& mesh,
                                                  const std::string& weights_fingerprint,
                                                  const std::string& tokenizer_hash,
                                                  const std::vector<std::string>& corpus_files) {
  std::vector<std::string> layers, sites;
  for (int layer : options.layers) layers.push_back(std::to_string(layer));
  for (const Site& site : plan.sites) sites.push_back(site.HookName());
  return {
      {"model files", weights_fingerprint},
      {"tokenizer", tokenizer_hash},
      {"corpus files", DescribeCorpus(corpus_files)},
      {"--mesh", mesh.Describe()},
      {"--shards-per-host", std::to_string(mesh.shards_per_host)},
      {"--num-hosts", std::to_string(mesh.hosts)},
      {"--total-machines", std::to_string(mesh.total_machines)},
      {"--machine-id", std::to_string(mesh.machine_id)},
      {"--layers", Join(layers)},
      {"--sites", Join(sites)},
      {"--dtype", plan.dtype_name},
      {"--max-seq-len", std::to_string(options.max_seq_len)},
      {"--overflow", options.overflow == Overflow::kSplit ? "split" : "truncate"},
      {"--batch-tokens", std::to_string(options.batch_tokens)},
      {"--shard-size", std::to_string(options.shard_bytes)},
      {"--compress", options.gzip ? "gzip" : "none"},
      {"--text-field", options.text_field},
      {"--bos", options.bos},
      {"--max-docs", std::to_string(options.max_docs)},
  };
}

}  // namespace actex
