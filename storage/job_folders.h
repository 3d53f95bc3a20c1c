#ifndef ACTEX_STORAGE_JOB_FOLDERS_H_
#define ACTEX_STORAGE_JOB_FOLDERS_H_

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "storage/output_folder.h"

namespace actex {

// Which corpus documents one host folder answers for (writes, or lists in its
// rejects.jsonl), as the job that wrote it dealt them. Storage does not know how
// jobs deal documents; the caller derives this from the folder's metadata.json
// "config" (actex's rule: MeshPlan::OwnsDocument in actors/mesh_plan.h).
struct FolderRole {
  // Folders with the same `job` split one independent job's documents (one
  // --machine-id of --total-machines); documents of jobs with no folder in OUT are
  // not expected.
  std::string job;
  // Every job that splits the corpus with this one (itself included), so that the
  // jobs with no folder in OUT are named in a warning. Empty: not known.
  std::vector<std::string> all_jobs;
  // The folder's name as its job names it, and every folder name the job writes,
  // so that a folder missing from OUT is reported. Empty: not known, not checked.
  std::string name;
  std::vector<std::string> job_folders;
  std::function<bool(int64_t doc_id)> owns;      // this folder's documents
  std::function<bool(int64_t doc_id)> job_owns;  // all of the job's folders' documents
  // The job leased its chunks: a folder holds what its host was granted, so one
  // whose host was lost ("complete": false) may still be part of a finished job;
  // whether every document is there is told by the coverage alone.
  bool leased = false;
};
using FolderRoleRule =
    std::function<std::expected<FolderRole, std::string>(const nlohmann::json& config)>;

// One host folder of an extraction's output, with the documents it answers for.
struct JobFolder {
  OutputFolder output;
  FolderRole role;
  int64_t max_docs = -1;  // documents at or past it were never read
};

// The folders that split one job's documents (indices into JobFolders::folders).
struct JobOfFolders {
  std::vector<size_t> folders;
  int64_t max_docs = -1;
};

struct JobFolders {
  bool single_folder = false;      // out_dir was one host folder, not an output of several
  std::vector<JobFolder> folders;  // in name order; only those whose metadata.json reads
  std::map<std::string, JobOfFolders> jobs;  // by FolderRole::job
};

// (path, label) of every folder below `out_dir` holding a metadata.json, in name order,
// or of `out_dir` itself when it holds one (`single_folder`). A folder named like a host
// folder (host_NN, machine_MMM_host_NN) without metadata.json goes to `faults`. Fails
// when `out_dir` cannot be listed or holds no host folder.
std::expected<std::vector<std::pair<std::string, std::string>>, std::string> ListHostFolders(
    const std::string& out_dir, bool* single_folder, std::vector<VerifyFinding>* faults);

// Finds the host folders below `out_dir` (or `out_dir` itself when it holds a
// metadata.json), reads each one's metadata.json, gives it its role by `role` (empty:
// every folder owns every document) and groups them into jobs. What is wrong with
// the folders as a set goes to `faults` and `warnings`: a host folder without
// metadata.json, an unfinished one (unless `allow_incomplete`), two folders with one
// share, a job's folder missing, differing max_docs within a job, a renamed folder, a
// job of the split with no folder here. Fails only when there is nothing to verify.
std::expected<JobFolders, std::string> FindJobFolders(const std::string& out_dir,
                                                      const FolderRoleRule& role,
                                                      bool allow_incomplete,
                                                      std::vector<VerifyFinding>* faults,
                                                      std::vector<VerifyFinding>* warnings);

}  // namespace actex

#endif  // ACTEX_STORAGE_JOB_FOLDERS_H_
