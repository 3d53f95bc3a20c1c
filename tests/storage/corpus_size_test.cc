// What is known of a corpus's size before and while it is read: Parquet rows from
// footers, JSONL documents estimated from the bytes read.

#include "storage/corpus_size.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <string>

#include "storage/corpus_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

const std::string kParquet = std::string(ACTEX_FIXTURES_DIR) + "/parquet/fineweb-zstd-v2.parquet";

int64_t LinesOf(const std::string& path) {
  std::ifstream in(path);
  int64_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

// `documents` JSONL lines of about `line_bytes` each.
std::string JsonlOf(int documents, int line_bytes) {
  std::string text;
  for (int doc = 0; doc < documents; ++doc) {
    text += R"({"text": ")" + std::string(line_bytes - 13, 'a' + doc % 26) + "\"}\n";
  }
  return text;
}

TEST(CorpusSize, CountsParquetRowsFromFootersAndJsonlInBytes) {
  TempDir dir;
  const std::string jsonl = JsonlOf(10, 100);
  WriteBytes(dir.File("a.jsonl"), jsonl);
  auto size = MeasureCorpus({kParquet, dir.File("a.jsonl")}, "text");
  ASSERT_TRUE(size.has_value()) << size.error();
  const int64_t rows =
      LinesOf(std::string(ACTEX_FIXTURES_DIR) + "/parquet/fineweb-zstd-v2.expected.jsonl");
  EXPECT_EQ(size->parquet_files, 1);
  EXPECT_EQ(size->parquet_rows, rows);
  EXPECT_EQ(size->jsonl_files, 1);
  EXPECT_EQ(size->jsonl_bytes, static_cast<int64_t>(jsonl.size()));
  EXPECT_EQ(size->documents(), std::nullopt);
  EXPECT_EQ(size->ToJson()["documents"], nullptr);
}

TEST(CorpusSize, AllParquetIsKnownExactlyUpFront) {
  auto size = MeasureCorpus({kParquet, kParquet}, "text");
  ASSERT_TRUE(size.has_value()) << size.error();
  EXPECT_EQ(size->parquet_rows, 2 * LinesOf(std::string(ACTEX_FIXTURES_DIR) +
                                            "/parquet/fineweb-zstd-v2.expected.jsonl"));
  EXPECT_EQ(size->documents(), size->parquet_rows);
  EXPECT_EQ(size->EstimateDocuments({}), size->parquet_rows);
}

TEST(CorpusSize, RefusesAParquetFileWithoutTheColumnNamingBoth) {
  auto size = MeasureCorpus({kParquet}, "content");
  ASSERT_FALSE(size.has_value());
  EXPECT_THAT(size.error(), HasSubstr("fineweb-zstd-v2.parquet"));
  EXPECT_THAT(size.error(), HasSubstr("content"));
}

TEST(CorpusSize, EstimatesJsonlDocumentsFromTheShareOfBytesRead) {
  CorpusSize size{.parquet_files = 1, .parquet_rows = 50, .jsonl_files = 2, .jsonl_bytes = 4000};
  EXPECT_EQ(size.EstimateDocuments({.next_doc_id = 50}), std::nullopt);
  // A quarter of the bytes held 30 documents: about 120 in all.
  EXPECT_EQ(size.EstimateDocuments({.next_doc_id = 80, .jsonl_docs = 30, .jsonl_bytes = 1000}),
            50 + 120);
  // Every byte read: the count is exact.
  EXPECT_EQ(size.EstimateDocuments({.next_doc_id = 167, .jsonl_docs = 117, .jsonl_bytes = 4000}),
            50 + 117);
}

TEST(CorpusReaderProgress, CountsJsonlDocumentsAndFileBytesAsTheyAreRead) {
  TempDir dir;
  // Files larger than a read chunk (1 MiB), so progress is seen inside a file.
  const std::string plain = JsonlOf(3000, 500);
  WriteBytes(dir.File("a.jsonl"), plain);
  gzFile gz = gzopen(dir.File("b.jsonl.gz").c_str(), "wb1");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, plain.data(), static_cast<unsigned>(plain.size())),
            static_cast<int>(plain.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  const std::vector<std::string> files = {kParquet, dir.File("a.jsonl"), dir.File("b.jsonl.gz")};
  auto size = MeasureCorpus(files, "text");
  ASSERT_TRUE(size.has_value()) << size.error();
  auto reader = CorpusReader::Open({.inputs = files});
  ASSERT_TRUE(reader.has_value()) << reader.error();

  int64_t records = 0;
  while (true) {
    auto record = (*reader)->Next();
    ASSERT_TRUE(record.has_value()) << record.error();
    if (!*record) break;
    ++records;
    const CorpusProgress progress = (*reader)->progress();
    EXPECT_EQ(progress.next_doc_id, records);
    const int64_t jsonl_docs = std::max<int64_t>(0, records - size->parquet_rows);
    EXPECT_EQ(progress.jsonl_docs, jsonl_docs);
    // A plain file's bytes are counted exactly, line by line.
    if (jsonl_docs <= 3000) {
      EXPECT_EQ(progress.jsonl_bytes, jsonl_docs * 500);
    }
  }
  const CorpusProgress end = (*reader)->progress();
  EXPECT_EQ(end.jsonl_docs, 6000);
  EXPECT_EQ(end.jsonl_bytes, size->jsonl_bytes);
  EXPECT_EQ(size->EstimateDocuments(end), size->parquet_rows + 6000);
}

TEST(CorpusReaderProgress, EstimateHalfWayThroughPlainJsonlIsTheWholeCount) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), JsonlOf(3000, 500));
  WriteBytes(dir.File("b.jsonl"), JsonlOf(1000, 1500));
  const std::vector<std::string> files = {dir.File("a.jsonl"), dir.File("b.jsonl")};
  auto size = MeasureCorpus(files, "text");
  ASSERT_TRUE(size.has_value()) << size.error();
  auto reader = CorpusReader::Open({.inputs = files});
  ASSERT_TRUE(reader.has_value()) << reader.error();
  for (int doc = 0; doc < 2000; ++doc) ASSERT_TRUE((*reader)->Next().has_value());
  // Uniform lines: two thirds of a.jsonl is a third of the bytes, so about 6000
  // documents, though b.jsonl holds only 1000 (it is a byte estimate).
  EXPECT_EQ(size->EstimateDocuments((*reader)->progress()), 6000);
}

}  // namespace
}  // namespace actex
