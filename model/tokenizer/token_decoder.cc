#include "model/tokenizer/token_decoder.h"

#include <algorithm>
#include <optional>

#include "base/utf8.h"
#include "model/tokenizer/byte_level.h"

namespace actex {
namespace {

// The byte of a byte-fallback token "<0xXX>", if `symbol` is one.
std::optional<char> FallbackByte(std::string_view symbol) {
  if (symbol.size() != 6 || !symbol.starts_with("<0x") || symbol.back() != '>') {
    return std::nullopt;
  }
  int value = 0;
  for (const char digit : symbol.substr(3, 2)) {
    value *= 16;
    if (digit >= '0' && digit <= '9') {
      value += digit - '0';
    } else if (digit >= 'A' && digit <= 'F') {
      value += digit - 'A' + 10;
    } else {
      return std::nullopt;
    }
  }
  return static_cast<char>(value);
}

}  // namespace

TokenDecoder::TokenDecoder(const BpeVocabulary& vocab, const std::vector<AddedToken>& added,
                           BpeAlphabet alphabet, bool strips_prepended_space)
    : alphabet_(alphabet), strips_prepended_space_(strips_prepended_space) {
  auto place = [this](int32_t id, const std::string& symbol) {
    if (id < 0) return;
    if (static_cast<size_t>(id) >= symbol_by_id_.size()) symbol_by_id_.resize(id + 1);
    symbol_by_id_[id] = symbol;
  };
  for (const auto& [symbol, id] : vocab) place(id, symbol);
  // An added token's content wins over a vocabulary symbol of the same id, as in HF.
  for (const AddedToken& token : added) place(token.id, token.content);
  const std::array<std::string, 256> symbols = ByteLevelSymbols();
  for (int byte = 0; byte < 256; ++byte) {
    byte_by_symbol_.emplace(symbols[byte], static_cast<char>(byte));
  }
}

std::string TokenDecoder::SymbolBytes(std::string_view symbol) const {
  std::string bytes;
  if (alphabet_ == BpeAlphabet::kCharacters) {
    if (const auto byte = FallbackByte(symbol)) return std::string(1, *byte);
    for (size_t at = 0; at < symbol.size();) {
      if (symbol.substr(at).starts_with(kWordBoundary)) {
        bytes += ' ';
        at += kWordBoundary.size();
      } else {
        bytes += symbol[at++];
      }
    }
    return bytes;
  }
  // A symbol with a character outside the byte alphabet (an added token such as
  // "<|im_start|>" may have one) stands for its own UTF-8 bytes, as in HF's ByteLevel.
  for (size_t at = 0; at < symbol.size();) {
    const size_t length = std::max<size_t>(1, WellFormedUtf8Length(symbol, at));
    const auto byte = byte_by_symbol_.find(std::string(symbol.substr(at, length)));
    if (byte == byte_by_symbol_.end()) return std::string(symbol);
    bytes += byte->second;
    at += length;
  }
  return bytes;
}

std::expected<std::string, std::string> TokenDecoder::Decode(std::span<const int32_t> ids) const {
  std::string text;
  for (const int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= symbol_by_id_.size() || symbol_by_id_[id].empty()) {
      return std::unexpected("token id " + std::to_string(id) + " is not in the vocabulary (" +
                             std::to_string(symbol_by_id_.size()) + " ids)");
    }
    text += SymbolBytes(symbol_by_id_[id]);
  }
  if (strips_prepended_space_ && text.starts_with(' ')) text.erase(0, 1);
  return text;
}

}  // namespace actex
