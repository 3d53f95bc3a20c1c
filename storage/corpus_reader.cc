#include "storage/corpus_reader.h"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/utf8.h"
#include "storage/corpus_inputs.h"
#include "storage/file_io.h"
#include "storage/line_reader.h"
#include "storage/parquet_corpus_file.h"

namespace actex {

namespace {

// Parser messages quote what they read; an unterminated string can make that the
// whole line, so reasons are cut to a length that reads well in rejects.jsonl.
constexpr size_t kMaxReasonBytes = 300;

std::string ParserMessage(const nlohmann::json::exception& error) {
  std::string message = error.what();
  // Drop the "[json.exception.parse_error.101] " tag: it means nothing to a user.
  if (!message.empty() && message.front() == '[') {
    size_t end = message.find("] ");
    if (end != std::string::npos) message.erase(0, end + 2);
  }
  // The parser quotes what it read byte by byte, so a line that starts with a
  // multi-byte character ends its message in half of one ("last read: '\xD0'").
  // Reasons are UTF-8 text, so such bytes are written out as <0xD0>.
  std::string_view rest = message;
  std::string valid;
  while (auto bad = FirstInvalidUtf8Byte(rest)) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const auto byte = static_cast<uint8_t>(rest[*bad]);
    valid.append(rest.substr(0, *bad));
    valid += {'<', '0', 'x', kHex[byte >> 4], kHex[byte & 0xF], '>'};
    rest.remove_prefix(*bad + 1);
  }
  if (valid.empty()) return message;
  valid.append(rest);
  return valid;
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

// Fills `record` from one line's JSON, or sets its reject_reason.
void ParseLine(std::string_view line, const std::string& text_field, CorpusRecord* record) {
  if (IsBlank(line)) {
    record->reject_reason = "blank line";
    return;
  }
  if (auto bad = FirstInvalidUtf8Byte(line)) {
    record->reject_reason = "not valid UTF-8 at byte " + std::to_string(*bad);
    return;
  }
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& error) {
    record->reject_reason = "invalid JSON: " + ParserMessage(error);
    if (record->reject_reason.size() > kMaxReasonBytes) {
      record->reject_reason.resize(kMaxReasonBytes);
      // Do not leave half a UTF-8 sequence at the cut.
      while (!record->reject_reason.empty() &&
             (static_cast<uint8_t>(record->reject_reason.back()) & 0xC0) == 0x80) {
        record->reject_reason.pop_back();
      }
      if (!record->reject_reason.empty() &&
          static_cast<uint8_t>(record->reject_reason.back()) >= 0xC0) {
        record->reject_reason.pop_back();
      }
      record->reject_reason += "...";
    }
    return;
  }
  if (!value.is_object()) {
    record->reject_reason = "line is not a JSON object";
    return;
  }
  if (auto ids = value.find("input_ids"); ids != value.end()) {
    constexpr auto kMaxId = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
    bool valid = ids->is_array();
    if (valid) record->input_ids.reserve(ids->size());
    for (size_t i = 0; valid && i < ids->size(); ++i) {
      const auto& id = (*ids)[i];
      // Non-negative JSON integers parse as unsigned; negatives and floats do not.
      valid = id.is_number_unsigned() && id.get<uint64_t>() <= kMaxId;
      if (valid) record->input_ids.push_back(static_cast<int32_t>(id.get<uint64_t>()));
    }
    if (!valid) {
      record->input_ids.clear();
      record->reject_reason = "input_ids must be an array of non-negative integers";
    } else if (record->input_ids.empty()) {
      record->reject_reason = "input_ids is empty";
    } else {
      record->pretokenized = true;
    }
    return;
  }
  auto text = value.find(text_field);
  if (text == value.end()) {
    record->reject_reason = "missing field \"" + text_field + "\"";
  } else if (!text->is_string()) {
    record->reject_reason = "field \"" + text_field + "\" is not a string";
  } else if (text->get_ref<const std::string&>().empty()) {
    record->reject_reason = "field \"" + text_field + "\" is empty";
  } else {
    record->text = std::move(text->get_ref<std::string&>());
  }
}

}  // namespace

struct CorpusReader::State {
  CorpusOptions options;
  std::vector<std::string> files;
  size_t next_file = 0;
  std::unique_ptr<LineReader> reader;          // the file being read, JSONL
  std::unique_ptr<ParquetCorpusFile> parquet;  // or Parquet
  std::string reader_path;
  int64_t next_doc_id = 0;
  bool finished = false;
  std::string error;              // sticky: once reading failed, it keeps failing
  int64_t file_first_doc_id = 0;  // the doc id of the current file's first record
  int64_t jsonl_docs = 0;
  int64_t jsonl_bytes_of_finished_files = 0;
};

