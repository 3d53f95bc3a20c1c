#ifndef ACTEX_MODEL_TOKENIZER_TEXT_NORMALIZER_H_
#define ACTEX_MODEL_TOKENIZER_TEXT_NORMALIZER_H_

#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace actex {

enum class NormalizationForm { kNfc, kNfd, kNfkc, kNfkd };

// One step of a tokenizer.json "normalizer": a Unicode normalization form (as the
// HuggingFace NFC/NFD/NFKC/NFKD normalizers, by libutf8proc), Replace of every
// occurrence of a literal string (SentencePiece-style files write ' ' as "▁"), or
// Prepend of a string to text that is not empty.
struct NormalizerStep {
  enum class Kind { kForm, kReplace, kPrepend } kind = Kind::kForm;
  NormalizationForm form = NormalizationForm::kNfc;  // kForm
  std::string pattern;                               // kReplace: what is replaced
  std::string content;                               // kReplace, kPrepend: what goes in

  static NormalizerStep Form(NormalizationForm form) { return {Kind::kForm, form, "", ""}; }
  static NormalizerStep Replace(std::string pattern, std::string content) {
    return {Kind::kReplace, NormalizationForm::kNfc, std::move(pattern), std::move(content)};
  }
  static NormalizerStep Prepend(std::string content) {
    return {Kind::kPrepend, NormalizationForm::kNfc, "", std::move(content)};
  }
};

// Applies the steps in order. No steps leaves text as is.
class TextNormalizer {
 public:
  TextNormalizer() = default;
  explicit TextNormalizer(std::vector<NormalizerStep> steps) : steps_(std::move(steps)) {}

  bool is_identity() const { return steps_.empty(); }

  // Writes the normalized `text` to `out` (replacing its contents). `text` must be
  // valid UTF-8; an error is returned only if libutf8proc rejects it.
  std::expected<void, std::string> Normalize(std::string_view text, std::string* out) const;

 private:
  std::vector<NormalizerStep> steps_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_TEXT_NORMALIZER_H_
