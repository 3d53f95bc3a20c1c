#include "model/tokenizer/tokenizer_json.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "model/tokenizer/json_members.h"
#include "model/tokenizer/pretokenizer.h"
#include "model/tokenizer/tokenizer_json_text.h"

namespace actex {
namespace {

using Json = nlohmann::json;
using Status = std::expected<void, std::string>;

Status ParseAddedTokens(const Json& root, TokenizerJsonSpec* spec) {
  const auto added = root.find("added_tokens");
  if (added == root.end() || added->is_null()) return {};
  if (!added->is_array()) return std::unexpected("added_tokens must be an array");
  for (size_t i = 0; i < added->size(); ++i) {
    const Json& token = (*added)[i];
    const std::string field = Indexed("added_tokens", i);
    if (!token.is_object()) return std::unexpected(field + " must be an object");
    const auto content = token.find("content");
    if (content == token.end() || !content->is_string() || content->get<std::string>().empty()) {
      return std::unexpected(field + ".content must be a non-empty string");
    }
    const auto id_field = token.find("id");
    if (id_field == token.end()) return std::unexpected(field + ".id is missing");
    auto id = TokenId(*id_field, field + ".id");
    if (!id) return std::unexpected(id.error());
    for (const char* option : {"lstrip", "rstrip", "single_word"}) {
      auto value = BoolMember(token, option, field, false);
      if (!value) return std::unexpected(value.error());
      if (*value) {
        return std::unexpected(field + " (\"" + content->get<std::string>() + "\"): " + option +
                               "=true is not supported");
      }
    }
    auto normalized = BoolMember(token, "normalized", field, true);
    if (!normalized) return std::unexpected(normalized.error());
    AddedToken parsed{content->get<std::string>(), *id};
    (*normalized ? spec->normalized_added_tokens : spec->raw_added_tokens)
        .push_back(std::move(parsed));
  }
  return {};
}

// Accepts null, absent or an empty string: anything else changes how words are split.
Status RequireEmptyAffix(const Json& model, const char* name) {
  const auto affix = model.find(name);
  if (affix == model.end() || affix->is_null() ||
      (affix->is_string() && affix->get<std::string>().empty())) {
    return {};
  }
  return std::unexpected(std::string("model.") + name + " " + DescribeJson(*affix) +
                         " is not supported (only null or \"\")");
}

Status ParseMerges(const Json& merges, TokenizerJsonSpec* spec) {
  if (!merges.is_array()) return std::unexpected("model.merges must be an array");
  spec->merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json& merge = merges[i];
    if (merge.is_string()) {
      // "a b": byte-level symbols never contain a plain space, so there is exactly one.
      const std::string& text = merge.get_ref<const std::string&>();
      const size_t space = text.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == text.size() ||
          text.find(' ', space + 1) != std::string::npos) {
        return std::unexpected(Indexed("model.merges", i) + " \"" + text +
                               "\" is not two symbols separated by one space");
      }
      spec->merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      spec->merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    } else {
      return std::unexpected(Indexed("model.merges", i) +
                             " must be \"a b\" or [\"a\", \"b\"], found " + DescribeJson(merge));
    }
  }
  return {};
}

Status ParseModel(const Json& root, TokenizerJsonSpec* spec) {
  const auto model = root.find("model");
  if (model == root.end()) return std::unexpected("model is missing");
  auto type = TypeOf(*model, "model");
  if (!type) return std::unexpected(type.error());
  if (*type != "BPE") {
    return std::unexpected("model.type \"" + *type + "\" is not supported (only \"BPE\")");
  }
  if (const auto dropout = model->find("dropout");
      dropout != model->end() && !dropout->is_null() &&
      !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    return std::unexpected("model.dropout " + DescribeJson(*dropout) +
                           " is not supported (BPE dropout is random; only null)");
  }
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (auto status = RequireEmptyAffix(*model, affix); !status) return status;
  }
  if (const auto unknown = model->find("unk_token");
      unknown != model->end() && !unknown->is_null()) {
    if (!unknown->is_string()) return std::unexpected("model.unk_token must be a string or null");
    spec->bpe_options.unknown_token = unknown->get<std::string>();
  }
  struct {
    const char* name;
    bool* target;
  } flags[] = {{"fuse_unk", &spec->bpe_options.fuse_unknown},
               {"byte_fallback", &spec->bpe_options.byte_fallback},
               {"ignore_merges", &spec->bpe_options.ignore_merges}};
  for (const auto& flag : flags) {
    auto value = BoolMember(*model, flag.name, "model", false);
    if (!value) return std::unexpected(value.error());
    *flag.target = *value;
  }
  const auto vocab = model->find("vocab");
  if (vocab == model->end() || !vocab->is_object()) {
    return std::unexpected("model.vocab must be an object of symbol -> id");
  }
  spec->vocab.reserve(vocab->size());
  for (const auto& [symbol, id_value] : vocab->items()) {
    auto id = TokenId(id_value, "model.vocab[\"" + symbol + "\"]");
    if (!id) return std::unexpected(id.error());
    spec->vocab.emplace(symbol, *id);
  }
  const auto merges = model->find("merges");
  if (merges == model->end()) return std::unexpected("model.merges is missing");
  return ParseMerges(*merges, spec);
}

Status ParseRoot(const Json& root, TokenizerJsonSpec* spec) {
  if (!root.is_object()) return std::unexpected("the top level must be a JSON object");
  if (const auto normalizer = root.find("normalizer"); normalizer != root.end()) {
    if (auto status = ParseNormalizer(*normalizer, "normalizer", &spec->normalization); !status) {
      return status;
    }
  }
  // Without a ByteLevel step the model's symbols are characters (SentencePiece-style
  // BPE, as Gemma ships it); a null pre-tokenizer leaves the text one piece.
  bool byte_level_seen = false;
  const auto pre_tokenizer = root.find("pre_tokenizer");
  if (pre_tokenizer != root.end() && !pre_tokenizer->is_null()) {
    if (auto status = ParsePreTokenizer(*pre_tokenizer, "pre_tokenizer", &spec->split_rules,
                                        &byte_level_seen);
        !status) {
      return status;
    }
  }
  spec->bpe_options.alphabet = byte_level_seen ? BpeAlphabet::kByteLevel : BpeAlphabet::kCharacters;
  if (auto status = ParseAddedTokens(root, spec); !status) return status;
  return ParseModel(root, spec);
}

}  // namespace

std::expected<TokenizerJsonSpec, std::string> ParseTokenizerJson(std::string_view json_text) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::exception& error) {
    return std::unexpected(std::string("not valid JSON: ") + error.what());
  }
  TokenizerJsonSpec spec;
  try {
    if (auto status = ParseRoot(root, &spec); !status) return std::unexpected(status.error());
  } catch (const Json::exception& error) {
    // Every access above checks types first; this only guards against a missed case.
    return std::unexpected(std::string("unexpected JSON structure: ") + error.what());
  }
  return spec;
}

}  // namespace actex
