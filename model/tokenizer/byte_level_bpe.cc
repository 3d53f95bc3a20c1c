#include "model/tokenizer/byte_level_bpe.h"

#include <algorithm>
#include <cstdio>

#include "model/tokenizer/byte_level.h"
#include "base/utf8.h"

namespace actex {
namespace {

// Bounds the piece cache: at most this many pieces, each at most this long. Corpus
// text is dominated by a few thousand frequent words, so this hits nearly always.
constexpr size_t kCacheCapacity = 16384;
constexpr size_t kMaxCachedPieceBytes = 64;

// Min-heap order on (rank, left position): the earliest-ranked merge, leftmost first.
template <typename Candidate>
bool ComesLater(const Candidate& a, const Candidate& b) {
  if (a.rank != b.rank) return a.rank > b.rank;
  return a.left > b.left;
}

std::string HexByte(uint8_t byte) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%02X", byte);
  return text;
}

}  // namespace

std::expected<ByteLevelBpe, std::string> ByteLevelBpe::Create(
    BpeVocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
    BpeOptions options) {
  ByteLevelBpe bpe;
  std::optional<int32_t> unknown_id;
  if (options.unknown_token) {
    const auto found = vocab.find(*options.unknown_token);
    if (found == vocab.end()) {
      return std::unexpected("model.unk_token \"" + *options.unknown_token +
                             "\" is not in model.vocab");
    }
    unknown_id = found->second;
  }
  bpe.merges_.reserve(merges.size());
  std::string merged;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const std::string where =
        "model.merges[" + std::to_string(rank) + "] (\"" + left + "\", \"" + right + "\"): ";
    const auto left_id = vocab.find(left);
    if (left_id == vocab.end())
      return std::unexpected(where + "\"" + left + "\" is not in model.vocab");
    const auto right_id = vocab.find(right);
    if (right_id == vocab.end()) {
      return std::unexpected(where + "\"" + right + "\" is not in model.vocab");
    }
    merged = left + right;
    const auto merged_id = vocab.find(merged);
    if (merged_id == vocab.end()) {
      return std::unexpected(where + "merged symbol \"" + merged + "\" is not in model.vocab");
    }
    bpe.merges_[PairKey(left_id->second, right_id->second)] =
        MergeResult{static_cast<uint32_t>(rank), merged_id->second};
  }
  bpe.vocab_ = std::move(vocab);
  bpe.options_ = std::move(options);
  bpe.unknown_id_ = unknown_id;
  const std::array<std::string, 256> symbols = ByteLevelSymbols();
  for (int byte = 0; byte < 256; ++byte) {
    if (bpe.options_.alphabet == BpeAlphabet::kByteLevel) {
      bpe.bytes_[byte] = bpe.CharacterEntry(symbols[byte]);
    } else if (byte < 0x80) {
      bpe.bytes_[byte] = bpe.CharacterEntry(std::string(1, static_cast<char>(byte)));
    }
  }
  return bpe;
}

ByteLevelBpe::ByteEntry ByteLevelBpe::CharacterEntry(std::string_view character) const {
  ByteEntry entry;
  if (const auto found = vocab_.find(character); found != vocab_.end()) {
    entry.ids.push_back(found->second);
    return entry;
  }
  if (options_.byte_fallback) {
    // Like HuggingFace, fall back on the bytes of the symbol itself (for byte-level
    // BPE, of its byte-level character), and only when every one has a <0xXX> token.
    for (const char symbol_byte : character) {
      const auto found = vocab_.find("<" + HexByte(static_cast<uint8_t>(symbol_byte)) + ">");
      if (found == vocab_.end()) {
        entry.ids.clear();
        break;
      }
      entry.ids.push_back(found->second);
    }
    if (!entry.ids.empty()) return entry;
  }
  if (unknown_id_) {
    entry.ids.push_back(*unknown_id_);
    entry.is_unknown = true;
  }
  return entry;
}

