#ifndef ACTEX_MODEL_TOKENIZER_BPE_TOKENIZER_H_
#define ACTEX_MODEL_TOKENIZER_BPE_TOKENIZER_H_

#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer/added_tokens.h"
#include "model/tokenizer/byte_level_bpe.h"
#include "model/tokenizer/pretokenizer.h"
#include "model/tokenizer/text_normalizer.h"
#include "model/tokenizer/token_decoder.h"
#include "model/tokenizer/tokenizer.h"

namespace actex {

// A HuggingFace tokenizer.json byte-level BPE tokenizer (the Qwen2 layout), encoding
// as the `tokenizers` library does with add_special_tokens=false:
//   1. added tokens with normalized=false are found in the raw text (leftmost,
//      longest) and each becomes its own id;
//   2. each stretch between them is normalized (e.g. NFC), then searched for added
//      tokens with normalized=true;
//   3. the remaining text is split by the pre-tokenizer regexes, and every piece is
//      encoded by byte-level BPE.
// Encode is const but uses per-instance caches: one thread at a time per instance.
class BpeTokenizer final : public Tokenizer {
 public:
  // Builds the tokenizer from the bytes of a tokenizer.json. `path` is used in error
  // messages and returned by file_path(); file_hash() is the SHA-256 of `file_bytes`.
  static std::expected<std::unique_ptr<BpeTokenizer>, std::string> Create(
      std::string path, std::string_view file_bytes);

  // Fails on invalid UTF-8 (naming the byte offset), or when a byte has no vocabulary
  // symbol and the model has no unk/byte fallback.
  std::expected<std::vector<int32_t>, std::string> Encode(std::string_view text) const override;
  // As the file's BPE decoder does (token_decoder.h).
  std::expected<std::string, std::string> Decode(std::span<const int32_t> ids) const override {
    return decoder_.Decode(ids);
  }
  const std::string& file_hash() const override { return file_hash_; }
  const std::string& file_path() const override { return file_path_; }

 private:
  BpeTokenizer(std::string path, std::string hash, TextNormalizer normalizer,
               PreTokenizer pre_tokenizer, AddedTokenMatcher raw_added,
               AddedTokenMatcher normalized_added, ByteLevelBpe bpe, TokenDecoder decoder);

  std::expected<void, std::string> EncodeBetweenAddedTokens(std::string_view text,
                                                            std::vector<int32_t>* ids) const;
  std::expected<void, std::string> EncodeNormalized(std::string_view text,
                                                    std::vector<int32_t>* ids) const;

  std::string file_path_;
  std::string file_hash_;
  TextNormalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  AddedTokenMatcher raw_added_;
  AddedTokenMatcher normalized_added_;
  ByteLevelBpe bpe_;
  TokenDecoder decoder_;

  mutable std::string normalized_;
  mutable std::vector<std::string_view> pieces_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_BPE_TOKENIZER_H_
