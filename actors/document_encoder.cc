#include "actors/document_encoder.h"

#include <algorithm>
#include <utility>

namespace actex {

DocumentEncoder::DocumentEncoder(std::vector<std::unique_ptr<Tokenizer>> tokenizers,
                                 DocumentEncoderOptions options)
    : tokenizers_(std::move(tokenizers)),
      options_(std::move(options)),
      team_(std::max<int>(1, static_cast<int>(tokenizers_.size()))) {}

std::vector<EncodedDocument> DocumentEncoder::Encode(std::span<const DocumentMessage> documents) {
  std::vector<EncodedDocument> encoded(documents.size());
  // Each member encodes with its own tokenizer; a document is one task, so a long one
  // does not hold the others back.
  team_.Run(static_cast<int64_t>(documents.size()), [&](int64_t index, int member) {
    const Tokenizer* tokenizer = tokenizers_.empty() ? nullptr : tokenizers_[member].get();
    encoded[index] = EncodeOne(documents[index], tokenizer);
  });
  return encoded;
}

EncodedDocument DocumentEncoder::EncodeOne(const DocumentMessage& document,
                                           const Tokenizer* tokenizer) const {
  EncodedDocument result;
  std::vector<int32_t>& tokens = result.tokens;
  if (options_.bos_token_id >= 0 && (!document.pretokenized || options_.bos_on_pretokenized)) {
    tokens.push_back(options_.bos_token_id);
  }
  if (document.pretokenized) {
    tokens.insert(tokens.end(), document.input_ids.begin(), document.input_ids.end());
  } else if (tokenizer == nullptr) {
    result.failure = document.file + " line " + std::to_string(document.line) + " has text, but " +
                     options_.model_dir +
                     " has no tokenizer.json or tokenizer.model; add one or give "
                     "pre-tokenized \"input_ids\"";
    return result;
  } else {
    auto encoded = tokenizer->Encode(document.text);
    if (!encoded) {
      result.reject = "cannot tokenize: " + encoded.error();
      return result;
    }
    tokens.insert(tokens.end(), encoded->begin(), encoded->end());
  }
  if (tokens.empty()) {
    result.reject = "no tokens";
    return result;
  }
  for (int32_t id : tokens) {
    if (id < 0 || id >= options_.vocab_size) {
      result.reject = "token id " + std::to_string(id) + " is outside the model's vocabulary of " +
                      std::to_string(options_.vocab_size);
      return result;
    }
  }
  return result;
}

}  // namespace actex
