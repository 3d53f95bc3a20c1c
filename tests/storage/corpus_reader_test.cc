#include "storage/corpus_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

void WriteGzip(const std::string& path, const std::string& contents) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, contents.data(), static_cast<unsigned>(contents.size())),
            static_cast<int>(contents.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
}

std::unique_ptr<CorpusReader> OpenOrDie(CorpusOptions options) {
  auto reader = CorpusReader::Open(options);
  EXPECT_TRUE(reader.has_value()) << reader.error();
  return reader.has_value() ? std::move(*reader) : nullptr;
}

std::vector<CorpusRecord> ReadAll(CorpusReader& reader) {
  std::vector<CorpusRecord> records;
  while (true) {
    auto record = reader.Next();
    EXPECT_TRUE(record.has_value()) << record.error();
    if (!record.has_value() || !record->has_value()) break;
    records.push_back(std::move(**record));
  }
  return records;
}

// The reject reason of the only record in a one-line file.
std::string ReasonFor(const std::string& line) {
  TempDir dir;
  WriteBytes(dir.File("one.jsonl"), line + "\n");
  auto reader = OpenOrDie({.inputs = {dir.File("one.jsonl")}});
  auto records = ReadAll(*reader);
  EXPECT_EQ(records.size(), 1u) << line;
  return records.empty() ? std::string() : records[0].reject_reason;
}

TEST(CorpusReader, ReadsTextRecordsWithFileAndLine) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"text\": \"hello\"}\n{\"text\": \"w\\u00f6rld\", \"x\": 1}\n");
  auto reader = OpenOrDie({.inputs = {dir.File("a.jsonl")}});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].doc_id, 0);
  EXPECT_EQ(records[0].text, "hello");
  EXPECT_EQ(records[0].file, dir.File("a.jsonl"));
  EXPECT_EQ(records[0].line, 1);
  EXPECT_FALSE(records[0].pretokenized);
  EXPECT_EQ(records[1].doc_id, 1);
  EXPECT_EQ(records[1].text, "w\xC3\xB6rld");
  EXPECT_EQ(records[1].line, 2);
  EXPECT_TRUE(records[1].reject_reason.empty());
  // The end stays the end.
  auto after = reader->Next();
  ASSERT_TRUE(after.has_value());
  EXPECT_FALSE(after->has_value());
}

TEST(CorpusReader, DocIdsStayStableAcrossRejectsFilesAndGzip) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"text\":\"a1\"}\nnot json\n{\"text\":\"a3\"}\n");
  WriteGzip(dir.File("b.data"), "{\"text\":\"b1\"}\n\n{\"input_ids\":[5,6]}");  // no final \n
  WriteBytes(dir.File("c.jsonl"), "{\"body\":\"c1\"}\n{\"text\":\"c2\"}\n");
  auto reader =
      OpenOrDie({.inputs = {dir.File("a.jsonl"), dir.File("b.data"), dir.File("c.jsonl")}});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 8u);
  struct Expected {
    std::string file;
    int64_t line;
    bool rejected;
  };
  const std::vector<Expected> expected = {
      {"a.jsonl", 1, false}, {"a.jsonl", 2, true}, {"a.jsonl", 3, false}, {"b.data", 1, false},
      {"b.data", 2, true},   {"b.data", 3, false}, {"c.jsonl", 1, true},  {"c.jsonl", 2, false}};
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].doc_id, static_cast<int64_t>(i));
    EXPECT_EQ(records[i].file, dir.File(expected[i].file)) << i;
    EXPECT_EQ(records[i].line, expected[i].line) << i;
    EXPECT_EQ(!records[i].reject_reason.empty(), expected[i].rejected) << i;
  }
  EXPECT_EQ(records[3].text, "b1");
  EXPECT_TRUE(records[5].pretokenized);
  EXPECT_EQ(records[5].input_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(records[7].text, "c2");
}

TEST(CorpusReader, ReadsConcatenatedGzipMembersAsOneFile) {
  TempDir dir;
  WriteGzip(dir.File("a.gz"), "{\"text\":\"one\"}\n");
  WriteGzip(dir.File("b.gz"), "{\"text\":\"two\"}\n");
  WriteBytes(dir.File("both.gz"), ReadBytes(dir.File("a.gz")) + ReadBytes(dir.File("b.gz")));
  auto reader = OpenOrDie({.inputs = {dir.File("both.gz")}});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].text, "two");
  EXPECT_EQ(records[1].line, 2);
}

