#ifndef ACTEX_MODEL_TOKENIZER_BYTE_LEVEL_BPE_H_
#define ACTEX_MODEL_TOKENIZER_BYTE_LEVEL_BPE_H_

#include <array>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace actex {

struct BpeStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// Vocabulary symbol -> id, looked up with string_views.
using BpeVocabulary = std::unordered_map<std::string, int32_t, BpeStringHash, std::equal_to<>>;

// What a piece starts as before merging: one symbol per byte, written in the GPT-2
// byte-level alphabet (byte_level.h), or one symbol per Unicode character, a character
// missing from the vocabulary falling back on <0xXX> tokens of its bytes or the unk
// token (SentencePiece-style files: Gemma, Llama 2).
enum class BpeAlphabet { kByteLevel, kCharacters };

// The BPE model fields of tokenizer.json that change results (see HuggingFace's BPE).
struct BpeOptions {
  BpeAlphabet alphabet = BpeAlphabet::kByteLevel;  // from the pre-tokenizer's ByteLevel step
  std::optional<std::string> unknown_token;        // "unk_token"
  bool fuse_unknown = false;                       // "fuse_unk"
  bool byte_fallback = false;                      // "byte_fallback": <0xXX> tokens
  bool ignore_merges = false;                      // "ignore_merges": whole-piece vocab hit first
};

// A BPE model: a piece starts as one symbol per byte or per character (BpeAlphabet)
// and adjacent symbols are merged, lowest merge rank first and leftmost first among
// equal ranks, until no listed merge applies; the ids of the remaining symbols are
// the piece's tokens.
//
// Keeps a bounded cache of piece -> ids, so an instance is used by one thread at a
// time (Encode is const but not thread-safe).
class ByteLevelBpe {
 public:
  // `merges` are the pairs in rank order (rank = index; a later duplicate wins, as in
  // HuggingFace). Fails when a merge names a symbol, or yields a symbol, that is not
  // in `vocab`, or when the unk token is not in `vocab`; messages cite model.merges[i].
  static std::expected<ByteLevelBpe, std::string> Create(
      BpeVocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
      BpeOptions options);

  // Appends the ids of one pre-tokenized piece. A byte whose symbol is not in the
  // vocabulary becomes byte-fallback tokens or the unk token when the options allow,
  // and is an error otherwise (never silently dropped).
  std::expected<void, std::string> EncodePiece(std::string_view piece,
                                               std::vector<int32_t>* ids) const;

  size_t cached_pieces() const { return cache_.size(); }

 private:
  struct MergeResult {
    uint32_t rank = 0;
    int32_t merged_id = 0;
  };
  // How one byte enters the merge loop: its symbol's id, or fallback ids, or unk.
  struct ByteEntry {
    std::vector<int32_t> ids;  // empty: no usable id (unknown)
    bool is_unknown = false;   // ids holds just the unk id
  };
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    bool alive;
  };
  struct Candidate {
    uint32_t rank;
    uint32_t left;  // index into symbols_
    int32_t left_id;
    int32_t right_id;
    int32_t merged_id;
  };

  ByteLevelBpe() = default;
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  std::expected<void, std::string> Merge(std::string_view piece, std::vector<int32_t>* ids) const;
  // How a multi-byte character enters the merge loop (kCharacters).
  ByteEntry CharacterEntry(std::string_view character) const;
  // Queues the merge of symbol `left` with its right neighbour, if one is listed.
  void PushCandidate(int32_t left, bool keep_heap_order) const;

  BpeVocabulary vocab_;
  std::unordered_map<uint64_t, MergeResult> merges_;
  std::array<ByteEntry, 256> bytes_;  // by byte; for kCharacters, ASCII only
  std::optional<int32_t> unknown_id_;
  BpeOptions options_;

  mutable std::unordered_map<std::string, std::vector<int32_t>, BpeStringHash, std::equal_to<>>
      cache_;
  mutable std::vector<Symbol> symbols_;
  mutable std::vector<Candidate> heap_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_BYTE_LEVEL_BPE_H_
