#include "storage/chunk_reader.h"

namespace actex {

std::expected<std::unique_ptr<ChunkReader>, std::string> ChunkReader::Open(CorpusOptions options,
                                                                           ChunkRule rule) {
  std::unique_ptr<ChunkReader> chunks(new ChunkReader());
  chunks->rule_ = rule;
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
  chunk_ = chunk;
  wanted_->first = rule_.FirstDoc(chunk);
  wanted_->end = rule_.EndDoc(chunk);
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
  if (!chunk_cut_by_end_) return rule_.docs_per_chunk();
  return rule_.DocsIn(chunk_, *corpus_documents_);
}

}  // namespace actex
