// TokenDecoder: the decoder steps of a SentencePiece-style tokenizer.json (Llama 2's
// Prepend("▁") normalizer stripped again, <0xXX> byte fallback) and of a byte-level one.
#include "model/tokenizer/token_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/tokenizer/byte_level.h"

namespace actex {
namespace {

BpeVocabulary CharacterVocabulary() {
  return {{"\u2581Hello", 0}, {"\u2581world", 1}, {"<0xE2>", 2}, {"<0x82>", 3},
          {"<0xAC>", 4},      {"\u2581", 5},      {"<s>", 6}};
}

TEST(TokenDecoder, WordBoundariesBecomeSpacesAndFallbackTokensTheirBytes) {
  const TokenDecoder decoder(CharacterVocabulary(), {}, BpeAlphabet::kCharacters, false);
  const std::vector<int32_t> ids = {0, 1, 5, 2, 3, 4};
  auto text = decoder.Decode(ids);
  ASSERT_TRUE(text.has_value()) << text.error();
  EXPECT_EQ(*text, " Hello world \u20AC");  // € is E2 82 AC
}

TEST(TokenDecoder, ThePrependedBoundaryIsStrippedOnceAtTheStart) {
  const TokenDecoder decoder(CharacterVocabulary(), {}, BpeAlphabet::kCharacters, true);
  const std::vector<int32_t> ids = {0, 1};
  EXPECT_EQ(decoder.Decode(ids).value(), "Hello world");
  const std::vector<int32_t> after_bos = {6, 0};
  EXPECT_EQ(decoder.Decode(after_bos).value(), "<s> Hello");
}

TEST(TokenDecoder, ByteLevelSymbolsMapBackToTheirBytes) {
  BpeVocabulary vocab = {{ByteLevelEncode(" caf\xC3\xA9"), 0}, {ByteLevelEncode("\n"), 1}};
  const TokenDecoder decoder(vocab, {{"<|im_end|>", 2}, {"\u2603 snow", 3}},
                             BpeAlphabet::kByteLevel, false);
  const std::vector<int32_t> ids = {0, 1, 2, 3};
  EXPECT_EQ(decoder.Decode(ids).value(), " caf\xC3\xA9\n<|im_end|>\u2603 snow");
}

TEST(TokenDecoder, AnIdWithNoSymbolIsRefusedNamingIt) {
  const TokenDecoder decoder(CharacterVocabulary(), {}, BpeAlphabet::kCharacters, false);
  const std::vector<int32_t> ids = {0, 7};
  auto text = decoder.Decode(ids);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error(), "token id 7 is not in the vocabulary (7 ids)");
}

}  // namespace
}  // namespace actex
