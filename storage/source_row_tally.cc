#include "storage/source_row_tally.h"

#include <sodium.h>

#include <algorithm>

namespace actex {
namespace {

// Examples each kind of fault spells out; the rest are counted.
constexpr size_t kFaultsPerClass = 10;
// Source rows read from a shard at a time.
constexpr int64_t kSourceRowsPerRead = 4096;

uint64_t RowHash(const uint8_t* record, int64_t bytes) {
  static const unsigned char kKey[crypto_shorthash_KEYBYTES] = {'a', 'c', 't', 'e', 'x'};
  uint64_t hash;
  crypto_shorthash(reinterpret_cast<unsigned char*>(&hash), record,
                   static_cast<unsigned long long>(bytes), kKey);
  return hash;
}

std::string RowName(int64_t doc_id, int64_t position) {
  return "doc " + std::to_string(doc_id) + " position " + std::to_string(position);
}

}  // namespace

void SourceRowTally::FaultClass::Add(const std::string& where) {
  if (examples.size() < kFaultsPerClass) examples.push_back(where);
  ++count;
}

void SourceRowTally::FaultClass::Report(std::vector<std::string>* faults) const {
  if (count == 0) return;
  std::string line = std::to_string(count) + " " + what + ": ";
  for (size_t i = 0; i < examples.size(); ++i) line += (i ? ", " : "") + examples[i];
  if (count > static_cast<int64_t>(examples.size())) line += ", ...";
  faults->push_back(line);
}

SourceRowTally::SourceRowTally(const RecordLayout& layout, int64_t rows)
    : layout_(layout),
      hashes_(static_cast<size_t>(rows)),
      states_(static_cast<size_t>(rows), RowState::kUnseen) {}

std::expected<SourceRowTally, std::string> SourceRowTally::Read(const SourceOutput& source,
                                                                const RecordLayout& layout,
                                                                const std::set<int32_t>& skip_ids,
                                                                const std::string& scratch_path) {
  SourceRowTally tally(layout, source.tokens);
  std::vector<uint8_t> records;
  int64_t& row = tally.rows_;
  for (const SourceShard& shard : source.shards) {
    auto rows = SourceShardRows::Open(shard, source, scratch_path);
    if (!rows) return std::unexpected("the source: " + rows.error());
    for (int64_t begin = 0; begin < shard.tokens; begin += kSourceRowsPerRead) {
      const int64_t count = std::min(kSourceRowsPerRead, shard.tokens - begin);
      records.resize(static_cast<size_t>(count * layout.record_bytes));
      if (auto read = (*rows)->Read(begin, count, layout, records.data()); !read) {
        return std::unexpected("the source: " + read.error());
      }
      for (int64_t i = 0; i < count; ++i, ++row) {
        const uint8_t* record = records.data() + i * layout.record_bytes;
        const int64_t doc_id = layout.doc_id(record);
        if (tally.documents_.empty() || tally.documents_.back().doc_id != doc_id) {
          tally.documents_.push_back({doc_id, row, 0});
        }
        ++tally.documents_.back().tokens;
        tally.hashes_[row] = RowHash(record, layout.record_bytes);
        if (skip_ids.count(layout.token_id(record))) {
          tally.states_[row] = RowState::kSkipped;
          ++tally.skipped_;
        }
      }
    }
  }
  std::vector<DocumentRows>& documents = tally.documents_;
  std::sort(documents.begin(), documents.end());
  for (size_t i = 1; i < documents.size(); ++i) {
    if (documents[i].doc_id == documents[i - 1].doc_id) {
      return std::unexpected("the source holds doc " + std::to_string(documents[i].doc_id) +
                             " twice: run actex verify on it");
    }
  }
  return tally;
}

int64_t SourceRowTally::Find(int64_t doc_id, int64_t position) const {
  auto doc = std::lower_bound(documents_.begin(), documents_.end(), DocumentRows{doc_id});
  if (doc == documents_.end() || doc->doc_id != doc_id || position < 0 || position >= doc->tokens) {
    return -1;
  }
  return doc->first_row + position;
}

void SourceRowTally::Match(const uint8_t* record, const std::string& file) {
  const int64_t doc_id = layout_.doc_id(record);
  const int64_t position = layout_.position(record);
  const std::string where = RowName(doc_id, position);
  const int64_t source_row = Find(doc_id, position);
  if (source_row < 0) {
    foreign_.Add(where + " (" + file + ")");
    return;
  }
  RowState& state = states_[source_row];
  if (state == RowState::kSkipped) {
    skipped_rows_.Add(where);
  } else if (state == RowState::kSeen) {
    duplicated_.Add(where);
  } else {
    state = RowState::kSeen;
    if (RowHash(record, layout_.record_bytes) != hashes_[source_row]) {
      differing_.Add(where + " (" + file + ")");
    }
  }
}

void SourceRowTally::ReportFaults(std::vector<std::string>* faults) const {
  FaultClass missing{"source rows missing"};
  for (const DocumentRows& doc : documents_) {
    for (int64_t p = 0; p < doc.tokens; ++p) {
      if (states_[doc.first_row + p] == RowState::kUnseen) missing.Add(RowName(doc.doc_id, p));
    }
  }
  const FaultClass* kinds[] = {&foreign_, &skipped_rows_, &duplicated_, &differing_, &missing};
  for (const FaultClass* kind : kinds) kind->Report(faults);
}

}  // namespace actex
