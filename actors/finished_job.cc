#include "actors/finished_job.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "coordination/rendezvous.h"
#include "storage/finished_job_record.h"
#include "storage/host_folder_files.h"

namespace actex {

std::expected<std::optional<FinishedJob>, std::string> FindFinishedJob(
    const NodeOptions& options, const NodeResources& resources) {
  if (options.num_hosts <= 1 || options.extract.overwrite) return std::nullopt;
  const MeshPlan& mesh = resources.mesh;
  for (int host : {0, mesh.StandbyHost()}) {
    if (host < 0) continue;
    const std::string folder =
        (std::filesystem::path(options.extract.out_dir) / mesh.HostFolder(host)).string();
    auto record = ReadFinishedJobRecord(folder);
    if (!record) return std::unexpected(record.error());
    if (!*record) continue;
    const std::string path = (std::filesystem::path(folder) / kFinishedJobFile).string();
    const std::string differences = FingerprintDifferences(
        (*record)->fingerprint, "the finished job", resources.Fingerprint(options.extract),
        fmt::format("host {}", options.host_id));
    if (!differences.empty()) {
      // Another command into the same --out (or this job resumed with another host
      // count): the usual checks decide, the folder's resume check and the rendezvous.
      spdlog::info("host {}: {} records a job that ran another command ({}); joining as usual",
                   options.host_id, path, differences);
      continue;
    }
    return FinishedJob{fmt::format("{} at {}, {} host(s), {}", path, (*record)->finished_at,
                                   (*record)->hosts, (*record)->progress)};
  }
  return std::nullopt;
}

std::string FinishedBeforeStartLine(int host_id, const FinishedJob& job) {
  return fmt::format(
      "host {}: the job finished before this node started ({}): nothing is left "
      "to do",
      host_id, job.record);
}

}  // namespace actex
