// Parquet corpus files read through CorpusReader, against the fixtures in
// tests/fixtures/parquet (written by third-party Parquet writers; README.md there
// says what each file holds and what a reader must do with it).
#include "storage/parquet_corpus_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "storage/corpus_reader.h"
#include "storage/document_tally.h"
#include "tests/storage/corpus_reading.h"
#include "tests/support/parquet_test_writer.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const std::string kDir = std::string(ACTEX_FIXTURES_DIR) + "/parquet/";

json Manifest() {
  std::ifstream in(kDir + "manifest.json");
  return json::parse(in);
}

std::vector<json> ExpectedRows(const std::string& name) {
  std::ifstream in(kDir + name);
  std::vector<json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  return rows;
}

// Checks one record against one expected row ({"text": ...} or {"input_ids": ...}).
void ExpectRecordMatches(const CorpusRecord& record, const json& expected, const std::string& field,
                         const std::string& context) {
  if (expected.contains("input_ids")) {
    const json& ids = expected["input_ids"];
    if (ids.is_null()) {
      EXPECT_EQ(record.reject_reason, "input_ids is null") << context;
    } else if (ids.empty()) {
      EXPECT_EQ(record.reject_reason, "input_ids is empty") << context;
    } else {
      EXPECT_EQ(record.reject_reason, "") << context;
      EXPECT_TRUE(record.pretokenized) << context;
      EXPECT_EQ(record.input_ids, ids.get<std::vector<int32_t>>()) << context;
    }
    return;
  }
  const json& text = expected["text"];
  if (text.is_null()) {
    EXPECT_EQ(record.reject_reason, "field \"" + field + "\" is null") << context;
  } else if (text.get<std::string>().empty()) {
    EXPECT_EQ(record.reject_reason, "field \"" + field + "\" is empty") << context;
  } else {
    EXPECT_EQ(record.reject_reason, "") << context;
    EXPECT_EQ(record.text, text.get<std::string>()) << context;  // the exact bytes
  }
}

TEST(ParquetCorpusFile, EveryGoodFixtureReadsToExactlyItsExpectedRows) {
  int files = 0;
  const json manifest = Manifest();
  for (const json& entry : manifest["files"]) {
    const std::string name = entry["file"];
    if (entry["kind"] == "broken" || name == "optional-delta-v2.parquet") continue;
    const std::string field = entry["value_column"] == "input_ids" ? "text" : entry["value_column"];
    ReadResult read = ReadAll({.inputs = {kDir + name}, .text_field = field});
    ASSERT_EQ(read.error, "") << name;
    std::vector<json> expected = ExpectedRows(entry["expected"]);
    ASSERT_EQ(read.records.size(), expected.size()) << name;
    ASSERT_EQ(expected.size(), entry["rows"].get<size_t>()) << name;
    for (size_t i = 0; i < expected.size(); ++i) {
      const CorpusRecord& record = read.records[i];
      EXPECT_EQ(record.doc_id, static_cast<int64_t>(i)) << name;
      EXPECT_EQ(record.line, static_cast<int64_t>(i + 1)) << name;
      EXPECT_EQ(record.file, kDir + name);
      ExpectRecordMatches(record, expected[i], field, name + " row " + std::to_string(i));
    }
    ++files;
  }
  EXPECT_EQ(files, 13);
}

TEST(ParquetCorpusFile, KeepsLeadingBomAndNulBytesExactly) {
  ReadResult read = ReadAll({.inputs = {kDir + "fineweb-snappy-v1-dictfallback.parquet"}});
  ASSERT_EQ(read.error, "");
  bool bom = false, nul = false;
  for (const CorpusRecord& record : read.records) {
    bom |= record.text.starts_with("\xEF\xBB\xBF");
    nul |= record.text.find('\0') != std::string::npos;
  }
  EXPECT_TRUE(bom);
  EXPECT_TRUE(nul);
}

TEST(ParquetCorpusFile, UnsupportedEncodingIsAnErrorNamingFileAndEncoding) {
  const std::string path = kDir + "optional-delta-v2.parquet";
  ReadResult read = ReadAll({.inputs = {path}});
  EXPECT_TRUE(read.records.empty());
  EXPECT_THAT(read.error, HasSubstr("parquet file " + path + ": "));
  EXPECT_THAT(read.error, HasSubstr("unsupported encoding DELTA_BYTE_ARRAY"));
}

