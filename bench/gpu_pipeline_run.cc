#include "bench/gpu_pipeline_run.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include "bench/child_process.h"

namespace actex {
namespace {

// {"input_ids": [...]} lines of deterministic ids, each document different.
std::expected<void, std::string> WriteCorpus(const GpuPipelineRun& run, const std::string& path) {
  if (std::filesystem::exists(path)) return {};
  std::ofstream file(path + ".part");
  for (int d = 0; d < run.documents; ++d) {
    file << "{\"input_ids\": [";
    for (int t = 0; t < run.document_tokens; ++t) {
      const int64_t id = (int64_t{d} * 7919 + int64_t{t} * 104729) % run.vocabulary;
      file << (t > 0 ? ", " : "") << id;
    }
    file << "]}\n";
  }
  file.close();
  if (!file) return std::unexpected("cannot write the corpus " + path + ".part");
  std::filesystem::rename(path + ".part", path);
  return {};
}

double Number(const std::smatch& match, int group) { return std::stod(match[group].str()); }

}  // namespace

std::expected<GpuPipelineFigures, std::string> RunGpuPipeline(const GpuPipelineRun& run) {
  std::filesystem::create_directories(run.folder);
  const std::string corpus = run.folder + "/corpus.jsonl";
  if (auto written = WriteCorpus(run, corpus); !written) return std::unexpected(written.error());
  const std::string out = run.folder + "/out";
  std::filesystem::remove_all(out);
  GpuPipelineFigures figures;
  figures.log = run.folder + "/extract_" + run.precision + ".log";
  const std::vector<std::string> args = {run.actex,        "extract",
                                         "--model",        run.model_dir,
                                         "--data",         corpus,
                                         "--out",          out,
                                         "--layers",       std::to_string(run.last_layer),
                                         "--sites",        "resid_post",
                                         "--dtype",        "bfloat16",
                                         "--bos",          "no",
                                         "--device",       "cuda",
                                         "--precision",    run.precision,
                                         "--batch-tokens", std::to_string(run.batch_tokens)};
  auto child = RunChild(args, figures.log);
  std::filesystem::remove_all(out);
  if (!child) return std::unexpected(child.error());
  if (child->exit_code != 0) {
    return std::unexpected("`" + JoinArgs(args) + "` exited with " +
                           std::to_string(child->exit_code) + "; see " + figures.log);
  }
  static const std::regex kWrote(R"(wrote \d+ documents .*: ([0-9.]+) tokens/s)");
  static const std::regex kTimeline(
      R"(since the first batch: forward [0-9.]+ s \(([0-9]+) %, ([0-9]+) )"
      R"(tokens/s alone\), waiting for batches ([0-9.]+) s, handing on ([0-9.]+) s)");
  std::smatch wrote, timeline;
  if (!std::regex_search(child->output, wrote, kWrote) ||
      !std::regex_search(child->output, timeline, kTimeline)) {
    return std::unexpected("no summary or shard timeline in " + figures.log);
  }
  figures.tokens_per_second = Number(wrote, 1);
  figures.forward_share = Number(timeline, 1) / 100;
  figures.forward_tokens_per_second = Number(timeline, 2);
  figures.waiting_seconds = Number(timeline, 3);
  figures.handing_on_seconds = Number(timeline, 4);
  return figures;
}

}  // namespace actex