std::expected<void, std::string> CorpusReader::OpenFile(State& state) {
  state.file_first_doc_id = state.next_doc_id;
  auto parquet = IsParquetInput(state.reader_path);
  if (!parquet) return std::unexpected(parquet.error());
  if (*parquet) {
    auto file = ParquetCorpusFile::Open(state.reader_path, state.options, state.next_doc_id);
    if (!file) return std::unexpected(file.error());
    state.parquet = std::move(*file);
    return {};
  }
  auto reader = LineReader::Open(state.reader_path, state.options.max_line_bytes);
  if (!reader) return std::unexpected(reader.error());
  state.reader = std::move(*reader);
  return {};
}

CorpusReader::CorpusReader() : state_(std::make_unique<State>()) {}
CorpusReader::~CorpusReader() = default;

std::expected<std::unique_ptr<CorpusReader>, std::string> CorpusReader::Open(
    const CorpusOptions& options) {
  if (options.inputs.empty()) return std::unexpected(std::string("no corpus input given"));
  if (options.max_line_bytes <= 0) {
    return std::unexpected("max_line_bytes must be positive, got " +
                           std::to_string(options.max_line_bytes));
  }
  if (options.text_field.empty()) return std::unexpected(std::string("text field name is empty"));
  std::unique_ptr<CorpusReader> reader(new CorpusReader());
  reader->state_->options = options;
  auto files = ExpandCorpusInputs(options.inputs);
  if (!files) return std::unexpected(files.error());
  reader->state_->files = std::move(*files);
  return reader;
}

std::expected<std::optional<CorpusRecord>, std::string> CorpusReader::Next() {
  State& state = *state_;
  if (!state.error.empty()) return std::unexpected(state.error);
  if (state.finished) return std::nullopt;
  if (state.options.max_docs >= 0 && state.next_doc_id >= state.options.max_docs) {
    state.finished = true;
    state.reader.reset();
    return std::nullopt;
  }
  while (true) {
    if (state.reader == nullptr && state.parquet == nullptr) {
      if (state.next_file == state.files.size()) {
        state.finished = true;
        return std::nullopt;
      }
      state.reader_path = state.files[state.next_file++];
      auto opened = OpenFile(state);
      if (!opened) {
        state.error = opened.error();
        return std::unexpected(state.error);
      }
    }
    if (state.parquet != nullptr) {
      auto record = state.parquet->Next();
      if (!record) {
        state.error = record.error();
        state.parquet.reset();
        return std::unexpected(state.error);
      }
      if (!record->has_value()) {
        state.next_doc_id = state.file_first_doc_id + state.parquet->rows();
        state.parquet.reset();
        continue;
      }
      state.next_doc_id = (*record)->doc_id + 1;
      if (state.options.max_docs >= 0 && (*record)->doc_id >= state.options.max_docs) {
        state.finished = true;
        state.next_doc_id = state.options.max_docs;  // the corpus, as cut, ends there
        state.parquet.reset();
        return std::nullopt;
      }
      return std::move(*record);
    }
    auto line = state.reader->Next();
    if (!line) {
      state.error = line.error();
      state.reader.reset();
      return std::unexpected(state.error);
    }
    if (!line->has_value()) {
      state.jsonl_bytes_of_finished_files += state.reader->file_bytes_consumed();
      state.reader.reset();
      continue;
    }
    CorpusRecord record;
    record.doc_id = state.next_doc_id++;
    ++state.jsonl_docs;
    record.file = state.reader_path;
    record.line = state.reader->lines();
    if ((*line)->too_long) {
      record.reject_reason = "line longer than " + std::to_string(state.options.max_line_bytes) +
                             " bytes (" + std::to_string((*line)->bytes) + ")";
    } else {
      ParseLine((*line)->text, state.options.text_field, &record);
    }
    return record;
  }
}

CorpusProgress CorpusReader::progress() const {
  const State& state = *state_;
  const int64_t current = state.reader ? state.reader->file_bytes_consumed() : 0;
  return {state.next_doc_id, state.jsonl_docs, state.jsonl_bytes_of_finished_files + current};
}

const std::vector<std::string>& CorpusReader::files() const { return state_->files; }

}  // namespace actex
