// Each host folder's part of VerifyOutput: its listed shards, their chunks and latent
// examples, and the shards uploads.jsonl says were uploaded and deleted.
#include <algorithm>
#include <map>
#include <set>

#include "storage/examples_check.h"
#include "storage/non_finite_sites.h"
#include "storage/output_verifier_internal.h"
#include "storage/shard_check.h"

namespace actex::output_verifier_internal {

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

}  // namespace actex::output_verifier_internal
