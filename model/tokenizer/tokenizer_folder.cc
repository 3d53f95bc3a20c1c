#include "model/tokenizer/tokenizer_folder.h"

#include <filesystem>
#include <system_error>

#include "base/regular_file.h"
#include "model/tokenizer/bpe_tokenizer.h"
#include "model/tokenizer/file_digest.h"
#include "model/tokenizer/sentencepiece_tokenizer.h"

namespace actex {
namespace {

constexpr const char* kHuggingFaceFile = "tokenizer.json";
constexpr const char* kSentencePieceFile = "tokenizer.model";

// Whether an entry of that name is there at all, of whatever type: a tokenizer.json
// that is a directory, a FIFO or a dangling symlink is then refused by the reader,
// saying what it is, instead of being passed over as absent. An lstat error counts as
// there, for the reader to report.
bool IsPresent(const std::filesystem::path& path) {
  return PathEntryExists(path.string()).value_or(true);
}

}  // namespace

bool HasTokenizer(const std::string& dir) {
  const std::filesystem::path base(dir);
  return IsPresent(base / kHuggingFaceFile) || IsPresent(base / kSentencePieceFile);
}

std::expected<std::unique_ptr<Tokenizer>, std::string> LoadTokenizer(const std::string& dir) {
  const std::filesystem::path base(dir);
  const std::filesystem::path json_path = base / kHuggingFaceFile;
  if (IsPresent(json_path)) {
    auto bytes = ReadTokenizerFile(json_path.string());
    if (!bytes) return std::unexpected(bytes.error());
    auto tokenizer = BpeTokenizer::Create(json_path.string(), *bytes);
    if (!tokenizer) {
      // Never fall back silently: the two files need not tokenize alike.
      const bool has_model = IsPresent(base / kSentencePieceFile);
      return std::unexpected(tokenizer.error() +
                             (has_model ? " (tokenizer.model in the same directory is not used "
                                          "when tokenizer.json is present)"
                                        : ""));
    }
    return std::unique_ptr<Tokenizer>(std::move(*tokenizer));
  }
  const std::filesystem::path model_path = base / kSentencePieceFile;
  if (IsPresent(model_path)) {
    auto bytes = ReadTokenizerFile(model_path.string());
    if (!bytes) return std::unexpected(bytes.error());
    auto tokenizer = SentencePieceTokenizer::Create(model_path.string(), *bytes);
    if (!tokenizer) return std::unexpected(tokenizer.error());
    return std::unique_ptr<Tokenizer>(std::move(*tokenizer));
  }
  std::error_code error;
  const bool dir_exists = std::filesystem::is_directory(base, error);
  return std::unexpected("no tokenizer.json or tokenizer.model found in " + dir +
                         (dir_exists ? std::string() : " (the directory does not exist)"));
}

}  // namespace actex
