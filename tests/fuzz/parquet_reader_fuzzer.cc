// Fuzzes Parquet corpus files: the input is a file named *.parquet, read with
// CorpusReader as `actex extract --data` reads it (storage/parquet/), with the text
// column "text" (or a pre-tokenized "input_ids" list when the file has one).
//
// Invariants checked, against the documented contract (storage/README.md):
// - an error names the file ("parquet file <path>: ...") and sticks; the end stays
//   the end;
// - records come in increasing doc id order, each doc id the 1-based row minus one,
//   naming the file;
// - a rejected record has one of the documented reasons (rows of damaged data
//   included); an accepted one holds
//   non-empty UTF-8 text or non-empty non-negative ids;
// - nothing crashes, leaks, hangs or allocates without bound however the footer,
//   page headers, levels, dictionary indices or compressed pages lie.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "storage/corpus_reader.h"
#include "base/utf8.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_scratch_dir.h"

namespace actex {
namespace {

// Small, so that short inputs reach the too-long path too.
constexpr int64_t kMaxTextBytes = 4096;
constexpr int64_t kMaxRecords = int64_t{1} << 16;

void CheckRecord(const CorpusRecord& record, const std::string& path, int64_t previous_doc_id) {
  static const std::set<std::string> kReasons = {
      "field \"text\" is null",
      "field \"text\" is empty",
      "input_ids is null",
      "input_ids is empty",
      "input_ids must be an array of non-negative integers",
      "text longer than 4096 bytes"};
  FUZZ_CHECK(record.file == path, "record names %s", record.file.c_str());
  FUZZ_CHECK(record.doc_id > previous_doc_id, "doc id %lld after %lld",
             static_cast<long long>(record.doc_id), static_cast<long long>(previous_doc_id));
  FUZZ_CHECK(record.doc_id == record.line - 1, "doc id %lld on row %lld",
             static_cast<long long>(record.doc_id), static_cast<long long>(record.line));
  if (!record.reject_reason.empty()) {
    const std::string& reason = record.reject_reason;
    const bool known = kReasons.contains(reason) ||
                       reason.starts_with("damaged Parquet data: row group ") ||
                       reason.starts_with("input_ids has ") ||
                       reason.starts_with("not valid UTF-8 at byte ") ||
                       reason.starts_with("text longer than 4096 bytes (");
    FUZZ_CHECK(known, "undocumented reason: %s", reason.c_str());
    return;
  }
  if (record.pretokenized) {
    FUZZ_CHECK(!record.input_ids.empty(), "accepted empty ids");
    for (int32_t id : record.input_ids) FUZZ_CHECK(id >= 0, "accepted a negative id");
  } else {
    FUZZ_CHECK(!record.text.empty(), "accepted empty text");
    FUZZ_CHECK(static_cast<int64_t>(record.text.size()) <= kMaxTextBytes, "accepted long text");
    FUZZ_CHECK(!FirstInvalidUtf8Byte(record.text).has_value(), "accepted text that is not UTF-8");
  }
}

void FuzzOneInput(std::string_view input) {
  static const FuzzScratchDir dir;
  const std::string path = dir.Write("input.parquet", input);
  CorpusOptions options;
  options.inputs = {path};
  options.max_line_bytes = kMaxTextBytes;
  auto reader = CorpusReader::Open(options);
  FUZZ_CHECK(reader.has_value(), "cannot open an existing file: %s", reader.error().c_str());
  int64_t previous_doc_id = -1;
  int64_t records = 0;
  while (true) {
    auto next = (*reader)->Next();
    if (!next) {
      FUZZ_CHECK(next.error().starts_with("parquet file " + path + ": "),
                 "error without the file: %s", next.error().c_str());
      auto again = (*reader)->Next();
      FUZZ_CHECK(!again && again.error() == next.error(), "an error did not stick");
      return;
    }
    if (!next->has_value()) {
      auto again = (*reader)->Next();
      FUZZ_CHECK(again && !again->has_value(), "records after the end");
      return;
    }
    CheckRecord(**next, path, previous_doc_id);
    previous_doc_id = (*next)->doc_id;
    // The footer's row counts are taken as given, and each row of damaged data is a
    // record, so a small input may claim billions: a run writes them all as
    // rejects, the fuzzer checks the first ones.
    if (++records == kMaxRecords) return;
  }
}

}  // namespace
}  // namespace actex

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  actex::FuzzOneInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
