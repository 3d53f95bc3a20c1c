#include "actors/cli/extract_flags.h"

#include "storage/shard_writer.h"
#include "transport/job_security.h"

namespace actex {

void AddExtractFlags(CLI::App& command, ExtractFlags& flags, const std::string& shards_flag) {
  ExtractOptions& options = flags.options;
  command.add_option("--model", options.model_dir, "HuggingFace model folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  command.add_option("--data", options.data, "corpus files or globs (JSONL, JSONL.gz)")->required();
  command.add_option("--out", options.out_dir, "output folder")->required();
  command.add_option("--layers", flags.layers, "layers to capture: 20,21,22,23 or 20-23")
      ->required();
  command
      .add_option("--sites", flags.sites,
                  "hook names or short forms: resid_pre, resid_mid, resid_post, attn_out, "
                  "mlp_out, mlp_post, embed, ln_final (default resid_post)")
      ->delimiter(',');
  command.add_option(shards_flag, options.shards, "tensor-parallel device shards")
      ->check(CLI::PositiveNumber);
  command.add_option("--dtype", flags.dtype, "output dtype (default: the model's torch_dtype)")
      ->check(CLI::IsMember({"bfloat16", "float16", "float32"}));
  command.add_option("--max-seq-len", options.max_seq_len, "longest sequence in tokens")
      ->check(CLI::PositiveNumber);
  command.add_option("--overflow", flags.overflow, "longer documents: truncate or split")
      ->check(CLI::IsMember({"truncate", "split"}));
  command.add_option("--batch-tokens", options.batch_tokens, "tokens packed into one batch")
      ->check(CLI::PositiveNumber);
  command.add_option("--shard-size", flags.shard_size, "close a shard at this size (KB/MB/GB)");
  command.add_option("--compress", flags.compress, "none or gzip")
      ->check(CLI::IsMember({"none", "gzip"}));
  command.add_option("--text-field", options.text_field, "JSON field holding the text");
  command.add_option("--bos", options.bos,
                     "yes: the model's BOS before every document; no: none; auto (default): as "
                     "HF's tokenizer(text), from tokenizer.json's post-processor")
      ->check(CLI::IsMember({"yes", "no", "auto"}));
  command.add_flag("--overwrite", options.overwrite,
                   "replace an earlier run's output in --out instead of resuming it");
  command.add_option("--max-docs", options.max_docs, "stop after this many documents")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--blas-threads", options.blas_threads,
                  "threads per device shard (default: cores / shards)")
      ->check(CLI::PositiveNumber);
  UploadOptions& upload = options.upload;
  command.add_option("--upload-cmd", upload.command,
                     "shell command run for every closed shard and metadata.json, e.g. "
                     "'gsutil cp {path} gs://bucket/prefix/{host_dir}/{name}'");
  command.add_flag("--delete-after-upload", upload.delete_after_upload,
                   "delete each shard once its upload command succeeded");
  command
      .add_option("--upload-retries", upload.retries,
                  "further attempts after a failed upload (doubling waits)")
      ->capture_default_str();
  command
      .add_option("--upload-backoff", upload.backoff_seconds,
                  "seconds before the first retry; doubles up to 300")
      ->capture_default_str();
  command
      .add_option("--upload-timeout", upload.timeout_seconds,
                  "seconds one upload attempt may take before it is killed")
      ->capture_default_str();
}

std::expected<ExtractOptions, std::string> ResolveExtractFlags(const ExtractFlags& flags) {
  ExtractOptions options = flags.options;
  auto layers = ParseLayerList(flags.layers);
  if (!layers) return std::unexpected(layers.error());
  options.layers = *layers;
  if (!flags.sites.empty()) options.sites = flags.sites;
  options.dtype = flags.dtype;
  options.overflow = flags.overflow == "split" ? Overflow::kSplit : Overflow::kTruncate;
  auto shard_bytes = ParseByteSize(flags.shard_size);
  if (!shard_bytes) return std::unexpected("--shard-size: " + shard_bytes.error());
  options.shard_bytes = *shard_bytes;
  options.gzip = flags.compress == "gzip";
  return options;
}

void AddJobFlags(CLI::App& command, NodeOptions& node, JobTimeouts& timeouts) {
  command.add_option("--mesh", node.mesh,
                     "1d (one replica over every shard), 2d (one replica per host) or "
                     "data=D,model=M");
  command.add_option("--machine-id", node.machine_id, "this job's index among independent jobs")
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--total-machines", node.total_machines,
                  "independent jobs splitting the corpus first")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--join-timeout", timeouts.join_seconds, "seconds to wait for every host to join")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--heartbeat-timeout", timeouts.heartbeat_seconds,
                  "seconds of silence after which a host counts as lost")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--job-key-file", node.job_key_file,
                  "the job's secret (from `actex make-job-key`), the same on every host: only "
                  "holders join, and all tcp traffic is encrypted (default: an open job)")
      ->envname("ACTEX_JOB_KEY_FILE");
}

std::expected<void, std::string> CheckJobKey(const NodeOptions& node) {
  if (node.job_key_file.empty()) return {};
  auto security = JobSecurity::FromKeyFile(node.job_key_file);
  if (!security) return std::unexpected("--job-key-file: " + security.error());
  return {};
}

void ApplyJobTimeouts(const JobTimeouts& timeouts, NodeOptions& node) {
  node.join_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeouts.join_seconds * 1000));
  node.heartbeat_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(timeouts.heartbeat_seconds * 1000));
}

}  // namespace actex
