#ifndef ACTEX_MODEL_TOKENIZER_UNICODE_NORMALIZER_H_
#define ACTEX_MODEL_TOKENIZER_UNICODE_NORMALIZER_H_

#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace actex {

enum class NormalizationForm { kNfc, kNfd, kNfkc, kNfkd };

// Applies a sequence of Unicode normalization forms (libutf8proc), in order, as the
// HuggingFace NFC/NFD/NFKC/NFKD normalizers do. An empty sequence leaves text as is.
class UnicodeNormalizer {
 public:
  UnicodeNormalizer() = default;
  explicit UnicodeNormalizer(std::vector<NormalizationForm> forms) : forms_(std::move(forms)) {}

  bool is_identity() const { return forms_.empty(); }

  // Writes the normalized `text` to `out` (replacing its contents). `text` must be
  // valid UTF-8; an error is returned only if libutf8proc rejects it.
  std::expected<void, std::string> Normalize(std::string_view text, std::string* out) const;

 private:
  std::vector<NormalizationForm> forms_;
};

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_UNICODE_NORMALIZER_H_
