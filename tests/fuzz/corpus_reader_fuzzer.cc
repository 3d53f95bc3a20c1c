// Fuzzes corpus reading: the input is a corpus file, read with CorpusReader as it
// is (plain JSONL, or gzip when it starts with the gzip magic), then gzip-compressed
// by the harness in one member, in two members, or cut short.
//
// Invariants checked, against a model of the documented contract (storage/README.md):
// - a plain file never fails; it yields one record per line with consecutive doc
//   ids and 1-based line numbers naming the file;
// - lines longer than max_line_bytes, blank lines and lines that are not UTF-8 are
//   rejected for exactly that reason; every reason is one of the documented ones
//   and is UTF-8 (rejects.jsonl is JSON); accepted records hold non-empty UTF-8
//   text or non-empty non-negative ids;
// - the same bytes gzip'd, in one member or two, read back identically;
// - a gzip stream cut short is an error naming the file, after a prefix of the
//   records; errors stay errors and the end stays the end.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/corpus_reader.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_scratch_dir.h"
#include "tests/fuzz/fuzz_utf8.h"

namespace actex {
namespace {

// Small, so that short inputs reach the too-long path and JSON parsing alike.
constexpr int64_t kMaxLineBytes = 256;

struct Outcome {
  std::vector<CorpusRecord> records;
  std::optional<std::string> error;
};

Outcome ReadAll(const std::string& path, size_t input_bytes) {
  CorpusOptions options;
  options.inputs = {path};
  options.max_line_bytes = kMaxLineBytes;
  auto reader = CorpusReader::Open(options);
  FUZZ_CHECK(reader.has_value(), "cannot open an existing file: %s", reader.error().c_str());
  Outcome outcome;
  while (true) {
    auto next = (*reader)->Next();
    if (!next) {
      outcome.error = next.error();
      auto again = (*reader)->Next();
      FUZZ_CHECK(!again && again.error() == next.error(), "an error did not stick");
      break;
    }
    if (!next->has_value()) {
      auto again = (*reader)->Next();
      FUZZ_CHECK(again && !again->has_value(), "records after the end");
      break;
    }
    outcome.records.push_back(std::move(**next));
    // Every line but a last one without '\n' ends in a '\n' of the decoded bytes; a
    // gzip input of n bytes can hold many more lines than n, so this is only a bound
    // against a reader that never ends.
    FUZZ_CHECK(outcome.records.size() <= 1032 * input_bytes + 1, "records do not end");
  }
  return outcome;
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

bool IsDocumentedReason(const std::string& reason) {
  static const char* const kReasons[] = {
      "blank line",
      "line longer than ",
      "not valid UTF-8 at byte ",
      "invalid JSON: ",
      "line is not a JSON object",
      "missing field \"text\"",
      "field \"text\" is not a string",
      "field \"text\" is empty",
      "input_ids must be an array of non-negative integers",
      "input_ids is empty",
  };
  for (const char* known : kReasons) {
    if (reason.starts_with(known)) return true;
  }
  return false;
}

// What any record must satisfy, wherever it came from.
void CheckRecord(const CorpusRecord& record, size_t index, const std::string& path) {
  FUZZ_CHECK(record.doc_id == static_cast<int64_t>(index), "doc id %lld at index %zu",
             static_cast<long long>(record.doc_id), index);
  FUZZ_CHECK(record.line == static_cast<int64_t>(index) + 1, "line %lld at index %zu",
             static_cast<long long>(record.line), index);
  FUZZ_CHECK(record.file == path, "record names %s", record.file.c_str());
  if (!record.reject_reason.empty()) {
    FUZZ_CHECK(IsDocumentedReason(record.reject_reason), "undocumented reason: %s",
               record.reject_reason.c_str());
    FUZZ_CHECK(IsWellFormedUtf8(record.reject_reason), "reason is not UTF-8");
    return;
  }
  if (record.pretokenized) {
    FUZZ_CHECK(!record.input_ids.empty() && record.text.empty(), "pretokenized record");
    for (int32_t id : record.input_ids) FUZZ_CHECK(id >= 0, "negative id %d", id);
  } else {
    FUZZ_CHECK(!record.text.empty() && record.input_ids.empty(), "text record");
    FUZZ_CHECK(IsWellFormedUtf8(record.text), "text is not UTF-8");
  }
}

// The lines of a plain file as the reader must cut them: at '\n', a last line
// without one counts, nothing after a final '\n' does.
std::vector<std::string_view> SplitLines(std::string_view bytes) {
  std::vector<std::string_view> lines;
  while (!bytes.empty()) {
    const size_t end = bytes.find('\n');
    lines.push_back(bytes.substr(0, end));
    if (end == std::string_view::npos) break;
    bytes.remove_prefix(end + 1);
  }
  return lines;
}

void CheckAgainstLines(const Outcome& outcome, std::string_view input) {
  FUZZ_CHECK(!outcome.error, "a plain file failed: %s", outcome.error->c_str());
  const std::vector<std::string_view> lines = SplitLines(input);
  FUZZ_CHECK(outcome.records.size() == lines.size(), "%zu records for %zu lines",
             outcome.records.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& reason = outcome.records[i].reject_reason;
    std::string_view line = lines[i];
    if (static_cast<int64_t>(line.size()) > kMaxLineBytes) {
      const std::string expected = "line longer than " + std::to_string(kMaxLineBytes) +
                                   " bytes (" + std::to_string(line.size()) + ")";
      FUZZ_CHECK(reason == expected, "line %zu: \"%s\", expected \"%s\"", i + 1, reason.c_str(),
                 expected.c_str());
      continue;
    }
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (IsBlank(line)) {
      FUZZ_CHECK(reason == "blank line", "line %zu: \"%s\" for a blank line", i + 1,
                 reason.c_str());
    } else if (!IsWellFormedUtf8(line)) {
      FUZZ_CHECK(reason.starts_with("not valid UTF-8 at byte "), "line %zu: \"%s\" for bad UTF-8",
                 i + 1, reason.c_str());
    } else {
      FUZZ_CHECK(!reason.starts_with("not valid UTF-8") && reason != "blank line" &&
                     !reason.starts_with("line longer than"),
                 "line %zu: \"%s\" for a good line", i + 1, reason.c_str());
    }
  }
}

bool SameRecords(const std::vector<CorpusRecord>& a, const std::vector<CorpusRecord>& b,
                 size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (a[i].doc_id != b[i].doc_id || a[i].line != b[i].line ||
        a[i].pretokenized != b[i].pretokenized || a[i].text != b[i].text ||
        a[i].input_ids != b[i].input_ids || a[i].reject_reason != b[i].reject_reason) {
      return false;
    }
  }
  return true;
}

// One gzip member holding `bytes`.
std::string Gzip(std::string_view bytes) {
  z_stream stream{};
  FUZZ_CHECK(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
             "deflateInit2");
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  FUZZ_CHECK(deflate(&stream, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

void CheckGzipReadsLikePlain(const std::string& path, const Outcome& plain) {
  const Outcome gzipped = ReadAll(path, std::filesystem::file_size(path));
  FUZZ_CHECK(!gzipped.error, "gzip failed: %s", gzipped.error->c_str());
  FUZZ_CHECK(gzipped.records.size() == plain.records.size() &&
                 SameRecords(gzipped.records, plain.records, plain.records.size()),
             "%s reads differently from the plain file", path.c_str());
}

void CheckCutGzipFails(const std::string& path, const Outcome& plain) {
  const Outcome truncated = ReadAll(path, std::filesystem::file_size(path));
  FUZZ_CHECK(truncated.error.has_value(), "a gzip stream cut at %ju bytes was accepted",
             static_cast<uintmax_t>(std::filesystem::file_size(path)));
  FUZZ_CHECK(truncated.error->find(path) != std::string::npos, "error without the file: %s",
             truncated.error->c_str());
  FUZZ_CHECK(truncated.records.size() <= plain.records.size() &&
                 SameRecords(truncated.records, plain.records, truncated.records.size()),
             "records before the cut differ from plain");
  for (size_t i = 0; i < truncated.records.size(); ++i) CheckRecord(truncated.records[i], i, path);
}

void FuzzOneInput(std::string_view input) {
  static const FuzzScratchDir dir;
  const std::string plain_path = dir.Write("plain.jsonl", input);
  const Outcome plain = ReadAll(plain_path, input.size());
  for (size_t i = 0; i < plain.records.size(); ++i) CheckRecord(plain.records[i], i, plain_path);
  if (plain.error) {
    FUZZ_CHECK(plain.error->find(plain_path) != std::string::npos, "error without the file: %s",
               plain.error->c_str());
  }
  // An input that starts with the gzip magic was read as gzip, one with the Parquet
  // magic as Parquet (parquet_reader_fuzzer.cc): it may fail, and its lines are not
  // the input's.
  const bool is_gzip = input.starts_with("\x1f\x8b");
  if (is_gzip || input.starts_with("PAR1")) return;
  CheckAgainstLines(plain, input);

  // Then the same bytes gzip'd, one way per input (chosen by its length, which the
  // fuzzer varies): every LineReader costs megabytes of fresh buffers under ASan.
  const std::string compressed = Gzip(input);
  switch (input.size() % 3) {
    case 0:
      CheckGzipReadsLikePlain(dir.Write("one_member.jsonl.gz", compressed), plain);
      break;
    case 1: {
      const size_t half = input.size() / 2;
      CheckGzipReadsLikePlain(
          dir.Write("two_members.jsonl.gz", Gzip(input.substr(0, half)) + Gzip(input.substr(half))),
          plain);
      break;
    }
    case 2: {
      // Cut inside the stream, past the magic bytes: always truncated.
      const size_t cut = 2 + (input.size() / 3) % (compressed.size() - 2);
      CheckCutGzipFails(dir.Write("cut.jsonl.gz", compressed.substr(0, cut)), plain);
      break;
    }
  }
}

}  // namespace
}  // namespace actex

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  actex::FuzzOneInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
