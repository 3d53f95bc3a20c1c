#include "model/tokenizer/tokenizer_json.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "model/tokenizer/pretokenizer.h"

namespace actex {
namespace {

using Json = nlohmann::json;
using Status = std::expected<void, std::string>;

// How deep "Sequence" normalizers and pre-tokenizers may nest. Real files nest one
// level; the bound keeps the recursion below off the end of the stack on a corrupt
// or hostile file (100000 levels fit in a few MB of JSON).
constexpr int kMaxSequenceDepth = 32;

Status TooDeep(const std::string& field) {
  return std::unexpected(field.substr(0, field.find('.')) + " nests Sequences more than " +
                         std::to_string(kMaxSequenceDepth) + " deep");
}

std::string Indexed(const std::string& field, size_t index) {
  return field + "[" + std::to_string(index) + "]";
}

// The "type" string of a component object.
std::expected<std::string, std::string> TypeOf(const Json& component, const std::string& field) {
  if (!component.is_object()) return std::unexpected(field + " must be an object or null");
  const auto type = component.find("type");
  if (type == component.end() || !type->is_string()) {
    return std::unexpected(field + ".type is missing or not a string");
  }
  return type->get<std::string>();
}

// A boolean member that defaults when absent or null.
std::expected<bool, std::string> BoolMember(const Json& object, const char* name,
                                            const std::string& field, bool fallback) {
  const auto member = object.find(name);
  if (member == object.end() || member->is_null()) return fallback;
  if (!member->is_boolean()) return std::unexpected(field + "." + name + " must be true or false");
  return member->get<bool>();
}

std::expected<int32_t, std::string> TokenId(const Json& value, const std::string& field) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
      value.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
    return std::unexpected(field + " must be a token id (an integer from 0 to 2^31-1)");
  }
  return static_cast<int32_t>(value.get<int64_t>());
}

// A string member that must be present.
std::expected<std::string, std::string> StringMember(const Json& object, const char* name,
                                                     const std::string& field) {
  const auto member = object.find(name);
  if (member == object.end() || !member->is_string()) {
    return std::unexpected(field + "." + name + " must be a string");
  }
  return member->get<std::string>();
}

Status ParseNormalizer(const Json& normalizer, const std::string& field,
                       std::vector<NormalizerStep>* steps, int depth = 0) {
  if (normalizer.is_null()) return {};
  if (depth > kMaxSequenceDepth) return TooDeep(field);
  auto type = TypeOf(normalizer, field);
  if (!type) return std::unexpected(type.error());
  if (*type == "NFC") {
    steps->push_back(NormalizerStep::Form(NormalizationForm::kNfc));
  } else if (*type == "NFD") {
    steps->push_back(NormalizerStep::Form(NormalizationForm::kNfd));
  } else if (*type == "NFKC") {
    steps->push_back(NormalizerStep::Form(NormalizationForm::kNfkc));
  } else if (*type == "NFKD") {
    steps->push_back(NormalizerStep::Form(NormalizationForm::kNfkd));
  } else if (*type == "Replace") {
    const auto pattern = normalizer.find("pattern");
    const bool literal = pattern != normalizer.end() && pattern->is_object() &&
                         pattern->contains("String") && (*pattern)["String"].is_string() &&
                         !(*pattern)["String"].get<std::string>().empty();
    if (!literal) {
      return std::unexpected(field + ".pattern " +
                             (pattern == normalizer.end() ? "(missing)" : DescribeJson(*pattern)) +
                             " is not supported (only {\"String\": a non-empty literal})");
    }
    auto content = StringMember(normalizer, "content", field);
    if (!content) return std::unexpected(content.error());
    steps->push_back(NormalizerStep::Replace((*pattern)["String"].get<std::string>(), *content));
  } else if (*type == "Prepend") {
    auto prepend = StringMember(normalizer, "prepend", field);
    if (!prepend) return std::unexpected(prepend.error());
    steps->push_back(NormalizerStep::Prepend(*prepend));
  } else if (*type == "Sequence") {
    const auto children = normalizer.find("normalizers");
    if (children == normalizer.end() || !children->is_array()) {
      return std::unexpected(field + ".normalizers must be an array");
    }
    for (size_t i = 0; i < children->size(); ++i) {
      if (auto parsed =
              ParseNormalizer((*children)[i], Indexed(field + ".normalizers", i), steps, depth + 1);
          !parsed) {
        return parsed;
      }
    }
  } else {
    return std::unexpected(field + ".type \"" + *type +
                           "\" is not supported (supported: NFC, NFD, NFKC, NFKD, Replace, "
                           "Prepend, Sequence, or a null normalizer)");
  }
  return {};
}

