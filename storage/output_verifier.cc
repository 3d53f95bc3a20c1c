#include "storage/output_verifier.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "storage/corpus_read_note.h"
#include "storage/examples_check.h"
#include "storage/folder_digests.h"
#include "storage/job_latents.h"
#include "storage/non_finite_sites.h"
#include "storage/shard_check.h"
#include "storage/uploaded_shards.h"

namespace actex {

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

// Per listed chunk of a folder, how many of its documents were seen there (written
// or rejected), and the chunks of shards that could not be read.
struct ChunkAnswers {
  std::map<int64_t, int64_t> documents;
  std::set<int64_t> unread;
  void Unread(const ShardEntry& shard) { unread.insert(shard.chunks.begin(), shard.chunks.end()); }
};

class Verifier {
 public:
  explicit Verifier(const VerifyOptions& options)
      : options_(options), unexpected_(options.listed_ids) {}

  std::expected<VerifyReport, std::string> Run();

 private:
  void CountCorpus();
  // Each folder's listed chunk digests against the corpus read now (folder_digests.h).
  void CheckCorpusDigests();
  void CheckFolder(JobFolder& folder);
  // Records the documents inferred for the folder's listed shard `index`, uploaded
  // and deleted locally, as seen in tally source `source`; `rejected` (sorted) holds
  // the folder's rejected ids inside its deleted shards' ranges.
  void RecordDeletedShard(const JobFolder& folder, size_t index, int source,
                          const std::vector<int64_t>& rejected, ChunkAnswers* answered);
  // Every document of the folder's shard `index` must be of a chunk the shard lists;
  // counts them per chunk in `answered`.
  void CheckShardChunks(const OutputFolder& output, size_t index,
                        const std::vector<int64_t>& documents, ChunkAnswers* answered);
  // The shard's latent examples file (examples_check.h), recomputed from the shard when
  // it is `shard_whole`; missing, a fault unless uploads.jsonl vouches for its deletion.
  void CheckExamples(const std::string& label, const ShardEntry& shard,
                     const FolderUploads& uploads, bool shard_whole);
  // A listed chunk is whole: each of its documents is written or rejected in this
  // folder. Chunks of a shard that could not be read are faulted as that shard.
  void CheckChunksWhole(const OutputFolder& output, const ChunkAnswers& answered);
  // One occurrence of `doc_id` in `folder`, seen in `place` (tally source `source`).
  void Record(const JobFolder& folder, int64_t doc_id, int source, const std::string& place);
  void CheckCoverage();
  // OUT/latents.safetensors against the host folders' latent examples.
  void CheckJobLatents();
  void Fault(std::string file, std::string problem) {
    report_.faults.push_back({std::move(file), std::move(problem)});
  }