TEST(CorpusReader, LastLineWithoutNewlineCountsAndTrailingNewlineDoesNot) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"text\":\"x\"}\n{\"text\":\"y\"}");
  WriteBytes(dir.File("b.jsonl"), "{\"text\":\"x\"}\n");
  WriteBytes(dir.File("c.jsonl"), "{\"text\":\"x\"}\n\n");
  WriteBytes(dir.File("d.jsonl"), "");
  auto count = [&](const std::string& name) {
    auto reader = OpenOrDie({.inputs = {dir.File(name)}});
    return ReadAll(*reader).size();
  };
  EXPECT_EQ(count("a.jsonl"), 2u);
  EXPECT_EQ(count("b.jsonl"), 1u);
  EXPECT_EQ(count("c.jsonl"), 2u);  // the empty line between the two '\n' is a line
  EXPECT_EQ(count("d.jsonl"), 0u);
}

TEST(CorpusReader, AcceptsCrlfLineEndings) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"text\":\"x\"}\r\n{\"text\":\"y\"}\r\n");
  auto reader = OpenOrDie({.inputs = {dir.File("a.jsonl")}});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].text, "y");
  EXPECT_TRUE(records[1].reject_reason.empty());
}

TEST(CorpusReader, RejectsBlankLine) {
  EXPECT_EQ(ReasonFor(""), "blank line");
  EXPECT_EQ(ReasonFor("  \t "), "blank line");
}

TEST(CorpusReader, RejectsLineThatIsNotUtf8) {
  EXPECT_EQ(ReasonFor("{\"text\": \"ab\xC0\x80\"}"), "not valid UTF-8 at byte 12");
  EXPECT_EQ(ReasonFor("{\"text\": \"\xED\xA0\x80\"}"), "not valid UTF-8 at byte 10");
  EXPECT_EQ(ReasonFor("{\"text\": \"\xF4\x90\x80\x80\"}"), "not valid UTF-8 at byte 10");
}

TEST(CorpusReader, RejectsInvalidJsonWithParserMessage) {
  std::string reason = ReasonFor("{\"text\": \"x\"");
  EXPECT_THAT(reason, ::testing::StartsWith("invalid JSON: "));
  EXPECT_THAT(reason, HasSubstr("parse error"));
  EXPECT_THAT(reason, ::testing::Not(HasSubstr("json.exception")));
  EXPECT_THAT(ReasonFor("{\"text\": \"x\"} trailing"), ::testing::StartsWith("invalid JSON: "));
}

// Found by tests/fuzz/corpus_reader_fuzzer: the parser quotes the first byte of a
// multi-byte character on its own, which made the reason invalid UTF-8.
TEST(CorpusReader, InvalidJsonReasonStaysUtf8WhenTheParserQuotesHalfACharacter) {
  EXPECT_THAT(ReasonFor("\xD0\x84\t\t"), HasSubstr("last read: '<0xD0>'"));
  EXPECT_THAT(ReasonFor("Привет, мир"), HasSubstr("'<0xD0>'"));
  // Whole characters inside a quoted token are kept as they are.
  EXPECT_THAT(ReasonFor("[\"a\xE6\x9D\xB1"), HasSubstr("\"a\xE6\x9D\xB1"));
}

TEST(CorpusReader, KeepsInvalidJsonReasonShortForHugeLines) {
  std::string reason = ReasonFor("{\"text\": \"" + std::string(100000, 'q'));
  EXPECT_THAT(reason, ::testing::StartsWith("invalid JSON: "));
  EXPECT_LE(reason.size(), 310u);
}

TEST(CorpusReader, RejectsLineThatIsNotAnObject) {
  EXPECT_EQ(ReasonFor("[1, 2]"), "line is not a JSON object");
  EXPECT_EQ(ReasonFor("\"text\""), "line is not a JSON object");
}

TEST(CorpusReader, RejectsMissingOrNonStringOrEmptyText) {
  EXPECT_EQ(ReasonFor("{\"content\": \"x\"}"), "missing field \"text\"");
  EXPECT_EQ(ReasonFor("{\"text\": 5}"), "field \"text\" is not a string");
  EXPECT_EQ(ReasonFor("{\"text\": null}"), "field \"text\" is not a string");
  EXPECT_EQ(ReasonFor("{\"text\": \"\"}"), "field \"text\" is empty");
}

TEST(CorpusReader, RejectsInputIdsThatAreNotNonNegativeIntegers) {
  const std::string reason = "input_ids must be an array of non-negative integers";
  EXPECT_EQ(ReasonFor("{\"input_ids\": [1, -2]}"), reason);
  EXPECT_EQ(ReasonFor("{\"input_ids\": [1, 2.5]}"), reason);
  EXPECT_EQ(ReasonFor("{\"input_ids\": [\"1\"]}"), reason);
  EXPECT_EQ(ReasonFor("{\"input_ids\": [2147483648]}"), reason);
  EXPECT_EQ(ReasonFor("{\"input_ids\": 7}"), reason);
  EXPECT_EQ(ReasonFor("{\"input_ids\": []}"), "input_ids is empty");
}

