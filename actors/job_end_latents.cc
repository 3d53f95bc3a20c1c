#include "actors/job_end_latents.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "storage/job_folders.h"
#include "storage/job_latents.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// What to run once the cause is fixed.
std::string InspectLater(const std::string& out_dir) {
  return fmt::format("run `actex inspect --latents {}` where every host folder is", out_dir);
}

}  // namespace

JobEndLatents MergeLatentsAtJobEnd(const NodeOptions& options, const MeshPlan& mesh) {
  const std::string& out_dir = options.extract.out_dir;
  if (options.extract.saes.empty()) return {};
  if (mesh.total_machines > 1) {
    return {false, fmt::format("{} is shared by {} jobs (--total-machines): once every one "
                               "ended, run `actex inspect --latents {}` for latents.safetensors",
                               out_dir, mesh.total_machines, out_dir)};
  }
  // Every host folder in OUT is this job's: those of earlier runs of it with other host
  // counts too, whose listed shards the job kept.
  bool single_folder = false;
  std::vector<VerifyFinding> unused_faults;
  auto folders = ListHostFolders(out_dir, &single_folder, &unused_faults);
  if (!folders) {
    return {false, fmt::format("latents.safetensors not written: {}; {}", folders.error(),
                               InspectLater(out_dir))};
  }
  std::vector<std::string> host_dirs;
  for (const auto& [path, label] : *folders) host_dirs.push_back(path);
  for (int replica = 0; replica < mesh.data; ++replica) {
    const fs::path folder = fs::path(out_dir) / mesh.HostFolder(mesh.WriterHost(replica));
    if (std::find(host_dirs.begin(), host_dirs.end(), folder.string()) == host_dirs.end()) {
      return {false, fmt::format("latents.safetensors not written: {} is not visible from this "
                                 "host (no shared file system?); {}",
                                 folder.string(), InspectLater(out_dir))};
    }
  }
  auto job = WriteJobLatents(out_dir, host_dirs);
  if (!job) {
    return {false, fmt::format("latents.safetensors not written: {}; {}", job.error(),
                               InspectLater(out_dir))};
  }
  return {true, fmt::format("wrote {}/{}: the latent examples of {} host folder(s), {} examples "
                            "file(s), {} tokens",
                            out_dir, kJobLatentsFile, host_dirs.size(), job->files, job->tokens)};
}

}  // namespace actex