std::expected<void, std::string> ByteLevelBpe::EncodePiece(std::string_view piece,
                                                           std::vector<int32_t>* ids) const {
  if (piece.empty()) return {};
  if (piece.size() == 1) {
    const ByteEntry& entry = bytes_[static_cast<uint8_t>(piece[0])];
    if (!entry.ids.empty()) {
      ids->insert(ids->end(), entry.ids.begin(), entry.ids.end());
      return {};
    }
  }
  if (const auto cached = cache_.find(piece); cached != cache_.end()) {
    ids->insert(ids->end(), cached->second.begin(), cached->second.end());
    return {};
  }
  const size_t first = ids->size();
  bool whole_piece_in_vocab = false;
  if (options_.ignore_merges) {
    const std::string symbol =
        options_.alphabet == BpeAlphabet::kByteLevel ? ByteLevelEncode(piece) : std::string(piece);
    if (const auto found = vocab_.find(symbol); found != vocab_.end()) {
      ids->push_back(found->second);
      whole_piece_in_vocab = true;
    }
  }
  if (!whole_piece_in_vocab) {
    if (auto merged = Merge(piece, ids); !merged) return merged;
  }
  if (piece.size() <= kMaxCachedPieceBytes) {
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::string(piece), std::vector<int32_t>(ids->begin() + first, ids->end()));
  }
  return {};
}

void ByteLevelBpe::PushCandidate(int32_t left, bool keep_heap_order) const {
  const Symbol& symbol = symbols_[left];
  if (symbol.next < 0) return;
  const auto found = merges_.find(PairKey(symbol.id, symbols_[symbol.next].id));
  if (found == merges_.end()) return;
  heap_.push_back(Candidate{found->second.rank, static_cast<uint32_t>(left), symbol.id,
                            symbols_[symbol.next].id, found->second.merged_id});
  if (keep_heap_order) std::push_heap(heap_.begin(), heap_.end(), ComesLater<Candidate>);
}

std::expected<void, std::string> ByteLevelBpe::Merge(std::string_view piece,
                                                     std::vector<int32_t>* ids) const {
  symbols_.clear();
  heap_.clear();
  bool previous_unknown = false;
  const bool by_character = options_.alphabet == BpeAlphabet::kCharacters;
  ByteEntry character_entry;
  for (size_t at = 0; at < piece.size();) {
    const size_t length = by_character ? Utf8Length(static_cast<uint8_t>(piece[at])) : 1;
    const std::string_view symbol = piece.substr(at, length);
    at += length;
    const ByteEntry* entry = &bytes_[static_cast<uint8_t>(symbol[0])];
    if (length > 1) {
      character_entry = CharacterEntry(symbol);
      entry = &character_entry;
    }
    if (entry->ids.empty()) {
      const std::string what = by_character ? "character \"" + std::string(symbol) + "\""
                                            : "byte " + HexByte(static_cast<uint8_t>(symbol[0])) +
                                                  " (symbol \"" + ByteLevelEncode(symbol) + "\")";
      return std::unexpected(what +
                             " is not in the vocabulary, and the model has neither an "
                             "unk_token nor byte_fallback tokens for it");
    }
    if (entry->is_unknown && previous_unknown && options_.fuse_unknown) continue;
    previous_unknown = entry->is_unknown;
    for (const int32_t id : entry->ids) {
      const auto index = static_cast<int32_t>(symbols_.size());
      symbols_.push_back(Symbol{id, index - 1, index + 1, true});
    }
  }
  symbols_.back().next = -1;
  // Heapify once (linear) rather than pushing one by one: long pieces start with
  // millions of candidates.
  for (int32_t index = 0; index + 1 < static_cast<int32_t>(symbols_.size()); ++index) {
    PushCandidate(index, /*keep_heap_order=*/false);
  }
  std::make_heap(heap_.begin(), heap_.end(), ComesLater<Candidate>);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), ComesLater<Candidate>);
    const Candidate candidate = heap_.back();
    heap_.pop_back();
    Symbol& left = symbols_[candidate.left];
    // Skip candidates made stale by an earlier merge: a symbol's id only changes by
    // growing, so unchanged ids mean the pair is still the one queued.
    if (!left.alive || left.id != candidate.left_id || left.next < 0) continue;
    Symbol& right = symbols_[left.next];
    if (right.id != candidate.right_id) continue;
    left.id = candidate.merged_id;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols_[left.next].prev = static_cast<int32_t>(candidate.left);
    if (left.prev >= 0) PushCandidate(left.prev, /*keep_heap_order=*/true);
    PushCandidate(static_cast<int32_t>(candidate.left), /*keep_heap_order=*/true);
  }
  for (int32_t index = 0; index >= 0; index = symbols_[index].next) {
    ids->push_back(symbols_[index].id);
  }
  return {};
}

}  // namespace actex
