#ifndef ACTEX_MODEL_TOKENIZER_POST_PROCESSOR_H_
#define ACTEX_MODEL_TOKENIZER_POST_PROCESSOR_H_

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

namespace actex {

// The token HF's `tokenizer(text)` puts before a single text: what the post_processor of
// `dir`/tokenizer.json prepends (TemplateProcessing's leading SpecialToken, also inside
// a Sequence, as Llama 3 and Gemma ship it; ByteLevel, as Qwen and GPT-2 ship it, adds
// none). nullopt when it adds nothing or there is no tokenizer.json. A template that
// adds tokens anywhere else (an EOS after the text, two leading tokens) is refused
// naming the field: actex only prepends.
std::expected<std::optional<int32_t>, std::string> PostProcessorBos(const std::string& dir);

}  // namespace actex

#endif  // ACTEX_MODEL_TOKENIZER_POST_PROCESSOR_H_