TEST(ParquetCorpusFile, EveryBrokenFixtureIsRefusedNamingFileAndCause) {
  const std::map<std::string, std::string> causes = {
      {"broken-truncated.parquet", "truncated or not a Parquet file: no PAR1 footer magic"},
      {"broken-footer-length.parquet", "footer length 2147483632 exceeds the file size 58919"},
      {"broken-footer-length-short.parquet", "footer is not valid Parquet metadata"},
      {"broken-bad-magic.parquet", "not a Parquet file: bad magic"},
      {"broken-empty.parquet", "empty file, not Parquet"},
      {"broken-zero-footer.parquet", "footer length 0"},
      {"broken-text-int64.parquet",
       "column \"text\" has physical type INT64, expected BYTE_ARRAY (string)"},
  };
  int files = 0;
  const json manifest = Manifest();
  for (const json& entry : manifest["files"]) {
    if (entry["kind"] != "broken") continue;
    const std::string name = entry["file"];
    // Its footer is intact: its rows are read or rejected (see the test below).
    if (name == "broken-truncated-footer-intact.parquet") continue;
    ASSERT_TRUE(causes.contains(name)) << name;
    ReadResult read = ReadAll({.inputs = {kDir + name}});
    EXPECT_THAT(read.error, HasSubstr("parquet file " + kDir + name + ": " + causes.at(name)));
    ++files;
  }
  EXPECT_EQ(files, 7);
}

// The fixture's README allows a reader to fail after the readable rows; actex goes
// further: every row the footer counts comes back, the readable ones (the 200 of
// the intact row groups and those of row group 2 whose pages lie wholly before the
// cut: genuine rows of text-not-first.parquet) as text, the rest rejected naming the
// damage, and reading ends without an error.
TEST(ParquetCorpusFile, ReadsEveryReadableRowOfACutChunkAndRejectsTheRest) {
  const std::string path = kDir + "broken-truncated-footer-intact.parquet";
  ReadResult read = ReadAll({.inputs = {path}});
  ASSERT_EQ(read.error, "");
  std::vector<json> prefix = ExpectedRows("broken-truncated-footer-intact.readable-prefix.jsonl");
  std::vector<json> whole = ExpectedRows("text-not-first.expected.jsonl");
  ASSERT_EQ(prefix.size(), 200u);
  ASSERT_EQ(read.records.size(), 300u);
  size_t readable = 200;
  while (readable < 300 &&
         read.records[readable].reject_reason.find("damaged") == std::string::npos) {
    ++readable;
  }
  EXPECT_GT(readable, 200u);  // row group 2's first pages lie before the cut
  EXPECT_LE(readable, 239u);  // the README's count of genuine rows before it
  for (size_t i = 0; i < 300; ++i) {
    const CorpusRecord& record = read.records[i];
    EXPECT_EQ(record.doc_id, static_cast<int64_t>(i));
    EXPECT_EQ(record.line, static_cast<int64_t>(i + 1));
    if (i < readable) {
      ExpectRecordMatches(record, i < 200 ? prefix[i] : whole[i], "text",
                          "row " + std::to_string(i));
    } else {
      EXPECT_THAT(record.reject_reason,
                  HasSubstr("damaged Parquet data: row group 2, column \"text\": the chunk at "
                            "bytes 70730..95020 extends past the data area"))
          << i;
    }
  }
}

TEST(ParquetCorpusFile, SkipsUnwantedRowGroupsWithoutReadingThem) {
  // Row group 2 of this file is damaged; a reader that does not want its documents
  // never reads it, so it ends cleanly.
  std::vector<std::pair<int64_t, int64_t>> asked;
  ReadResult read = ReadAll({.inputs = {kDir + "broken-truncated-footer-intact.parquet"},
                             .wants_docs = [&](int64_t first, int64_t last) {
                               asked.emplace_back(first, last);
                               return first == 100;
                             }});
  EXPECT_EQ(read.error, "");
  ASSERT_EQ(read.records.size(), 100u);
  EXPECT_EQ(read.records.front().doc_id, 100);
  EXPECT_EQ(read.records.back().doc_id, 199);
  EXPECT_EQ(asked, (std::vector<std::pair<int64_t, int64_t>>{{0, 99}, {100, 199}, {200, 299}}));
}

TEST(ParquetCorpusFile, DocIdsRunOnAcrossParquetAndJsonlFiles) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"text\": \"one\"}\n{\"text\": \"two\"}\n");
  // Row groups skipped in the Parquet file still use up their doc ids.
  ReadResult read = ReadAll(
      {.inputs = {dir.File("a.jsonl"), kDir + "fineweb-gzip-v1-dict.parquet", dir.File("a.jsonl")},
       .wants_docs = [](int64_t first, int64_t) { return first != 2; }});
  ASSERT_EQ(read.error, "");
  ASSERT_EQ(read.records.size(), 2u + 300u + 2u);
  EXPECT_EQ(read.records[2].doc_id, 102);  // row group 0 (100 rows) skipped
  EXPECT_EQ(read.records[2].line, 101);
  EXPECT_EQ(read.records[302].doc_id, 402);
  EXPECT_EQ(read.records[302].text, "one");
  EXPECT_EQ(read.records[303].doc_id, 403);
}

