#include "storage/output_verifier.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>

#include "storage/shard_check.h"
#include "storage/uploaded_shards.h"

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

struct Folder {
  OutputFolder output;
  FolderRole role;
  int64_t max_docs = -1;  // documents at or past it were never read
};

struct Job {
  std::vector<size_t> folders;
  int64_t max_docs = -1;
};

// "4, 9, 12" or, with places, "5 (host_00/shard_000001.safetensors, host_01/rejects.jsonl)".
std::string ListIds(const std::map<int64_t, std::vector<std::string>>& ids, int64_t count) {
  std::string text;
  for (const auto& [id, places] : ids) {
    if (!text.empty()) text += ", ";
    text += std::to_string(id);
    std::string where;
    for (const auto& place : places) {
      if (place.empty()) continue;
      where += (where.empty() ? "" : ", ") + place;
    }
    if (!where.empty()) text += " (" + where + ")";
  }
  if (count > static_cast<int64_t>(ids.size())) text += ", ...";
  return text;
}

class Verifier {
 public:
  explicit Verifier(const VerifyOptions& options)
      : options_(options), unexpected_(options.listed_ids) {}

  std::expected<VerifyReport, std::string> Run();

 private:
  std::expected<void, std::string> FindFolders();
  void GroupJobs();
  void CountCorpus();
  void CheckFolder(Folder& folder);
  // Records the documents inferred for the folder's listed shard `index`, uploaded
  // and deleted locally, as seen in tally source `source`; `rejected` (sorted) holds
  // the folder's rejected ids inside its deleted shards' ranges.
  void RecordDeletedShard(const Folder& folder, size_t index, int source,
                          const std::vector<int64_t>& rejected);
  // One occurrence of `doc_id` in `folder`, seen in `place` (tally source `source`).
  void Record(const Folder& folder, int64_t doc_id, int source, const std::string& place);
  void CheckCoverage();
  void Fault(std::string file, std::string problem) {
    report_.faults.push_back({std::move(file), std::move(problem)});
  }

  const VerifyOptions& options_;
  VerifyReport report_;
  bool single_folder_ = false;
  std::vector<Folder> folders_;
  std::map<std::string, Job> jobs_;
  std::optional<DocumentTally> tally_;
  IdSample unexpected_;
};

std::expected<void, std::string> Verifier::FindFolders() {
  std::error_code error;
  if (!fs::is_directory(options_.out_dir, error)) {
    return std::unexpected(options_.out_dir + " is not a directory");
  }
  std::vector<std::pair<std::string, std::string>> found;  // (path, label)
  if (fs::exists(fs::path(options_.out_dir) / "metadata.json", error)) {
    single_folder_ = true;
    const fs::path canonical = fs::weakly_canonical(options_.out_dir, error);
    std::string label = canonical.filename().string();
    if (label.empty()) label = canonical.parent_path().filename().string();  // "host_00/"
    found.emplace_back(options_.out_dir, label.empty() ? options_.out_dir : label);
  } else {
    for (const auto& entry : fs::directory_iterator(options_.out_dir, error)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_directory()) continue;
      if (fs::exists(entry.path() / "metadata.json")) {
        found.emplace_back(entry.path().string(), name);
      } else if (IsHostFolderName(name)) {
        Fault(name, "has no metadata.json: the run never wrote here, or it was deleted");
      }
    }
    if (error) return std::unexpected("cannot list " + options_.out_dir + ": " + error.message());
  }
  if (found.empty()) {
    return std::unexpected(options_.out_dir +
                           " holds no host folder with a metadata.json (host_NN, "
                           "machine_MMM_host_NN): is it an extraction's --out?");
  }
  std::sort(found.begin(), found.end());
  for (const auto& [path, label] : found) {
    auto output = ReadOutputFolder(path, label, &report_.faults);
    if (!output) continue;
    Folder folder{std::move(*output), OwnsEverything(label), -1};
    const auto& config = folder.output.config;
    if (config.contains("max_docs") && config["max_docs"].is_number_integer()) {
      folder.max_docs = config["max_docs"].get<int64_t>();
    }
    if (options_.role) {
      auto role = options_.role(config);
      if (role) {
        folder.role = std::move(*role);
      } else {
        Fault(label + "/metadata.json",
              "cannot tell which documents the folder holds: " + role.error());
      }
    }
    if (!folder.output.complete && !options_.allow_incomplete) {
      Fault(label,
            "did not finish (\"complete\": false): resume the run, or pass "
            "--allow-incomplete to check what it has written so far");
    }
    folders_.push_back(std::move(folder));
  }
  return {};
}