  const VerifyOptions& options_;
  VerifyReport report_;
  JobFolders found_;
  std::optional<DocumentTally> tally_;
  std::vector<std::string> corpus_inputs_;  // as CountCorpus read them
  IdSample unexpected_;
};

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

void Verifier::CheckFolder(JobFolder& folder) {
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
  ChunkAnswers answered;
  std::vector<std::pair<int64_t, int64_t>> deleted_ranges;
  for (size_t i = 0; i < output.shards.size(); ++i) {
    const std::string place = output.label + "/" + output.shard_files[i];
    ShardCheck check = CheckShard(output.shards[i]);
    if (output.shards[i].examples) {
      CheckExamples(output.label, output.shards[i], uploads, /*shard_whole=*/check.faults.empty());
    }
    if (check.missing) {
      MissingShardVerdict verdict =
          JudgeMissingShard(uploads, output.shard_files[i], output.shards[i]);
      if (!verdict.uploaded_deleted) {
        Fault(place, std::move(verdict.problem));
        answered.Unread(output.shards[i]);
        continue;
      }
      report_.warnings.push_back({place, std::move(verdict.problem)});
      ++summary.uploaded_deleted;
      if (!tally_) continue;
      deleted.emplace_back(i, tally_->AddSource(place, /*rejected=*/false));
      deleted_ranges.emplace_back(output.shards[i].first_doc_id, output.shards[i].last_doc_id);
      continue;
    }
    // A shard already at odds with its listing is faulted for that alone.
    const bool at_odds = !check.faults.empty();
    if (!check.documents_read || at_odds) answered.Unread(output.shards[i]);
    for (auto& problem : check.faults) Fault(place, std::move(problem));
    if (!check.documents_read) continue;
    if (!at_odds) CheckShardChunks(output, i, check.documents, &answered);
    if (!tally_) continue;
    const int source = tally_->AddSource(place, /*rejected=*/false);
    for (int64_t doc_id : check.documents) Record(folder, doc_id, source, place);
  }
  const DocIdRanges in_deleted(std::move(deleted_ranges));
  std::vector<int64_t> rejected_in_deleted;
  const std::string rejects = output.label + "/rejects.jsonl";
  const int source = tally_ ? tally_->AddSource(rejects, /*rejected=*/true) : -1;
  int64_t rejects_of_unlisted_chunks = 0;
  summary.rejected = ReadRejects(
      output,
      [&](int64_t doc_id) {
        if (output.lists_chunks && !output.chunks.contains(output.chunk_rule.ChunkOf(doc_id))) {
          ++rejects_of_unlisted_chunks;  // its chunk is computed again, rejects and all
          return;
        }
        ++answered.documents[output.chunk_rule.ChunkOf(doc_id)];
        Record(folder, doc_id, source, rejects);
        if (in_deleted.Contains(doc_id)) rejected_in_deleted.push_back(doc_id);
      },
      &report_.faults);
  summary.rejected -= rejects_of_unlisted_chunks;
  if (rejects_of_unlisted_chunks > 0) {
    report_.warnings.push_back(
        {rejects, std::to_string(rejects_of_unlisted_chunks) +
                      " rejects of chunks no shard lists, left by a run that stopped: not "
                      "counted (a resume removes them)"});
  }
  std::sort(rejected_in_deleted.begin(), rejected_in_deleted.end());
  for (const auto& [index, shard_source] : deleted) {
    RecordDeletedShard(folder, index, shard_source, rejected_in_deleted, &answered);
  }
  // (Without the corpus, deleted shards' documents were not inferred.)
  if (tally_ || summary.uploaded_deleted == 0) CheckChunksWhole(output, answered);
  for (auto& warning : FindUnlistedFiles(output)) report_.warnings.push_back(std::move(warning));
  // Values that are NaN or infinite as stored are a property of the activations, not
  // a fault of the output: a warning (the statistics count them).
  if (auto non_finite = ReadNonFiniteSites(output.path + "/metadata.json");
      non_finite && !non_finite->sites.empty()) {
    report_.warnings.push_back(
        {output.label + "/metadata.json",
         "activations not finite as stored in " + non_finite->dtype + ": " +
             DescribeNonFinite(non_finite->sites) +
             " (NaN weights, or values beyond the dtype's range: float16 ends at 65504)"});
  }
  report_.shards += summary.shards;
  report_.bytes += summary.bytes;
  report_.uploaded_deleted += summary.uploaded_deleted;
  report_.folders.push_back(summary);
}

void Verifier::CheckExamples(const std::string& label, const ShardEntry& shard,
                             const FolderUploads& uploads, bool shard_whole) {
  const ListedShard& listed = *shard.examples;
  const std::string place = label + "/" + listed.file;
  ExamplesCheck check = CheckShardExamples(shard, shard_whole);
  for (auto& problem : check.faults) Fault(place, std::move(problem));
  if (!check.missing) return;
  // Judged as a shard of the examples file's bytes and crc32 would be.
  ShardEntry as_listed = shard;
  as_listed.bytes = listed.bytes;
  as_listed.crc32 = static_cast<uint32_t>(std::stoul(listed.crc32, nullptr, 16));
  MissingShardVerdict verdict = JudgeMissingShard(uploads, listed.file, as_listed);
  if (verdict.uploaded_deleted) {
    report_.warnings.push_back({place, std::move(verdict.problem)});
  } else {
    Fault(place, std::move(verdict.problem));
  }
}

void Verifier::CheckShardChunks(const OutputFolder& output, size_t index,
                                const std::vector<int64_t>& documents, ChunkAnswers* answered) {
  if (!output.lists_chunks) return;
  const ShardEntry& shard = output.shards[index];
  const std::set<int64_t> listed(shard.chunks.begin(), shard.chunks.end());
  for (int64_t doc_id : documents) {
    const int64_t chunk = output.chunk_rule.ChunkOf(doc_id);
    if (listed.contains(chunk)) {
      ++answered->documents[chunk];
      continue;
    }
    Fault(output.label + "/" + output.shard_files[index],
          "holds document " + std::to_string(doc_id) + " of chunk " + std::to_string(chunk) +
              ", which its listing does not name");
    return;
  }
}

void Verifier::CheckChunksWhole(const OutputFolder& output, const ChunkAnswers& answered) {
  int64_t broken = 0;
  std::string first;
  for (const auto& [chunk, documents] : output.chunks) {
    if (answered.unread.contains(chunk)) continue;
    auto seen = answered.documents.find(chunk);
    const int64_t count = seen == answered.documents.end() ? 0 : seen->second;
    if (count == documents) continue;
    if (broken++ == 0) {
      first = "chunk " + std::to_string(chunk) + " lists " + std::to_string(documents) +
              " documents, the shards and rejects.jsonl hold " + std::to_string(count);
    }
  }
  if (broken > 0) {
    Fault(output.label + "/metadata.json",
          std::to_string(broken) + " listed chunks are not whole (" + first + ")");
  }
}

void Verifier::RecordDeletedShard(const JobFolder& folder, size_t index, int source,
                                  const std::vector<int64_t>& rejected, ChunkAnswers* answered) {
  const ShardEntry& shard = folder.output.shards[index];
  const std::string place = folder.output.label + "/" + folder.output.shard_files[index];
  const std::string range =
      std::to_string(shard.first_doc_id) + ".." + std::to_string(shard.last_doc_id);
  if (shard.last_doc_id >= tally_->corpus_documents()) {
    // Also bounds the walk over the range below.
    answered->Unread(shard);
    Fault(place, "uploaded and deleted locally, and metadata.json lists doc ids " + range +
                     ", beyond the corpus's " + std::to_string(tally_->corpus_documents()) +
                     " documents: its documents cannot be inferred");
    return;
  }
  // Its documents: of the chunks it lists, or (older outputs) of the folder's share.
  const std::set<int64_t> chunks(shard.chunks.begin(), shard.chunks.end());
  const ChunkRule& rule = folder.output.chunk_rule;
  const std::vector<int64_t> documents =
      folder.output.lists_chunks
          ? InferDeletedShardDocuments(
                shard, [&](int64_t doc_id) { return chunks.contains(rule.ChunkOf(doc_id)); },
                rejected)
          : InferDeletedShardDocuments(shard, folder.role.owns, rejected);
  if (static_cast<int64_t>(documents.size()) != shard.docs) {
    // The folder's rejects or share do not match what the writer did: no document
    // of the shard can be vouched for, so none is counted as written.
    answered->Unread(shard);
    Fault(place, "uploaded and deleted locally: inferred " + std::to_string(documents.size()) +
                     " documents from its doc ids " + range +
                     (folder.output.lists_chunks ? " (its chunks" : " (the folder's share") +
                     ", less its rejects.jsonl), metadata.json lists " +
                     std::to_string(shard.docs) + "; none of them is counted as written");
    return;
  }
  for (int64_t doc_id : documents) {
    ++answered->documents[rule.ChunkOf(doc_id)];
    Record(folder, doc_id, source, place);
  }
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
