#include "storage/corpus_size.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>

#include "storage/file_io.h"
#include "storage/parquet_corpus_file.h"

namespace actex {

nlohmann::json CorpusSize::ToJson() const {
  nlohmann::json size = {{"parquet_files", parquet_files},
                         {"parquet_rows", parquet_rows},
                         {"jsonl_files", jsonl_files},
                         {"jsonl_bytes", jsonl_bytes}};
  if (auto known = documents()) {
    size["documents"] = *known;
  } else {
    size["documents"] = nullptr;
  }
  return size;
}

std::optional<int64_t> CorpusSize::EstimateDocuments(const CorpusProgress& progress) const {
  if (jsonl_files == 0) return parquet_rows;
  if (progress.jsonl_bytes <= 0) return std::nullopt;
  if (progress.jsonl_bytes >= jsonl_bytes) return parquet_rows + progress.jsonl_docs;
  const double scale = static_cast<double>(jsonl_bytes) / static_cast<double>(progress.jsonl_bytes);
  return parquet_rows + std::llround(static_cast<double>(progress.jsonl_docs) * scale);
}

std::expected<CorpusSize, std::string> MeasureCorpus(const std::vector<std::string>& files,
                                                     const std::string& text_field) {
  CorpusSize size;
  for (const std::string& file : files) {
    auto parquet = IsParquetInput(file);
    if (!parquet) return std::unexpected(parquet.error());
    if (*parquet) {
      auto reader = parquet::ParquetFileReader::Open(file, text_field);
      if (!reader) return std::unexpected("parquet file " + file + ": " + reader.error());
      ++size.parquet_files;
      size.parquet_rows += (*reader)->rows();
      continue;
    }
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0)
      return std::unexpected(OsError("cannot stat", file, errno));
    ++size.jsonl_files;
    size.jsonl_bytes += info.st_size;
  }
  return size;
}

}  // namespace actex