void Verifier::GroupJobs() {
  for (size_t i = 0; i < folders_.size(); ++i) {
    const Folder& folder = folders_[i];
    Job& job = jobs_[folder.role.job];
    if (job.folders.empty()) {
      job.max_docs = folder.max_docs;
    } else if (job.max_docs != folder.max_docs) {
      Fault(folder.output.label + "/metadata.json",
            "max_docs " + std::to_string(folder.max_docs) + " differs from " +
                folders_[job.folders.front()].output.label + "'s " + std::to_string(job.max_docs) +
                " within one job");
      job.max_docs = std::max(job.max_docs, folder.max_docs);
    }
    for (size_t other : job.folders) {
      if (!folder.role.name.empty() && folders_[other].role.name == folder.role.name) {
        Fault(folder.output.label, "holds the same share of documents as " +
                                       folders_[other].output.label + " (both are " +
                                       folder.role.name + " by their metadata.json)");
      }
    }
    if (!single_folder_ && !folder.role.name.empty() && folder.role.name != folder.output.label) {
      report_.warnings.push_back(
          {folder.output.label,
           "its metadata.json says it is " + folder.role.name + " (a renamed or copied folder?)"});
    }
    job.folders.push_back(i);
  }
  if (single_folder_) return;
  std::set<std::string> absent_jobs;
  for (const Folder& folder : folders_) {
    for (const std::string& job : folder.role.all_jobs) {
      if (!jobs_.contains(job)) absent_jobs.insert(job);
    }
  }
  for (const std::string& job : absent_jobs) {
    report_.warnings.push_back(
        {"", job + " has no folder here: its share of the corpus is not checked"});
  }
  for (const auto& [name, job] : jobs_) {
    const FolderRole& role = folders_[job.folders.front()].role;
    for (const std::string& expected : role.job_folders) {
      const bool present = std::any_of(job.folders.begin(), job.folders.end(),
                                       [&](size_t i) { return folders_[i].role.name == expected; });
      if (!present) {
        Fault(expected, "is missing: " + (name.empty() ? "the job" : name) +
                            " writes this folder, so its documents are missing");
      }
    }
  }
}

void Verifier::CountCorpus() {
  std::vector<std::string> inputs = options_.data;
  std::string named_by = "--data";
  if (inputs.empty()) {
    const Folder& first = folders_.front();
    const auto& data = first.output.config.value("data", nlohmann::json());
    named_by = first.output.label + "/metadata.json";
    if (!data.is_array() || data.empty() ||
        !std::all_of(data.begin(), data.end(), [](const auto& v) { return v.is_string(); })) {
      Fault(named_by, "config names no corpus (\"data\"): give it with --data");
      return;
    }
    for (const Folder& folder : folders_) {
      if (folder.output.config.value("data", nlohmann::json()) != data) {
        Fault(folder.output.label + "/metadata.json",
              "config names another corpus than " + named_by + ": give the corpus with --data");
        return;
      }
    }
    inputs = data.get<std::vector<std::string>>();
  }
  int64_t limit = -1;
  if (std::all_of(jobs_.begin(), jobs_.end(),
                  [](const auto& job) { return job.second.max_docs >= 0; })) {
    for (const auto& [name, job] : jobs_) limit = std::max(limit, job.max_docs);
  }
  auto documents = CountCorpusDocuments(inputs, limit);
  if (!documents) {
    Fault("", "cannot read the corpus " + named_by + " names (" + documents.error() +
                  "); if it moved, give its files with --data");
    return;
  }
  tally_.emplace(*documents, options_.listed_ids);
  report_.coverage_checked = true;
}

