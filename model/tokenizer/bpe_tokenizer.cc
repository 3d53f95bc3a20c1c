#include "model/tokenizer/bpe_tokenizer.h"

#include "base/utf8.h"
#include "model/tokenizer/file_digest.h"
#include "model/tokenizer/tokenizer_json.h"

namespace actex {
namespace {

std::vector<AddedToken> AllAddedTokens(const TokenizerJsonSpec& spec) {
  std::vector<AddedToken> added = spec.raw_added_tokens;
  added.insert(added.end(), spec.normalized_added_tokens.begin(),
               spec.normalized_added_tokens.end());
  return added;
}

// Whether the normalizer writes "▁" before the text (Llama 2's files), which the
// file's decoder strips again.
bool PrependsWordBoundary(const std::vector<NormalizerStep>& steps) {
  for (const NormalizerStep& step : steps) {
    if (step.kind == NormalizerStep::Kind::kPrepend && step.content == kWordBoundary) return true;
  }
  return false;
}

}  // namespace

BpeTokenizer::BpeTokenizer(std::string path, std::string hash, TextNormalizer normalizer,
                           PreTokenizer pre_tokenizer, AddedTokenMatcher raw_added,
                           AddedTokenMatcher normalized_added, ByteLevelBpe bpe,
                           TokenDecoder decoder)
    : file_path_(std::move(path)),
      file_hash_(std::move(hash)),
      normalizer_(std::move(normalizer)),
      pre_tokenizer_(std::move(pre_tokenizer)),
      raw_added_(std::move(raw_added)),
      normalized_added_(std::move(normalized_added)),
      bpe_(std::move(bpe)),
      decoder_(std::move(decoder)) {}

std::expected<std::unique_ptr<BpeTokenizer>, std::string> BpeTokenizer::Create(
    std::string path, std::string_view file_bytes) {
  auto spec = ParseTokenizerJson(file_bytes);
  if (!spec) return std::unexpected(path + ": " + spec.error());

  std::vector<RegexSplitter> splitters;
  for (const SplitRule& rule : spec->split_rules) {
    auto splitter = RegexSplitter::Create(rule);
    if (!splitter) return std::unexpected(path + ": pre_tokenizer: " + splitter.error());
    splitters.push_back(std::move(*splitter));
  }

  // Built before the added tokens' content is normalized: they decode as written.
  TokenDecoder decoder(spec->vocab, AllAddedTokens(*spec), spec->bpe_options.alphabet,
                       PrependsWordBoundary(spec->normalization));
  TextNormalizer normalizer(spec->normalization);
  // Tokens marked normalized=true are looked for in normalized text, so their own
  // content is normalized the same way.
  for (AddedToken& token : spec->normalized_added_tokens) {
    std::string normalized;
    if (auto status = normalizer.Normalize(token.content, &normalized); !status) {
      return std::unexpected(path + ": added token \"" + token.content + "\": " + status.error());
    }
    token.content = std::move(normalized);
  }

  auto bpe = ByteLevelBpe::Create(std::move(spec->vocab), spec->merges, spec->bpe_options);
  if (!bpe) return std::unexpected(path + ": " + bpe.error());

  std::string hash = Sha256HexOfBytes(file_bytes);
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(
      std::move(path), std::move(hash), std::move(normalizer), PreTokenizer(std::move(splitters)),
      AddedTokenMatcher(std::move(spec->raw_added_tokens)),
      AddedTokenMatcher(std::move(spec->normalized_added_tokens)), std::move(*bpe),
      std::move(decoder)));
}

std::expected<std::vector<int32_t>, std::string> BpeTokenizer::Encode(std::string_view text) const {
  if (const auto bad = FirstInvalidUtf8Byte(text)) {
    return std::unexpected("text is not valid UTF-8 (bad byte at offset " + std::to_string(*bad) +
                           ")");
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  size_t pos = 0;
  while (true) {
    const auto match = raw_added_.FindNext(text, pos);
    const size_t stretch_end = match ? match->begin : text.size();
    if (stretch_end > pos) {
      if (auto status = EncodeBetweenAddedTokens(text.substr(pos, stretch_end - pos), &ids);
          !status) {
        return std::unexpected(status.error());
      }
    }
    if (!match) break;
    ids.push_back(match->id);
    pos = match->end;
  }
  return ids;
}

std::expected<void, std::string> BpeTokenizer::EncodeBetweenAddedTokens(
    std::string_view text, std::vector<int32_t>* ids) const {
  std::string_view normalized = text;
  if (!normalizer_.is_identity()) {
    if (auto status = normalizer_.Normalize(text, &normalized_); !status) return status;
    normalized = normalized_;
  }
  size_t pos = 0;
  while (true) {
    const auto match = normalized_added_.FindNext(normalized, pos);
    const size_t stretch_end = match ? match->begin : normalized.size();
    if (stretch_end > pos) {
      if (auto status = EncodeNormalized(normalized.substr(pos, stretch_end - pos), ids); !status) {
        return status;
      }
    }
    if (!match) break;
    ids->push_back(match->id);
    pos = match->end;
  }
  return {};
}

std::expected<void, std::string> BpeTokenizer::EncodeNormalized(std::string_view text,
                                                                std::vector<int32_t>* ids) const {
  if (auto status = pre_tokenizer_.Split(text, &pieces_); !status) return status;
  for (const std::string_view piece : pieces_) {
    if (auto status = bpe_.EncodePiece(piece, ids); !status) {
      return std::unexpected(file_path_ + ": " + status.error());
    }
  }
  return {};
}

}  // namespace actex
