#include "storage/job_folders.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

namespace actex {

namespace {

namespace fs = std::filesystem;

bool IsHostFolderName(const std::string& name) {
  static const std::regex pattern(R"((machine_[0-9]+_)?host_[0-9]+)");
  return std::regex_match(name, pattern);
}

FolderRole OwnsEverything(const std::string& name) {
  auto all = [](int64_t) { return true; };
  return FolderRole{"", {}, name, {}, all, all};
}

void GroupJobs(JobFolders& found, std::vector<VerifyFinding>* faults,
               std::vector<VerifyFinding>* warnings) {
  const std::vector<JobFolder>& folders = found.folders;
  for (size_t i = 0; i < folders.size(); ++i) {
    const JobFolder& folder = folders[i];
    JobOfFolders& job = found.jobs[folder.role.job];
    if (job.folders.empty()) {
      job.max_docs = folder.max_docs;
    } else if (job.max_docs != folder.max_docs) {
      faults->push_back({folder.output.label + "/metadata.json",
                         "max_docs " + std::to_string(folder.max_docs) + " differs from " +
                             folders[job.folders.front()].output.label + "'s " +
                             std::to_string(job.max_docs) + " within one job"});
      job.max_docs = std::max(job.max_docs, folder.max_docs);
    }
    for (size_t other : job.folders) {
      if (!folder.role.name.empty() && folders[other].role.name == folder.role.name) {
        faults->push_back({folder.output.label, "holds the same share of documents as " +
                                                    folders[other].output.label + " (both are " +
                                                    folder.role.name + " by their metadata.json)"});
      }
    }
    if (!found.single_folder && !folder.role.name.empty() &&
        folder.role.name != folder.output.label) {
      warnings->push_back({folder.output.label, "its metadata.json says it is " + folder.role.name +
                                                    " (a renamed or copied folder?)"});
    }
    job.folders.push_back(i);
  }
  if (found.single_folder) {
    if (!folders.empty() && folders.front().role.leased) {
      warnings->push_back({folders.front().output.label,
                           "a leased job's folder holds the chunks its host was granted: only "
                           "those are checked; verify the whole output folder to check that "
                           "every document of the job is written once"});
    }
    return;
  }
  std::set<std::string> absent_jobs;
  for (const JobFolder& folder : folders) {
    for (const std::string& job : folder.role.all_jobs) {
      if (!found.jobs.contains(job)) absent_jobs.insert(job);
    }
  }
  for (const std::string& job : absent_jobs) {
    warnings->push_back({"", job + " has no folder here: its share of the corpus is not checked"});
  }
  for (const auto& [name, job] : found.jobs) {
    const FolderRole& role = folders[job.folders.front()].role;
    for (const std::string& expected : role.job_folders) {
      const bool present = std::any_of(job.folders.begin(), job.folders.end(),
                                       [&](size_t i) { return folders[i].role.name == expected; });
      if (!present) {
        faults->push_back({expected, "is missing: " + (name.empty() ? "the job" : name) +
                                         " writes this folder, so its documents are missing"});
      }
    }
  }
}

}  // namespace

std::expected<std::vector<std::pair<std::string, std::string>>, std::string> ListHostFolders(
    const std::string& out_dir, bool* single_folder, std::vector<VerifyFinding>* faults) {
  std::error_code error;
  if (!fs::is_directory(out_dir, error)) return std::unexpected(out_dir + " is not a directory");
  std::vector<std::pair<std::string, std::string>> found;
  if (fs::exists(fs::path(out_dir) / "metadata.json", error)) {
    *single_folder = true;
    const fs::path canonical = fs::weakly_canonical(out_dir, error);
    std::string label = canonical.filename().string();
    if (label.empty()) label = canonical.parent_path().filename().string();  // "host_00/"
    found.emplace_back(out_dir, label.empty() ? out_dir : label);
    return found;
  }
  for (const auto& entry : fs::directory_iterator(out_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory()) continue;
    if (fs::exists(entry.path() / "metadata.json")) {
      found.emplace_back(entry.path().string(), name);
    } else if (IsHostFolderName(name)) {
      faults->push_back(
          {name, "has no metadata.json: the run never wrote here, or it was deleted"});
    }
  }
  if (error) return std::unexpected("cannot list " + out_dir + ": " + error.message());
  if (found.empty()) {
    return std::unexpected(out_dir +
                           " holds no host folder with a metadata.json (host_NN, "
                           "machine_MMM_host_NN): is it an extraction's --out?");
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::expected<JobFolders, std::string> FindJobFolders(const std::string& out_dir,
                                                      const FolderRoleRule& role,
                                                      bool allow_incomplete,
                                                      std::vector<VerifyFinding>* faults,
                                                      std::vector<VerifyFinding>* warnings) {
  JobFolders found;
  auto listed = ListHostFolders(out_dir, &found.single_folder, faults);
  if (!listed) return std::unexpected(listed.error());
  for (const auto& [path, label] : *listed) {
    auto output = ReadOutputFolder(path, label, faults);
    if (!output) continue;
    JobFolder folder{std::move(*output), OwnsEverything(label), -1};
    const auto& config = folder.output.config;
    if (config.contains("max_docs") && config["max_docs"].is_number_integer()) {
      folder.max_docs = config["max_docs"].get<int64_t>();
    }
    if (role) {
      auto given = role(config);
      if (given) {
        folder.role = std::move(*given);
      } else {
        faults->push_back({label + "/metadata.json",
                           "cannot tell which documents the folder holds: " + given.error()});
      }
    }
    if (!folder.output.complete && !allow_incomplete && !folder.role.leased) {
      faults->push_back({label,
                         "did not finish (\"complete\": false): resume the run, or pass "
                         "--allow-incomplete to check what it has written so far"});
    }
    found.folders.push_back(std::move(folder));
  }
  GroupJobs(found, faults, warnings);
  return found;
}

}  // namespace actex