void Verifier::Record(const Folder& folder, int64_t doc_id, int source, const std::string& place) {
  if (!tally_) return;
  std::string why;
  if (doc_id >= tally_->corpus_documents()) {
    why = "beyond the corpus's " + std::to_string(tally_->corpus_documents()) + " documents";
  } else if (folder.max_docs >= 0 && doc_id >= folder.max_docs) {
    why = "beyond max_docs " + std::to_string(folder.max_docs);
  } else if (!folder.role.owns(doc_id)) {
    why = "not this folder's share of the corpus";
  }
  if (!why.empty()) {
    ++report_.unexpected;
    unexpected_.Add(doc_id, place + ": " + why);
  }
  if (doc_id < tally_->corpus_documents()) tally_->Record(doc_id, source);
}

void Verifier::CheckFolder(Folder& folder) {
  const OutputFolder& output = folder.output;
  FolderSummary summary{output.label,
                        output.complete,
                        static_cast<int64_t>(output.shards.size()),
                        output.docs,
                        output.tokens,
                        output.bytes,
                        0,
                        0};
  const FolderUploads uploads = ReadFolderUploads(output, &report_.faults);
  // (listing index, tally source) of each shard uploaded and deleted locally: its
  // documents are inferred once the folder's rejects are known.
  std::vector<std::pair<size_t, int>> deleted;
  std::vector<std::pair<int64_t, int64_t>> deleted_ranges;
  for (size_t i = 0; i < output.shards.size(); ++i) {
    const std::string place = output.label + "/" + output.shard_files[i];
    ShardCheck check = CheckShard(output.shards[i]);
    if (check.missing) {
      MissingShardVerdict verdict =
          JudgeMissingShard(uploads, output.shard_files[i], output.shards[i]);
      if (!verdict.uploaded_deleted) {
        Fault(place, std::move(verdict.problem));
        continue;
      }
      report_.warnings.push_back({place, std::move(verdict.problem)});
      ++summary.uploaded_deleted;
      if (!tally_) continue;
      deleted.emplace_back(i, tally_->AddSource(place, /*rejected=*/false));
      deleted_ranges.emplace_back(output.shards[i].first_doc_id, output.shards[i].last_doc_id);
      continue;
    }
    for (auto& problem : check.faults) Fault(place, std::move(problem));
    if (!check.documents_read || !tally_) continue;
    const int source = tally_->AddSource(place, /*rejected=*/false);
    for (int64_t doc_id : check.documents) Record(folder, doc_id, source, place);
  }
  const DocIdRanges in_deleted(std::move(deleted_ranges));
  std::vector<int64_t> rejected_in_deleted;
  const std::string rejects = output.label + "/rejects.jsonl";
  const int source = tally_ ? tally_->AddSource(rejects, /*rejected=*/true) : -1;
  summary.rejected = ReadRejects(
      output,
      [&](int64_t doc_id) {
        Record(folder, doc_id, source, rejects);
        if (in_deleted.Contains(doc_id)) rejected_in_deleted.push_back(doc_id);
      },
      &report_.faults);
  std::sort(rejected_in_deleted.begin(), rejected_in_deleted.end());
  for (const auto& [index, shard_source] : deleted) {
    RecordDeletedShard(folder, index, shard_source, rejected_in_deleted);
  }
  for (auto& warning : FindUnlistedFiles(output)) report_.warnings.push_back(std::move(warning));
  report_.shards += summary.shards;
  report_.bytes += summary.bytes;
  report_.uploaded_deleted += summary.uploaded_deleted;
  report_.folders.push_back(summary);
}

