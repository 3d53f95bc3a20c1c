// DocumentEncoder: documents encoded on several threads give, in order, what the
// tokenizer gives each one alone; rejects and failures are the document's own.

#include "actors/document_encoder.h"

#include <gtest/gtest.h>

#include "model/tokenizer/tokenizer_folder.h"

namespace actex {
namespace {

const std::string kTokenizerDir = std::string(ACTEX_FIXTURES_DIR) + "/tokenizers/bpe-qwen2-style";
constexpr int kVocab = 3259;

std::vector<std::unique_ptr<Tokenizer>> Tokenizers(int count) {
  std::vector<std::unique_ptr<Tokenizer>> tokenizers;
  for (int i = 0; i < count; ++i) {
    auto loaded = LoadTokenizer(kTokenizerDir);
    EXPECT_TRUE(loaded) << loaded.error();
    if (loaded) tokenizers.push_back(std::move(*loaded));
  }
  return tokenizers;
}

DocumentMessage Text(int64_t doc_id, std::string text) {
  DocumentMessage document;
  document.doc_id = doc_id;
  document.text = std::move(text);
  document.file = "corpus.jsonl";
  document.line = doc_id + 1;
  return document;
}

TEST(DocumentEncoderTest, SeveralThreadsGiveEachDocumentsOwnTokensInOrder) {
  auto reference = LoadTokenizer(kTokenizerDir);
  ASSERT_TRUE(reference) << reference.error();
  std::vector<DocumentMessage> documents;
  for (int64_t doc_id = 0; doc_id < 200; ++doc_id) {
    std::string text = "Document " + std::to_string(doc_id) + ":";
    for (int64_t w = 0; w < (doc_id * 53) % 400; ++w) text += w % 3 ? " energy" : " the 7";
    documents.push_back(Text(doc_id, std::move(text)));
  }
  DocumentEncoder encoder(Tokenizers(4), {.vocab_size = kVocab, .bos_token_id = 3256});
  EXPECT_EQ(encoder.threads(), 4);
  const std::vector<EncodedDocument> encoded = encoder.Encode(documents);
  ASSERT_EQ(encoded.size(), documents.size());
  for (size_t i = 0; i < documents.size(); ++i) {
    auto ids = (*reference)->Encode(documents[i].text);
    ASSERT_TRUE(ids) << ids.error();
    std::vector<int32_t> want = {3256};
    want.insert(want.end(), ids->begin(), ids->end());
    EXPECT_EQ(encoded[i].tokens, want) << "document " << i;
    EXPECT_TRUE(encoded[i].reject.empty() && encoded[i].failure.empty());
  }
}

TEST(DocumentEncoderTest, AnIdOutsideTheVocabularyRejectsOnlyItsDocument) {
  DocumentMessage outside;
  outside.doc_id = 1;
  outside.pretokenized = true;
  outside.input_ids = {4, kVocab};
  DocumentMessage empty = outside;
  empty.input_ids.clear();
  std::vector<DocumentMessage> documents = {Text(0, "fine"), outside, empty, Text(3, "also")};
  DocumentEncoder encoder(Tokenizers(2), {.vocab_size = kVocab});
  const std::vector<EncodedDocument> encoded = encoder.Encode(documents);
  ASSERT_EQ(encoded.size(), 4u);
  EXPECT_TRUE(encoded[0].reject.empty());
  EXPECT_NE(encoded[1].reject.find("token id 3259 is outside"), std::string::npos)
      << encoded[1].reject;
  EXPECT_EQ(encoded[2].reject, "no tokens");
  EXPECT_TRUE(encoded[3].reject.empty());
  EXPECT_FALSE(encoded[3].tokens.empty());
}

TEST(DocumentEncoderTest, TextWithoutATokenizerIsAFailureNamingFileLineAndFolder) {
  DocumentEncoder encoder({}, {.model_dir = "/models/bare", .vocab_size = kVocab});
  EXPECT_EQ(encoder.threads(), 1);
  const std::vector<EncodedDocument> encoded = encoder.Encode(std::vector{Text(4, "words")});
  ASSERT_EQ(encoded.size(), 1u);
  EXPECT_NE(encoded[0].failure.find("corpus.jsonl line 5 has text, but /models/bare has no"),
            std::string::npos)
      << encoded[0].failure;
}

}  // namespace
}  // namespace actex
