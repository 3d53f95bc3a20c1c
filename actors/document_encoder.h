#ifndef ACTEX_ACTORS_DOCUMENT_ENCODER_H_
#define ACTEX_ACTORS_DOCUMENT_ENCODER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/kernels/thread_team.h"
#include "model/tokenizer/tokenizer.h"
#include "transport/schema.h"

namespace actex {

// What the tokenizer actor makes of one document before packing it.
struct EncodedDocument {
  std::vector<int32_t> tokens;  // [tokens]: BOS first where the plan puts one
  std::string reject;           // non-empty: the document is rejected for this reason
  std::string failure;          // non-empty: the run cannot go on (text without a tokenizer)
};

struct DocumentEncoderOptions {
  std::string model_dir{};  // for the failure when text arrives without a tokenizer
  int vocab_size = 0;
  int32_t bos_token_id = -1;         // prepended to text documents when >= 0
  bool bos_on_pretokenized = false;  // and to pre-tokenized ones
};

// Turns documents into token ids on several threads at once: one thread per tokenizer
// instance (a Tokenizer serves one thread at a time), so a replica's tokenization keeps
// up with a fast device. Each document's result depends on the document alone, never on
// which thread encoded it or on its neighbours, and results come back in the
// documents' order.
class DocumentEncoder {
 public:
  // `tokenizers`: one per thread, all loaded from the same file; empty when the model
  // folder has none (pre-tokenized documents only, on one thread).
  DocumentEncoder(std::vector<std::unique_ptr<Tokenizer>> tokenizers,
                  DocumentEncoderOptions options);

  int threads() const { return team_.size(); }

  // One result per document, in order.
  std::vector<EncodedDocument> Encode(std::span<const DocumentMessage> documents);

 private:
  EncodedDocument EncodeOne(const DocumentMessage& document, const Tokenizer* tokenizer) const;

  std::vector<std::unique_ptr<Tokenizer>> tokenizers_;
  DocumentEncoderOptions options_;
  ThreadTeam team_;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_DOCUMENT_ENCODER_H_