TEST(CorpusReader, PretokenizedRecordIgnoresTextField) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"input_ids\": [0, 2147483647, 3], \"text\": 5}\n");
  auto reader = OpenOrDie({.inputs = {dir.File("a.jsonl")}});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0].reject_reason.empty()) << records[0].reject_reason;
  EXPECT_TRUE(records[0].pretokenized);
  EXPECT_EQ(records[0].input_ids, (std::vector<int32_t>{0, 2147483647, 3}));
}

TEST(CorpusReader, ReadsTheConfiguredTextField) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"content\": \"x\"}\n{\"text\": \"y\"}\n");
  auto reader = OpenOrDie({.inputs = {dir.File("a.jsonl")}, .text_field = "content"});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].text, "x");
  EXPECT_EQ(records[1].reject_reason, "missing field \"content\"");
}

// Peak resident memory of this process (ctest runs each test in its own process).
int64_t PeakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

void WriteFileWithLongLine(const std::string& path, int64_t long_line_bytes) {
  std::ofstream out(path, std::ios::binary);
  out << "{\"text\":\"before\"}\n{\"text\":\"";
  const std::string block(1 << 16, 'z');
  for (int64_t written = 0; written < long_line_bytes; written += block.size()) out << block;
  out << "\"}\n{\"text\":\"after\"}\n";
}

TEST(CorpusReader, RejectsLongLineWithoutBufferingIt) {
  TempDir dir;
  constexpr int64_t kLineBytes = int64_t{48} << 20;
  WriteFileWithLongLine(dir.File("long.jsonl"), kLineBytes);
  const int64_t peak_before = PeakResidentBytes();
  auto reader = OpenOrDie({.inputs = {dir.File("long.jsonl")}, .max_line_bytes = 1 << 20});
  auto records = ReadAll(*reader);
  const int64_t growth = PeakResidentBytes() - peak_before;
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].text, "before");
  EXPECT_THAT(records[1].reject_reason, ::testing::StartsWith("line longer than 1048576 bytes"));
  EXPECT_EQ(records[1].line, 2);
  EXPECT_EQ(records[2].text, "after");
  EXPECT_EQ(records[2].doc_id, 2);
  // Chunk, line buffer and zlib buffers are a few MiB; the line is 48 MiB.
  EXPECT_LT(growth, int64_t{16} << 20);
}

TEST(CorpusReader, RejectsLongLineInsideGzip) {
  TempDir dir;
  WriteGzip(dir.File("long.gz"),
            "{\"text\":\"" + std::string(3 << 20, 'z') + "\"}\n{\"text\":\"after\"}\n");
  auto reader = OpenOrDie({.inputs = {dir.File("long.gz")}, .max_line_bytes = 1 << 20});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_THAT(records[0].reject_reason, ::testing::StartsWith("line longer than 1048576 bytes"));
  EXPECT_EQ(records[1].text, "after");
}

TEST(CorpusReader, AcceptsLineOfExactlyTheLimit) {
  TempDir dir;
  const std::string line = "{\"text\":\"" + std::string(100, 'a') + "\"}";
  WriteBytes(dir.File("a.jsonl"), line + "\n" + line + "x\n");
  auto reader = OpenOrDie(
      {.inputs = {dir.File("a.jsonl")}, .max_line_bytes = static_cast<int64_t>(line.size())});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].reject_reason.empty());
  EXPECT_THAT(records[1].reject_reason, ::testing::StartsWith("line longer than 111 bytes"));
}

TEST(CorpusReader, ExpandsGlobsSortedInInputOrder) {
  TempDir dir;
  for (const char* name : {"b.jsonl", "a.jsonl", "c.jsonl", "z.jsonl", "skip.txt"}) {
    WriteBytes(dir.File(name), "{\"text\":\"x\"}\n");
  }
  auto reader = OpenOrDie({.inputs = {dir.File("z.jsonl"), dir.File("[a-c].jsonl")}});
  EXPECT_EQ(reader->files(), (std::vector<std::string>{dir.File("z.jsonl"), dir.File("a.jsonl"),
                                                       dir.File("b.jsonl"), dir.File("c.jsonl")}));
  EXPECT_EQ(ReadAll(*reader).size(), 4u);
}

TEST(CorpusReader, MissingFileIsAnErrorNamingIt) {
  TempDir dir;
  auto reader = CorpusReader::Open({.inputs = {dir.File("absent.jsonl")}});
  ASSERT_FALSE(reader.has_value());
  EXPECT_THAT(reader.error(), HasSubstr(dir.File("absent.jsonl")));
  EXPECT_THAT(reader.error(), HasSubstr("No such file or directory"));
}

