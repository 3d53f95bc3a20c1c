#ifndef ACTEX_MODEL_TOKENIZER_TOKEN_DECODER_H_
#define ACTEX_MODEL_TOKENIZER_TOKEN_DECODER_H_

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/tokenizer/added_tokens.h"
#include "model/tokenizer/byte_level_bpe.h"

namespace actex {

// SentencePiece's word boundary "▁" (U+2581), which character vocabularies write for ' '.
inline constexpr std::string_view kWordBoundary = "\u2581";

// Turns the ids of a tokenizer.json BPE model back into text, as HuggingFace's decoder
// does with skip_special_tokens=false:
//   - byte-level vocabularies (Qwen, GPT-2, Llama 3): every symbol's characters mapped
//     back through the GPT-2 byte alphabet (byte_level.h) to the bytes they stand for;
//   - character vocabularies (SentencePiece-style: Gemma, Llama 2): "▁" becomes a space,
//     <0xXX> tokens their byte, and when the normalizer prepends "▁" to the text the
//     first space of the result is dropped (the decoder's Strip step).
// Added tokens (such as "<|im_end|>") decode as their content, through the same steps.
class TokenDecoder {
 public:
  // `vocab` maps symbols to ids; ids missing from both it and `added` decode to an
  // error. `strips_prepended_space`: the normalizer prepends "▁".
  TokenDecoder(const BpeVocabulary& vocab, const std::vector<AddedToken>& added,
               BpeAlphabet alphabet, bool strips_prepended_space);

  // The bytes `ids` stand for. Ids that cut a character in two give its partial UTF-8
  // bytes, so the result of a slice need not be valid UTF-8. Fails naming the first
  // id that is no token of the vocabulary.
  std::expected<std::string, std::string> Decode(std::span<const int32_t> ids) const;

 private:
  // The bytes one vocabulary symbol stands for.
  std::string SymbolBytes(std::string_view symbol) const;

  std::vector<std::string> symbol_by_id_;                 // "" where no symbol has that id
  std::unordered_map<std::string, char> byte_by_symbol_;  // byte-level alphabet, reversed
  BpeAlphabet alphabet_;
  bool strips_prepended_space_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_TOKEN_DECODER_H_