// A Split pattern given as {"String": literal}: escape it into a regex.
std::string LiteralPattern(std::string_view literal) {
  std::string pattern;
  for (const char c : literal) {
    if (static_cast<unsigned char>(c) < 0x80 && !std::isalnum(static_cast<unsigned char>(c))) {
      pattern.push_back('\\');
    }
    pattern.push_back(c);
  }
  return pattern;
}

Status ParseSplit(const Json& split, const std::string& field, std::vector<SplitRule>* rules) {
  SplitRule rule;
  const auto pattern = split.find("pattern");
  if (pattern == split.end() || !pattern->is_object()) {
    return std::unexpected(field + ".pattern must be {\"Regex\": ...} or {\"String\": ...}");
  }
  if (const auto regex = pattern->find("Regex"); regex != pattern->end() && regex->is_string()) {
    rule.pattern = regex->get<std::string>();
  } else if (const auto literal = pattern->find("String");
             literal != pattern->end() && literal->is_string()) {
    rule.pattern = LiteralPattern(literal->get<std::string>());
  } else {
    return std::unexpected(field + ".pattern must be {\"Regex\": ...} or {\"String\": ...}");
  }
  const auto behavior = split.find("behavior");
  if (behavior != split.end() && *behavior == "Isolated") {
    rule.behavior = SplitBehavior::kIsolated;
  } else if (behavior != split.end() && *behavior == "MergedWithPrevious") {
    rule.behavior = SplitBehavior::kMergedWithPrevious;
  } else {
    return std::unexpected(
        field + ".behavior " +
        (behavior == split.end() ? std::string("(missing)") : DescribeJson(*behavior)) +
        " is not supported (only \"Isolated\" and \"MergedWithPrevious\")");
  }
  auto invert = BoolMember(split, "invert", field, false);
  if (!invert) return std::unexpected(invert.error());
  if (*invert) return std::unexpected(field + ".invert=true is not supported");
  rules->push_back(std::move(rule));
  return {};
}

// Flattens the pre-tokenizer into split rules; `byte_level_seen` records the
// ByteLevel step, which must come last.
Status ParsePreTokenizer(const Json& pre_tokenizer, const std::string& field,
                         std::vector<SplitRule>* rules, bool* byte_level_seen, int depth = 0) {
  if (depth > kMaxSequenceDepth) return TooDeep(field);
  auto type = TypeOf(pre_tokenizer, field);
  if (!type) return std::unexpected(type.error());
  if (*byte_level_seen) {
    return std::unexpected(field + " comes after the ByteLevel pre-tokenizer, which must be last");
  }
  if (*type == "Sequence") {
    const auto children = pre_tokenizer.find("pretokenizers");
    if (children == pre_tokenizer.end() || !children->is_array()) {
      return std::unexpected(field + ".pretokenizers must be an array");
    }
    for (size_t i = 0; i < children->size(); ++i) {
      if (auto parsed = ParsePreTokenizer((*children)[i], Indexed(field + ".pretokenizers", i),
                                          rules, byte_level_seen, depth + 1);
          !parsed) {
        return parsed;
      }
    }
    return {};
  }
  if (*type == "Split") return ParseSplit(pre_tokenizer, field, rules);
  if (*type == "ByteLevel") {
    auto add_prefix_space = BoolMember(pre_tokenizer, "add_prefix_space", field, false);
    if (!add_prefix_space) return std::unexpected(add_prefix_space.error());
    if (*add_prefix_space)
      return std::unexpected(field + ".add_prefix_space=true is not supported");
    auto use_regex = BoolMember(pre_tokenizer, "use_regex", field, true);
    if (!use_regex) return std::unexpected(use_regex.error());
    if (*use_regex) rules->push_back({std::string(kByteLevelSplitPattern)});
    *byte_level_seen = true;
    return {};
  }
  return std::unexpected(field + ".type \"" + *type +
                         "\" is not supported (supported: Split, ByteLevel, Sequence)");
}

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
