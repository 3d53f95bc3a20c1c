#include "model/tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include "base/utf8.h"
#include "model/tokenizer/file_digest.h"

namespace actex {

SentencePieceTokenizer::SentencePieceTokenizer(
    std::string path, std::string hash,
    std::unique_ptr<sentencepiece::SentencePieceProcessor> processor)
    : file_path_(std::move(path)), file_hash_(std::move(hash)), processor_(std::move(processor)) {}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::expected<std::unique_ptr<SentencePieceTokenizer>, std::string> SentencePieceTokenizer::Create(
    std::string path, std::string_view file_bytes) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const sentencepiece::util::Status status = processor->LoadFromSerializedProto(file_bytes);
  if (!status.ok()) {
    return std::unexpected(path + ": not a usable SentencePiece model: " + status.ToString());
  }
  std::string hash = Sha256HexOfBytes(file_bytes);
  return std::unique_ptr<SentencePieceTokenizer>(
      new SentencePieceTokenizer(std::move(path), std::move(hash), std::move(processor)));
}

std::expected<std::vector<int32_t>, std::string> SentencePieceTokenizer::Encode(
    std::string_view text) const {
  if (const auto bad = FirstInvalidUtf8Byte(text)) {
    return std::unexpected("text is not valid UTF-8 (bad byte at offset " + std::to_string(*bad) +
                           ")");
  }
  std::vector<int> ids;
  const sentencepiece::util::Status status = processor_->Encode(text, &ids);
  if (!status.ok()) {
    return std::unexpected(file_path_ + ": SentencePiece encoding failed: " + status.ToString());
  }
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::expected<std::string, std::string> SentencePieceTokenizer::Decode(
    std::span<const int32_t> ids) const {
  const int pieces = processor_->GetPieceSize();
  for (const int32_t id : ids) {
    if (id < 0 || id >= pieces) {
      return std::unexpected("token id " + std::to_string(id) + " is not in the vocabulary (" +
                             std::to_string(pieces) + " ids)");
    }
  }
  std::string text;
  const std::vector<int> model_ids(ids.begin(), ids.end());
  const sentencepiece::util::Status status = processor_->Decode(model_ids, &text);
  if (!status.ok()) {
    return std::unexpected(file_path_ + ": SentencePiece decoding failed: " + status.ToString());
  }
  return text;
}

}  // namespace actex
