#include "storage/document_tally.h"

#include <algorithm>
#include <iterator>

#include "storage/corpus_reader.h"
#include "storage/line_reader.h"
#include "storage/parquet_corpus_file.h"

namespace actex {

namespace {

// Notes kept per sampled id: enough to show where a duplicate lives.
constexpr size_t kMaxNotesPerId = 4;

}  // namespace

std::expected<int64_t, std::string> CountCorpusDocuments(const std::vector<std::string>& inputs,
                                                         int64_t limit) {
  // Open expands the inputs exactly as an extraction does, and reads nothing yet.
  CorpusOptions options;
  options.inputs = inputs;
  auto corpus = CorpusReader::Open(options);
  if (!corpus) return std::unexpected(corpus.error());
  int64_t documents = 0;
  for (const std::string& file : (*corpus)->files()) {
    auto parquet = IsParquetInput(file);
    if (!parquet) return std::unexpected(parquet.error());
    if (*parquet) {  // one document per row, as the footer counts them
      auto rows = parquet::CountParquetRows(file);
      if (!rows) return std::unexpected("parquet file " + file + ": " + rows.error());
      documents += *rows;
      if (limit >= 0 && documents >= limit) return limit;
      continue;
    }
    // A line limit of 0 keeps no line text: every line is only counted.
    auto lines = LineReader::Open(file, /*max_line_bytes=*/0);
    if (!lines) return std::unexpected(lines.error());
    while (limit < 0 || documents < limit) {
      auto line = (*lines)->Next();
      if (!line) return std::unexpected(line.error());
      if (!line->has_value()) break;
      ++documents;
    }
    if (limit >= 0 && documents >= limit) break;
  }
  return documents;
}

void IdSample::Add(int64_t id, const std::string& note) {
  auto found = ids_.find(id);
  if (found == ids_.end()) {
    if (capacity_ == 0) return;
    if (ids_.size() == capacity_) {
      if (id > ids_.rbegin()->first) return;
      ids_.erase(std::prev(ids_.end()));
    }
    found = ids_.emplace(id, std::vector<std::string>()).first;
  }
  auto& notes = found->second;
  // A document repeated within one shard is one place, not several.
  if (notes.size() < kMaxNotesPerId && (notes.empty() || notes.back() != note)) {
    notes.push_back(note);
  }
}

DocumentTally::DocumentTally(int64_t corpus_documents, size_t listed_ids)
    : first_seen_(static_cast<size_t>(std::max<int64_t>(corpus_documents, 0)), 0),
      duplicated_(listed_ids) {}

int DocumentTally::AddSource(std::string name, bool rejected) {
  sources_.emplace_back(std::move(name), rejected);
  return static_cast<int>(sources_.size()) - 1;
}

void DocumentTally::Record(int64_t doc_id, int source) {
  uint32_t& seen = first_seen_[static_cast<size_t>(doc_id)];
  if (seen == 0) {
    seen = static_cast<uint32_t>(source) + 1;
    return;
  }
  if ((seen & kSeenAgain) == 0) {
    duplicated_.Add(doc_id, sources_[(seen & ~kSeenAgain) - 1].first);
    seen |= kSeenAgain;
  }
  duplicated_.Add(doc_id, sources_[static_cast<size_t>(source)].first);
}

CoverageCounts DocumentTally::Count(const std::function<bool(int64_t)>& expected,
                                    const std::function<bool(int64_t)>& excused,
                                    IdSample* missing) const {
  CoverageCounts counts;
  for (size_t index = 0; index < first_seen_.size(); ++index) {
    const auto doc_id = static_cast<int64_t>(index);
    const uint32_t seen = first_seen_[index];
    if ((seen & kSeenAgain) != 0) {
      ++counts.duplicated;
      if (expected(doc_id)) ++counts.documents;
      continue;
    }
    if (!expected(doc_id)) continue;
    ++counts.documents;
    if (seen == 0) {
      if (excused(doc_id)) {
        ++counts.pending;
      } else {
        ++counts.missing;
        missing->Add(doc_id, "");
      }
    } else if (sources_[seen - 1].second) {
      ++counts.rejected;
    } else {
      ++counts.written;
    }
  }
  return counts;
}

}  // namespace actex
