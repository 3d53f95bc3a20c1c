// Fuzzes loading a tokenizer.json: the input is the file's bytes, given to
// BpeTokenizer::Create as LoadTokenizer gives them; an accepted tokenizer then
// encodes a few fixed texts.
//
// Invariants checked: a refusal names the file; an accepted tokenizer has a SHA-256
// file hash, and every id it produces for the sample texts is an id the file
// defines (a model.vocab value or an added token's id).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "model/tokenizer/bpe_tokenizer.h"
#include "tests/fuzz/fuzz_check.h"

namespace actex {
namespace {

constexpr const char* kPath = "model/tokenizer.json";

// Short texts that reach every stage: added tokens, NFC (decomposed and composed
// forms), whitespace runs, digits, punctuation and four-byte characters.
constexpr std::string_view kSamples[] = {
    "Hello world, it's 2024!",
    "  leading\tand\n\ntrailing  \r\n",
    "cafe\xcc\x81 caf\xc3\xa9 \xef\xac\x81 \xe6\x9d\xb1\xe4\xba\xac \xf0\x9f\x99\x82",
    "<|endoftext|>x<|im_start|>user<|im_end|>",
    std::string_view("\0\x01\x7f", 3),
};

// Every id the file defines. Create accepted it, so it is valid JSON of the layout
// the parser checked.
std::set<int32_t> DefinedIds(std::string_view json_text) {
  std::set<int32_t> ids;
  const auto json = nlohmann::json::parse(json_text);
  for (const auto& [symbol, id] : json.at("model").at("vocab").items()) {
    ids.insert(id.get<int32_t>());
  }
  if (auto added = json.find("added_tokens"); added != json.end() && added->is_array()) {
    for (const auto& token : *added) ids.insert(token.at("id").get<int32_t>());
  }
  return ids;
}

void FuzzOneInput(std::string_view input) {
  auto tokenizer = BpeTokenizer::Create(kPath, input);
  if (!tokenizer) {
    FUZZ_CHECK(tokenizer.error().starts_with(std::string(kPath) + ": "),
               "error does not name the file: %s", tokenizer.error().c_str());
    return;
  }
  FUZZ_CHECK((*tokenizer)->file_hash().size() == 64, "file hash %s",
             (*tokenizer)->file_hash().c_str());
  const std::set<int32_t> defined = DefinedIds(input);
  for (const std::string_view text : kSamples) {
    auto ids = (*tokenizer)->Encode(text);
    if (!ids) continue;  // e.g. a byte without a symbol, unk or fallback: refused, fine
    for (int32_t id : *ids) {
      FUZZ_CHECK(defined.contains(id), "id %d is not defined in the file", id);
    }
  }
}

}  // namespace
}  // namespace actex

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  actex::FuzzOneInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
