#include "storage/output_verifier.h"

#include <algorithm>
#include <map>

#include "storage/corpus_read_note.h"
#include "storage/folder_digests.h"
#include "storage/job_latents.h"
#include "storage/output_verifier_internal.h"

namespace actex {
namespace output_verifier_internal {
namespace {

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

}  // namespace

void Verifier::CountCorpus() {
  std::vector<std::string> inputs = options_.data;
  std::string named_by = "--data";
  if (inputs.empty()) {
    const JobFolder& first = found_.folders.front();
    const auto& data = first.output.config.value("data", nlohmann::json());
    named_by = first.output.label + "/metadata.json";
    if (!data.is_array() || data.empty() ||
        !std::all_of(data.begin(), data.end(), [](const auto& v) { return v.is_string(); })) {
      Fault(named_by, "config names no corpus (\"data\"): give it with --data");
      return;
    }
    for (const JobFolder& folder : found_.folders) {
      if (folder.output.config.value("data", nlohmann::json()) != data) {
        Fault(folder.output.label + "/metadata.json",
              "config names another corpus than " + named_by + ": give the corpus with --data");
        return;
      }
    }
    inputs = data.get<std::vector<std::string>>();
  }
  auto read = DescribeCorpusRead(inputs, named_by, /*recorded=*/options_.data.empty());
  if (!read) {
    Fault("", "cannot read the corpus " + named_by + " names (" + read.error() +
                  "); if it moved, give its files with --data");
    return;
  }
  report_.corpus_read = std::move(read->first);
  inputs = std::move(read->second);
  int64_t limit = -1;
  if (std::all_of(found_.jobs.begin(), found_.jobs.end(),
                  [](const auto& job) { return job.second.max_docs >= 0; })) {
    for (const auto& [name, job] : found_.jobs) limit = std::max(limit, job.max_docs);
  }
  auto documents = CountCorpusDocuments(inputs, limit);
  if (!documents) {
    Fault("", "cannot read the corpus " + named_by + " names (" + documents.error() +
                  "); if it moved, give its files with --data");
    return;
  }
  tally_.emplace(*documents, options_.listed_ids);
  report_.coverage_checked = true;
  corpus_inputs_ = std::move(inputs);
}

void Verifier::CheckCorpusDigests() {
  if (!tally_) return;
  for (VerifyFinding& fault : FindChangedFolders(found_.folders, corpus_inputs_)) {
    report_.faults.push_back(std::move(fault));
  }
}

void Verifier::Record(const JobFolder& folder, int64_t doc_id, int source,
                      const std::string& place) {
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

void Verifier::CheckCoverage() {
  if (!tally_) return;
  auto expected = [&](int64_t doc_id) {
    if (found_.single_folder) {
      const JobFolder& folder = found_.folders.front();
      // A leased folder holds the chunks its host was granted: alone, it answers for
      // those only.
      if (folder.role.leased && folder.output.lists_chunks) {
        return folder.output.chunks.contains(folder.output.chunk_rule.ChunkOf(doc_id));
      }
      return (folder.max_docs < 0 || doc_id < folder.max_docs) && folder.role.owns(doc_id);
    }
    for (const auto& [name, job] : found_.jobs) {
      if ((job.max_docs < 0 || doc_id < job.max_docs) &&
          found_.folders[job.folders.front()].role.job_owns(doc_id)) {
        return true;
      }
    }
    return false;
  };
  auto excused = [&](int64_t doc_id) {
    if (!options_.allow_incomplete) return false;
    return std::any_of(found_.folders.begin(), found_.folders.end(), [&](const JobFolder& folder) {
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
  auto found = FindJobFolders(options_.out_dir, options_.role, options_.allow_incomplete,
                              &report_.faults, &report_.warnings);
  if (!found) return std::unexpected(found.error());
  found_ = std::move(*found);
  if (found_.folders.empty()) return report_;  // every metadata.json was unusable: all reported
  CountCorpus();
  CheckCorpusDigests();
  for (JobFolder& folder : found_.folders) CheckFolder(folder);
  CheckCoverage();
  CheckJobLatents();
  return report_;
}

void Verifier::CheckJobLatents() {
  if (found_.single_folder) return;
  std::vector<std::string> host_dirs;
  for (const JobFolder& folder : found_.folders) host_dirs.push_back(folder.output.path);
  JobLatentsCheck check = CheckJobLatentsFile(options_.out_dir, host_dirs);
  if (check.note.empty()) return;
  if (check.agrees) {
    report_.warnings.push_back({kJobLatentsFile, std::move(check.note)});
  } else {
    Fault(kJobLatentsFile, std::move(check.note));
  }
}

}  // namespace output_verifier_internal

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
  return output_verifier_internal::Verifier(options).Run();
}

}  // namespace actex
