// Fuzzes the byte-level BPE tokenizer (the Qwen2 layout) on arbitrary text: the
// fixture tests/fixtures/tokenizers/bpe-qwen2-style/tokenizer.json is loaded once
// and every input is encoded as a corpus document would be.
//
// Invariants checked: text that is not UTF-8 is refused with a message saying so;
// UTF-8 text always encodes (every byte has a byte-level symbol); every id is one
// the tokenizer.json defines; encoding twice (the second time from the piece cache)
// gives the same ids; and the ids decode back to the text: their vocabulary symbols
// mapped back to bytes through the GPT-2 byte alphabet, and added tokens to their
// content, give a string canonically equivalent to the input (equal after NFC, which
// is the fixture's normalizer).

#include <utf8proc.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer/bpe_tokenizer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_utf8.h"

namespace actex {
namespace {

constexpr const char* kTokenizerPath =
    ACTEX_FIXTURES_DIR "/tokenizers/bpe-qwen2-style/tokenizer.json";

// GPT-2's bytes_to_unicode, inverted: code point -> byte. Built here from its
// definition rather than taken from the code under test.
std::map<char32_t, uint8_t> ByteOfCodePoint() {
  std::map<char32_t, uint8_t> bytes;
  char32_t next_extra = 256;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable =
        (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE);
    bytes[printable ? static_cast<char32_t>(byte) : next_extra++] = static_cast<uint8_t>(byte);
  }
  return bytes;
}

// What the harness knows about the fixture, read from the JSON directly.
struct Fixture {
  std::unique_ptr<BpeTokenizer> tokenizer;
  std::map<int32_t, std::string> bytes_of_id;  // decoded bytes of every id
};

std::string ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  FUZZ_CHECK(in.good(), "cannot read %s", path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The bytes a vocabulary symbol stands for: each code point through the alphabet.
std::string SymbolBytes(const std::string& symbol, const std::map<char32_t, uint8_t>& alphabet) {
  std::string bytes;
  const auto* text = reinterpret_cast<const utf8proc_uint8_t*>(symbol.data());
  utf8proc_ssize_t pos = 0;
  const auto size = static_cast<utf8proc_ssize_t>(symbol.size());
  while (pos < size) {
    utf8proc_int32_t code_point = 0;
    const utf8proc_ssize_t length = utf8proc_iterate(text + pos, size - pos, &code_point);
    FUZZ_CHECK(length > 0, "fixture symbol is not UTF-8");
    auto found = alphabet.find(static_cast<char32_t>(code_point));
    FUZZ_CHECK(found != alphabet.end(), "fixture symbol outside the byte alphabet");
    bytes.push_back(static_cast<char>(found->second));
    pos += length;
  }
  return bytes;
}

const Fixture& LoadFixture() {
  static const Fixture* fixture = [] {
    auto* loaded = new Fixture();
    const std::string json_text = ReadFile(kTokenizerPath);
    auto tokenizer = BpeTokenizer::Create(kTokenizerPath, json_text);
    FUZZ_CHECK(tokenizer.has_value(), "fixture refused: %s", tokenizer.error().c_str());
    loaded->tokenizer = std::move(*tokenizer);
    const auto json = nlohmann::json::parse(json_text);
    const auto alphabet = ByteOfCodePoint();
    for (const auto& [symbol, id] : json.at("model").at("vocab").items()) {
      loaded->bytes_of_id[id.get<int32_t>()] = SymbolBytes(symbol, alphabet);
    }
    for (const auto& token : json.at("added_tokens")) {
      loaded->bytes_of_id[token.at("id").get<int32_t>()] = token.at("content").get<std::string>();
    }
    return loaded;
  }();
  return *fixture;
}

// NFC of valid UTF-8 (NUL bytes included), or nullopt if utf8proc refuses it.
std::optional<std::string> Nfc(std::string_view text) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &out,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (length < 0) return std::nullopt;
  std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(length));
  std::free(out);
  return result;
}

void FuzzOneInput(std::string_view text) {
  const Fixture& fixture = LoadFixture();
  auto ids = fixture.tokenizer->Encode(text);
  if (!IsWellFormedUtf8(text)) {
    FUZZ_CHECK(!ids.has_value(), "text that is not UTF-8 was encoded");
    FUZZ_CHECK(ids.error().find("UTF-8") != std::string::npos, "refusal does not say why: %s",
               ids.error().c_str());
    return;
  }
  FUZZ_CHECK(ids.has_value(), "UTF-8 text refused: %s", ids.error().c_str());
  FUZZ_CHECK(text.empty() == ids->empty(), "%zu ids for %zu bytes", ids->size(), text.size());
  std::string decoded;
  for (int32_t id : *ids) {
    auto found = fixture.bytes_of_id.find(id);
    FUZZ_CHECK(found != fixture.bytes_of_id.end(), "id %d is not in the tokenizer", id);
    decoded += found->second;
  }
  auto again = fixture.tokenizer->Encode(text);
  FUZZ_CHECK(again.has_value() && *again == *ids, "a second encoding differs");
  const auto expected = Nfc(text);
  if (!expected) return;  // utf8proc refuses it: no reference to compare with
  const auto actual = Nfc(decoded);
  FUZZ_CHECK(actual.has_value() && *actual == *expected,
             "the ids decode to %zu bytes that are not the text's %zu", decoded.size(),
             text.size());
}

}  // namespace
}  // namespace actex

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  actex::FuzzOneInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
