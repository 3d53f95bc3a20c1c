#include "model/tokenizer/post_processor.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/regular_file.h"
#include "base/whole_file.h"

namespace actex {
namespace {

using Json = nlohmann::json;

std::expected<std::optional<int32_t>, std::string> FromProcessor(const Json& processor,
                                                                 const std::string& where) {
  if (processor.is_null()) return std::nullopt;
  const std::string type = processor.value("type", "");
  if (type == "ByteLevel") return std::nullopt;  // offsets only
  if (type == "Sequence") {
    std::optional<int32_t> bos;
    for (const Json& inner : processor.value("processors", Json::array())) {
      auto found = FromProcessor(inner, where);
      if (!found) return found;
      if (*found) {
        if (bos) return std::unexpected(where + ": two processors add special tokens");
        bos = *found;
      }
    }
    return bos;
  }
  if (type != "TemplateProcessing") {
    return std::unexpected(where + ".type \"" + type +
                           "\" is not supported; actex reads TemplateProcessing and ByteLevel");
  }
  const Json& single = processor.value("single", Json::array());
  std::optional<std::string> leading;
  for (size_t i = 0; i < single.size(); ++i) {
    if (single[i].contains("Sequence")) continue;
    if (!single[i].contains("SpecialToken") || i != 0) {
      return std::unexpected(where +
                             ".single adds tokens after the text; actex only prepends "
                             "(choose --bos yes or no)");
    }
    leading = single[i]["SpecialToken"].value("id", "");
  }
  if (!leading) return std::nullopt;
  const Json& special = processor.value("special_tokens", Json::object());
  auto token = special.find(*leading);
  if (token == special.end() || !token->contains("ids") || (*token)["ids"].size() != 1 ||
      !(*token)["ids"][0].is_number_integer()) {
    return std::unexpected(where + ".special_tokens has no single id for \"" + *leading + "\"");
  }
  return (*token)["ids"][0].get<int32_t>();
}

}  // namespace

std::expected<std::optional<int32_t>, std::string> PostProcessorBos(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "tokenizer.json").string();
  auto present = PathEntryExists(path);
  if (!present) return std::unexpected(present.error());
  if (!*present) return std::nullopt;
  auto text = ReadWholeFile(path);
  if (!text) return std::unexpected(text.error());
  const Json json = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::unexpected(path + ": not valid JSON");
  try {
    return FromProcessor(json.value("post_processor", Json()), path + ": post_processor");
  } catch (const Json::exception& error) {
    return std::unexpected(path + ": post_processor: " + error.what());
  }
}

}  // namespace actex
