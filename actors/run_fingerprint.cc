#include "actors/run_fingerprint.h"

#include <filesystem>

#include "actors/extract_flag_table.h"

namespace actex {
namespace {

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
  return ConfigValueText(described);
}

}  // namespace

const char* SoftwareVersion() { return "actex " ACTEX_VERSION; }

std::map<std::string, std::string> RunFingerprint(const ExtractOptions& options,
                                                  const ExtractPlan& plan, const MeshPlan& mesh,
                                                  const std::string& weights_fingerprint,
                                                  const std::string& tokenizer_hash,
                                                  const std::vector<std::string>& corpus_files) {
  std::map<std::string, std::string> fingerprint = {
      {"model files", weights_fingerprint},
      {"tokenizer", tokenizer_hash},
      {"corpus files", DescribeCorpus(corpus_files)},
      {"--mesh", mesh.Describe()},
      {"--shards-per-host", std::to_string(mesh.shards_per_host)},
      {"--num-hosts", std::to_string(mesh.hosts)},
      {"--total-machines", std::to_string(mesh.total_machines)},
      {"--machine-id", std::to_string(mesh.machine_id)},
      {"SAE files", SaeFingerprint(plan.saes)},
  };
  const ExtractOptions resolved = ResolvedOptions(options, plan);
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    if (flag.role == FlagRole::kShared) {
      fingerprint[flag.name] = ConfigValueText(flag.record(resolved));
    }
  }
  return fingerprint;
}

}  // namespace actex
