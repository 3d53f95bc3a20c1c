#include "model/tokenizer/tokenizer_json_text.h"

#include <cctype>

#include "base/text.h"
#include "model/tokenizer/json_members.h"

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

}  // namespace

Status ParseNormalizer(const Json& normalizer, const std::string& field,
                       std::vector<NormalizerStep>* steps, int depth) {
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

Status ParsePreTokenizer(const Json& pre_tokenizer, const std::string& field,
                         std::vector<SplitRule>* rules, bool* byte_level_seen, int depth) {
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

}  // namespace actex
