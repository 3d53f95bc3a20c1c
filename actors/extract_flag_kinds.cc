#include "actors/extract_flag_kinds.h"

namespace actex::flag_kinds {

const ExtractOptions& Defaults() {
  static const ExtractOptions defaults;
  return defaults;
}

Texts SplitAtCommas(const Texts& texts) {
  Texts items;
  for (const std::string& text : texts) {
    std::istringstream parts(text);
    for (std::string item; std::getline(parts, item, ',');) items.push_back(item);
  }
  return items;
}

std::string Join(const Texts& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ",") + item;
  return joined;
}

ExtractFlag Row(std::string name, std::string help, FlagRole role, std::string key) {
  ExtractFlag flag;
  flag.name = std::move(name);
  flag.help = std::move(help);
  flag.role = role;
  flag.config_key = std::move(key);
  return flag;
}

}  // namespace actex::flag_kinds
