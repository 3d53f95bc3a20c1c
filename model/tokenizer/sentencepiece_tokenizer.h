#ifndef ACTEX_MODEL_TOKENIZER_SENTENCEPIECE_TOKENIZER_H_
#define ACTEX_MODEL_TOKENIZER_SENTENCEPIECE_TOKENIZER_H_

#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}  // namespace sentencepiece

namespace actex {

// A SentencePiece tokenizer.model (unigram or BPE) run through libsentencepiece:
// Encode gives exactly the ids of SentencePieceProcessor::Encode (Python's
// `sp.encode(text, out_type=int)`): the model's own normalization, no BOS/EOS, no
// sampling.
class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads the serialized model proto in `file_bytes`; `path` is used in error
  // messages and returned by file_path(); file_hash() is the SHA-256 of `file_bytes`.
  static std::expected<std::unique_ptr<SentencePieceTokenizer>, std::string> Create(
      std::string path, std::string_view file_bytes);
  ~SentencePieceTokenizer() override;

  // Fails on invalid UTF-8 (SentencePiece would silently replace it).
  std::expected<std::vector<int32_t>, std::string> Encode(std::string_view text) const override;
  // SentencePieceProcessor::DecodeIds; fails naming an id outside the model's pieces.
  std::expected<std::string, std::string> Decode(std::span<const int32_t> ids) const override;
  const std::string& file_hash() const override { return file_hash_; }
  const std::string& file_path() const override { return file_path_; }

 private:
  SentencePieceTokenizer(std::string path, std::string hash,
                         std::unique_ptr<sentencepiece::SentencePieceProcessor> processor);

  std::string file_path_;
  std::string file_hash_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_SENTENCEPIECE_TOKENIZER_H_
