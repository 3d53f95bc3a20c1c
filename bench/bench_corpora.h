#ifndef ACTEX_BENCH_BENCH_CORPORA_H_
#define ACTEX_BENCH_BENCH_CORPORA_H_

#include <cstdint>
#include <expected>
#include <string>

namespace actex {

// `documents` lines of {"input_ids": [...]} with `tokens_per_document` ids drawn
// uniformly from [0, vocab) by a fixed generator.
std::expected<void, std::string> WritePretokenizedCorpus(const std::string& path, int64_t documents,
                                                         int tokens_per_document, int vocab);

// `documents` lines of {"text": ...}, each a few hundred English-like words (far more
// than 256 tokens with any byte-level BPE), from a fixed generator.
std::expected<void, std::string> WriteTextCorpus(const std::string& path, int64_t documents);
// The same documents as WriteTextCorpus's, as a FineWeb-Edu-shaped Parquet file: snappy,
// row groups of 1000 rows, the text column after five other string columns.
std::expected<void, std::string> WriteTextParquet(const std::string& path, int64_t documents);

}  // namespace actex

#endif  // ACTEX_BENCH_BENCH_CORPORA_H_