void Verifier::RecordDeletedShard(const Folder& folder, size_t index, int source,
                                  const std::vector<int64_t>& rejected) {
  const ShardListing& shard = folder.output.shards[index];
  const std::string place = folder.output.label + "/" + folder.output.shard_files[index];
  const std::string range =
      std::to_string(shard.first_doc_id) + ".." + std::to_string(shard.last_doc_id);
  if (shard.last_doc_id >= tally_->corpus_documents()) {
    // Also bounds the walk over the range below.
    Fault(place, "uploaded and deleted locally, and metadata.json lists doc ids " + range +
                     ", beyond the corpus's " + std::to_string(tally_->corpus_documents()) +
                     " documents: its documents cannot be inferred");
    return;
  }
  const std::vector<int64_t> documents =
      InferDeletedShardDocuments(shard, folder.role.owns, rejected);
  if (static_cast<int64_t>(documents.size()) != shard.docs) {
    // The folder's rejects or share do not match what the writer did: no document
    // of the shard can be vouched for, so none is counted as written.
    Fault(place, "uploaded and deleted locally: inferred " + std::to_string(documents.size()) +
                     " documents from its doc ids " + range +
                     " (the folder's share, less its rejects.jsonl), metadata.json lists " +
                     std::to_string(shard.docs) + "; none of them is counted as written");
    return;
  }
  for (int64_t doc_id : documents) Record(folder, doc_id, source, place);
}

void Verifier::CheckCoverage() {
  if (!tally_) return;
  auto expected = [&](int64_t doc_id) {
    if (single_folder_) {
      const Folder& folder = folders_.front();
      return (folder.max_docs < 0 || doc_id < folder.max_docs) && folder.role.owns(doc_id);
    }
    for (const auto& [name, job] : jobs_) {
      if ((job.max_docs < 0 || doc_id < job.max_docs) &&
          folders_[job.folders.front()].role.job_owns(doc_id)) {
        return true;
      }
    }
    return false;
  };
  auto excused = [&](int64_t doc_id) {
    if (!options_.allow_incomplete) return false;
    return std::any_of(folders_.begin(), folders_.end(), [&](const Folder& folder) {
      return !folder.output.complete && folder.role.owns(doc_id);
    });
  };
  IdSample missing(options_.listed_ids);
  report_.coverage = tally_->Count(expected, excused, &missing);
  report_.missing_ids = missing.ids();
  report_.duplicated_ids = tally_->duplicated().ids();
  report_.unexpected_ids = unexpected_.ids();
  const CoverageCounts& counts = report_.coverage;
  if (counts.missing > 0) {
    Fault("", std::to_string(counts.missing) +
                  " documents missing (neither written nor in a rejects.jsonl): " +
                  ListIds(report_.missing_ids, counts.missing));
  }
  if (counts.duplicated > 0) {
    Fault("", std::to_string(counts.duplicated) +
                  " documents duplicated (written or rejected more than once): " +
                  ListIds(report_.duplicated_ids, counts.duplicated));
  }
  if (report_.unexpected > 0) {
    Fault("", std::to_string(report_.unexpected) +
                  " documents written or rejected where they do not belong: " +
                  ListIds(report_.unexpected_ids, report_.unexpected));
  }
}

std::expected<VerifyReport, std::string> Verifier::Run() {
  if (auto found = FindFolders(); !found) return std::unexpected(found.error());
  if (folders_.empty()) return report_;  // every metadata.json was unusable: all reported
  GroupJobs();
  CountCorpus();
  for (Folder& folder : folders_) CheckFolder(folder);
  CheckCoverage();
  return report_;
}

}  // namespace

std::string VerifyReport::Summary() const {
  std::string files = std::to_string(shards) + " shards, " + std::to_string(bytes) + " bytes";
  if (uploaded_deleted > 0) {
    files += " (" + std::to_string(uploaded_deleted) + " shards uploaded and deleted locally, " +
             "not re-read)";
  }
  if (!coverage_checked) return "checked " + files + "; document coverage not checked";
  std::string text = "verified " + std::to_string(coverage.documents) +
                     " documents: " + std::to_string(coverage.written) + " written, " +
                     std::to_string(coverage.rejected) + " rejected, ";
  if (coverage.pending > 0) text += std::to_string(coverage.pending) + " not yet written, ";
  return text + std::to_string(coverage.missing) + " missing, " +
         std::to_string(coverage.duplicated) + " duplicated; " + files;
}

std::expected<VerifyReport, std::string> VerifyOutput(const VerifyOptions& options) {
  return Verifier(options).Run();
}

}  // namespace actex