TEST(ParquetCorpusFile, MaxDocsStopsInsideAParquetFile) {
  ReadResult read = ReadAll({.inputs = {kDir + "text-required.parquet"}, .max_docs = 150});
  EXPECT_EQ(read.error, "");
  ASSERT_EQ(read.records.size(), 150u);
  EXPECT_EQ(read.records.back().doc_id, 149);
}

TEST(ParquetCorpusFile, MissingColumnIsRefusedNamingTheColumns) {
  const std::string path = kDir + "fineweb-gzip-v1-dict.parquet";
  ReadResult read = ReadAll({.inputs = {path}, .text_field = "content"});
  EXPECT_TRUE(read.records.empty());
  EXPECT_THAT(read.error, HasSubstr("parquet file " + path + ": no column \"content\""));
  EXPECT_THAT(read.error, HasSubstr("columns: text, id, dump"));
}

TEST(ParquetCorpusFile, FileNamedParquetMustBeParquet) {
  TempDir dir;
  WriteBytes(dir.File("x.parquet"), "{\"text\": \"a JSONL line\"}\n{\"text\": \"another\"}\n");
  ReadResult read = ReadAll({.inputs = {dir.File("x.parquet")}});
  EXPECT_TRUE(read.records.empty());
  EXPECT_THAT(read.error, HasSubstr(dir.File("x.parquet") + ": not a Parquet file: bad magic"));
}

TEST(ParquetCorpusFile, ParquetContentIsReadWhateverTheName) {
  TempDir dir;
  std::ifstream in(kDir + "text-required.parquet", std::ios::binary);
  WriteBytes(dir.File("corpus.data"), std::string(std::istreambuf_iterator<char>(in), {}));
  ReadResult read = ReadAll({.inputs = {dir.File("corpus.data")}});
  EXPECT_EQ(read.error, "");
  EXPECT_EQ(read.records.size(), 300u);
}

TEST(ParquetCorpusFile, ReadsOnlyTheChosenColumnAmongOthersAcrossRowGroups) {
  TempDir dir;
  std::vector<std::optional<std::string>> texts = {"a", std::nullopt, "", "d", "e"};
  std::vector<std::vector<int32_t>> lists = {{1, 2}, {}, {3}, {4, 5, 6}, {7}};
  test_support::ParquetWriteOptions options{
      .rows_per_group = 2, .snappy = true, .other_columns = {"id", "url"}};
  WriteBytes(dir.File("t.parquet"), test_support::ParquetWithText(texts, "text", options));
  WriteBytes(dir.File("i.parquet"), test_support::ParquetWithInputIds(lists, options));
  ReadResult read = ReadAll({.inputs = {dir.File("t.parquet"), dir.File("i.parquet")}});
  ASSERT_EQ(read.error, "");
  ASSERT_EQ(read.records.size(), 10u);
  EXPECT_EQ(read.records[0].text, "a");
  EXPECT_EQ(read.records[1].reject_reason, "field \"text\" is null");
  EXPECT_EQ(read.records[2].reject_reason, "field \"text\" is empty");
  EXPECT_EQ(read.records[4].text, "e");
  EXPECT_EQ(read.records[5].input_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(read.records[6].reject_reason, "input_ids is empty");
  EXPECT_EQ(read.records[8].input_ids, (std::vector<int32_t>{4, 5, 6}));
  EXPECT_EQ(read.records[9].doc_id, 9);
}

TEST(ParquetCorpusFile, VerifierCountsParquetRowsFromTheFooter) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"text\": \"one\"}\n{\"text\": \"two\"}\n");
  const std::vector<std::string> inputs = {kDir + "content-column.parquet", dir.File("a.jsonl")};
  EXPECT_EQ(CountCorpusDocuments(inputs, -1), 302);
  EXPECT_EQ(CountCorpusDocuments(inputs, 100), 100);
  auto broken = CountCorpusDocuments({kDir + "broken-bad-magic.parquet"}, -1);
  ASSERT_FALSE(broken.has_value());
  EXPECT_THAT(broken.error(), HasSubstr("broken-bad-magic.parquet: not a Parquet file: bad magic"));
}

}  // namespace
}  // namespace actex
