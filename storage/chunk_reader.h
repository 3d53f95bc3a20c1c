#ifndef ACTEX_STORAGE_CHUNK_READER_H_
#define ACTEX_STORAGE_CHUNK_READER_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "storage/chunk_rule.h"
#include "storage/corpus_reader.h"

namespace actex {

// Reads the corpus one chunk at a time, in whatever order chunks are asked for: a
// host of a leased job gets chunks as the coordinator grants them, mostly rising
// but now and then one that a lost host gave back, each cut by `rule`
// (storage/chunk_rule.h). Reading forward passes over the documents between chunks
// (a Parquet row group without a wanted one is not even read); a chunk behind the
// reading position reopens the corpus.
class ChunkReader {
 public:
  // `options.wants_docs` is replaced by the reader's own.
  static std::expected<std::unique_ptr<ChunkReader>, std::string> Open(CorpusOptions options,
                                                                       ChunkRule rule);

  // Starts reading chunk `chunk`.
  std::expected<void, std::string> Seek(int64_t chunk);
  // The next record of that chunk, rejected lines included; nullopt once the chunk
  // (or the corpus) ended. Errors as CorpusReader::Next.
  std::expected<std::optional<CorpusRecord>, std::string> Next();
  // After Next returned nullopt: how many doc ids the chunk has (0 when it lies past
  // the corpus's end).
  int64_t chunk_documents() const;
  // How many doc ids the corpus has, once reading reached its end.
  std::optional<int64_t> corpus_documents() const { return corpus_documents_; }
  // How far the reader has read or passed over the corpus (it restarts from the first
  // document when a chunk behind it is asked for).
  CorpusProgress progress() const { return reader_->progress(); }

  ~ChunkReader();

 private:
  ChunkReader() = default;
  struct Wanted {
    int64_t first = 0;  // doc ids [first, end) of the chunk being read
    int64_t end = 0;
  };
  std::expected<void, std::string> Reopen();

  CorpusOptions options_;
  ChunkRule rule_;
  int64_t chunk_ = 0;  // the chunk being read
  std::shared_ptr<Wanted> wanted_ = std::make_shared<Wanted>();
  std::unique_ptr<CorpusReader> reader_;
  std::optional<CorpusRecord> pending_;  // the first record past the last chunk read
  std::optional<int64_t> corpus_documents_;
  bool chunk_cut_by_end_ = false;  // the chunk being read ended with the corpus
};

}  // namespace actex

#endif  // ACTEX_STORAGE_CHUNK_READER_H_
