#ifndef ACTEX_BENCH_GPU_PIPELINE_RUN_H_
#define ACTEX_BENCH_GPU_PIPELINE_RUN_H_

#include <expected>
#include <string>

namespace actex {

// One end-to-end `actex extract --device cuda` of pre-tokenized documents: loader,
// packer, the forward on GPU 0, the writer (one bf16 resid_post site), output under
// `folder` (tmpfs, so that the disk does not decide).
struct GpuPipelineRun {
  std::string actex;      // the executable
  std::string model_dir;  // a random model (bench_gpu_forward makes it)
  std::string folder;     // corpus, output and log
  int documents = 8192;   // of `document_tokens` ids each, below `vocabulary`
  int document_tokens = 256;
  int vocabulary = 4096;
  int last_layer = 0;  // resid_post of it is written
  std::string precision = "fp32";
  int64_t batch_tokens = 16384;
};

// What the run says of itself: its summary line and its shard's timeline
// (actors/shard_timeline.h).
struct GpuPipelineFigures {
  double tokens_per_second = 0;          // the node's, from its first batch's start to the end
  double forward_share = 0;              // of the shard's time since its first batch, 0..1
  double forward_tokens_per_second = 0;  // the forward alone, inside the pipeline
  double waiting_seconds = 0;            // for batches: the loader and packer
  double handing_on_seconds = 0;         // the writer taking the activations
  std::string log;                       // the run's log file
};

// Writes the corpus (once), runs the extraction and reads its figures; an error names
// the exit code and the log when the run failed or its figures are missing.
std::expected<GpuPipelineFigures, std::string> RunGpuPipeline(const GpuPipelineRun& run);

}  // namespace actex

#endif  // ACTEX_BENCH_GPU_PIPELINE_RUN_H_