TEST(CorpusReader, PatternMatchingNothingIsAnErrorNamingIt) {
  TempDir dir;
  auto reader = CorpusReader::Open({.inputs = {dir.File("*.jsonl")}});
  ASSERT_FALSE(reader.has_value());
  EXPECT_THAT(reader.error(), HasSubstr("\"" + dir.File("*.jsonl") + "\" matches no file"));
}

TEST(CorpusReader, DirectoryInputIsAnError) {
  TempDir dir;
  auto reader = CorpusReader::Open({.inputs = {dir.path()}});
  ASSERT_FALSE(reader.has_value());
  EXPECT_THAT(reader.error(), HasSubstr("is a directory"));
}

TEST(CorpusReader, TruncatedGzipIsAnErrorNamingFileAndLine) {
  TempDir dir;
  std::string contents;
  for (int i = 0; i < 20000; ++i) contents += "{\"text\":\"line " + std::to_string(i) + "\"}\n";
  WriteGzip(dir.File("full.gz"), contents);
  std::string compressed = ReadBytes(dir.File("full.gz"));
  WriteBytes(dir.File("cut.gz"), compressed.substr(0, compressed.size() / 2));
  auto reader = OpenOrDie({.inputs = {dir.File("cut.gz")}});
  int64_t good = 0;
  std::string error;
  while (true) {
    auto record = reader->Next();
    if (!record.has_value()) {
      error = record.error();
      break;
    }
    ASSERT_TRUE(record->has_value()) << "reached the end without noticing the truncation";
    ASSERT_TRUE((*record)->reject_reason.empty()) << (*record)->reject_reason;
    ++good;
  }
  EXPECT_GT(good, 0);
  EXPECT_LT(good, 20000);
  EXPECT_THAT(error, HasSubstr(dir.File("cut.gz") + " at line " + std::to_string(good + 1)));
  EXPECT_THAT(error, HasSubstr("truncated"));
  // The error sticks.
  EXPECT_FALSE(reader->Next().has_value());
}

TEST(CorpusReader, CorruptGzipIsAnError) {
  TempDir dir;
  std::string contents;
  for (int i = 0; i < 2000; ++i) contents += "{\"text\":\"line " + std::to_string(i) + "\"}\n";
  WriteGzip(dir.File("full.gz"), contents);
  std::string compressed = ReadBytes(dir.File("full.gz"));
  for (size_t i = compressed.size() / 2; i < compressed.size() / 2 + 64; ++i) compressed[i] ^= 0x5A;
  WriteBytes(dir.File("bad.gz"), compressed);
  auto reader = OpenOrDie({.inputs = {dir.File("bad.gz")}});
  std::string error;
  for (int i = 0; i <= 2000 && error.empty(); ++i) {
    auto record = reader->Next();
    if (!record.has_value()) error = record.error();
  }
  EXPECT_THAT(error, HasSubstr(dir.File("bad.gz")));
  EXPECT_THAT(error, HasSubstr("not valid gzip data"));
}

// `cat a.jsonl.gz b.jsonl > c.jsonl.gz` must not lose b silently.
TEST(CorpusReader, BytesAfterTheLastGzipMemberAreAnErrorNamingFileAndLine) {
  TempDir dir;
  WriteGzip(dir.File("a.gz"), "{\"text\":\"one\"}\n{\"text\":\"two\"}\n");
  WriteBytes(dir.File("mixed.gz"), ReadBytes(dir.File("a.gz")) + "{\"text\":\"three\"}\n");
  auto reader = OpenOrDie({.inputs = {dir.File("mixed.gz")}});
  int good = 0;
  std::string error;
  while (error.empty()) {
    auto record = reader->Next();
    if (!record.has_value()) {
      error = record.error();
    } else {
      ASSERT_TRUE(record->has_value()) << "reached the end without noticing the plain tail";
      ++good;
    }
  }
  EXPECT_EQ(good, 2);
  EXPECT_THAT(error, HasSubstr(dir.File("mixed.gz") + " at line 3"));
  EXPECT_THAT(error, HasSubstr("bytes after the end of the gzip stream are not gzip data"));
}

TEST(CorpusReader, MaxDocsStopsBeforeThatDocId) {
  TempDir dir;
  WriteBytes(dir.File("a.jsonl"), "{\"text\":\"a\"}\nbad\n{\"text\":\"c\"}\n{\"text\":\"d\"}\n");
  auto reader = OpenOrDie({.inputs = {dir.File("a.jsonl")}, .max_docs = 3});
  auto records = ReadAll(*reader);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records.back().doc_id, 2);
  EXPECT_EQ(records.back().text, "c");
  auto none = OpenOrDie({.inputs = {dir.File("a.jsonl")}, .max_docs = 0});
  EXPECT_TRUE(ReadAll(*none).empty());
}

}  // namespace
}  // namespace actex
