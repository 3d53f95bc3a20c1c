#include "storage/chunk_reader.h"

#include <algorithm>

namespace actex {

std::expected<std::unique_ptr<ChunkReader>, std::string> ChunkReader::Open(CorpusOptions options,
                                                                           int64_t chunk_docs) {
  std::unique_ptr<ChunkReader> chunks(new ChunkReader());
  chunks->chunk_docs_ = chunk_docs;
  chunks->options_ = std::move(options);
  chunks->options_.wants_docs = [wanted = chunks->wanted_](int64_t first, int64_t last) {
    return last >= wanted->first && first < wanted->end;
  };
  if (auto opened = chunks->Reopen(); !opened) return std::unexpected(opened.error());
  return chunks;
}

ChunkReader::~ChunkReader() = default;

std::expected<void, std::string> ChunkReader::Reopen() {
  pending_.reset();
  auto reader = CorpusReader::Open(options_);
  if (!reader) return std::unexpected(reader.error());
  reader_ = std::move(*reader);
  return {};
}

std::expected<void, std::string> ChunkReader::Seek(int64_t chunk) {
  wanted_->first = chunk * chunk_docs_;
  wanted_->end = wanted_->first + chunk_docs_;
  chunk_cut_by_end_ = false;
  const int64_t position = pending_ ? pending_->doc_id : reader_->progress().next_doc_id;
  if (wanted_->first < position) return Reopen();
  return {};
}

std::expected<std::optional<CorpusRecord>, std::string> ChunkReader::Next() {
  while (true) {
    CorpusRecord record;
    if (pending_) {
      record = std::move(*pending_);
      pending_.reset();
    } else {
      auto next = reader_->Next();
      if (!next) return std::unexpected(next.error());
      if (!*next) {
        corpus_documents_ = reader_->progress().next_doc_id;
        chunk_cut_by_end_ = true;
        return std::nullopt;
      }
      record = std::move(**next);
    }
    if (record.doc_id < wanted_->first) continue;
    if (record.doc_id >= wanted_->end) {
      pending_ = std::move(record);
      return std::nullopt;
    }
    return record;
  }
}

int64_t ChunkReader::chunk_documents() const {
  if (!chunk_cut_by_end_) return chunk_docs_;
  return std::clamp<int64_t>(*corpus_documents_ - wanted_->first, 0, chunk_docs_);
}

}  // namespace actex
