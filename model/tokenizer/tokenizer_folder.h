#ifndef ACTEX_MODEL_TOKENIZER_TOKENIZER_FOLDER_H_
#define ACTEX_MODEL_TOKENIZER_TOKENIZER_FOLDER_H_

#include <expected>
#include <memory>
#include <string>

#include "model/tokenizer/tokenizer.h"

namespace actex {

// Loads `dir`/tokenizer.json (byte-level BPE, preferred) or `dir`/tokenizer.model
// (SentencePiece). Errors name the file; "no tokenizer" is an error whose message
// says so, so callers may accept it when the corpus is pre-tokenized.
std::expected<std::unique_ptr<Tokenizer>, std::string> LoadTokenizer(const std::string& dir);

// True when `dir` has an entry named tokenizer.json or tokenizer.model, of any type:
// LoadTokenizer then refuses one that is a directory, a FIFO or a dangling symlink,
// saying so, rather than treating the folder as one without a tokenizer.
bool HasTokenizer(const std::string& dir);

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_TOKENIZER_FOLDER_H_
