#ifndef ACTEX_ACTORS_EXTRACT_FLAG_KINDS_H_
#define ACTEX_ACTORS_EXTRACT_FLAG_KINDS_H_

#include <algorithm>
#include <charconv>
#include <expected>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "actors/extract_flag.h"

// The kinds of row the extract flag table is made of: how a flag of each kind
// parses what the user wrote, prints it back and records it in metadata.json.
namespace actex::flag_kinds {

using Texts = std::vector<std::string>;
using Status = std::expected<void, std::string>;

// The options as a run without flags has them.
const ExtractOptions& Defaults();

// Every text split at commas, so "a,b c" and "a b c" give the same list.
Texts SplitAtCommas(const Texts& texts);
// "a,b,c".
std::string Join(const Texts& items);

// A row with no behaviour yet.
ExtractFlag Row(std::string name, std::string help, FlagRole role, std::string key);

inline std::string ToText(const std::string& value) { return value; }
template <typename Number>
std::string ToText(Number value) {
  // The shortest text that reads back as the same value: 2, 0.5, 3600, 31536000.
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, end);
}

// The most seconds a flag may set (a year): every wait becomes a duration in
// milliseconds, and a value such as 1e300 must be refused, not overflow into an
// immediate timeout.
inline constexpr double kMaxFlagSeconds = 365.0 * 24 * 3600;

// The most threads a per-shard or per-replica thread flag may ask for: far past any
// machine's cores, so 100000 (a typo) is refused instead of starting that many.
inline constexpr int kMaxFlagThreads = 1024;

// A whole or decimal number of type T, at least `min` and at most `max`.
template <typename T>
std::expected<T, std::string> ParseNumber(const std::string& text, T min,
                                          T max = std::numeric_limits<T>::max()) {
  T value{};
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) {
    return std::unexpected("\"" + text + "\" is not " +
                           (std::is_integral_v<T> ? "a whole number" : "a number"));
  }
  if (!(value >= min)) return std::unexpected(text + " is below " + ToText(min));
  if (!(value <= max)) return std::unexpected(text + " is above " + ToText(max));
  return value;
}

// The rows below are built from a getter (`[](auto& o) -> auto& { return o.field; }`,
// usable on const and non-const options), so each flag is written once. A scalar is
// recorded as itself and printed unless it has its default.
template <typename Get>
ExtractFlag Scalar(std::string name, std::string help, FlagRole role, std::string key, Get get) {
  ExtractFlag flag = Row(std::move(name), std::move(help), role, std::move(key));
  flag.record = [get](const ExtractOptions& options) { return nlohmann::json(get(options)); };
  flag.print = [get](const ExtractOptions& options) {
    return get(options) == get(Defaults()) ? Texts{} : Texts{ToText(get(options))};
  };
  return flag;
}

// A string; `choices`, when given, are the values it may take.
template <typename Get>
ExtractFlag Text(std::string name, std::string help, FlagRole role, std::string key, Get get,
                 Texts choices = {}) {
  ExtractFlag flag = Scalar(std::move(name), std::move(help), role, std::move(key), get);
  flag.parse = [get, choices](const Texts& texts, ExtractOptions& options) -> Status {
    const std::string& text = texts.back();
    if (!choices.empty() && std::find(choices.begin(), choices.end(), text) == choices.end()) {
      return std::unexpected("\"" + text + "\" is not one of " + Join(choices));
    }
    get(options) = text;
    return {};
  };
  return flag;
}

// A number of the getter's type, at least `min` and at most `max` (default: the
// type's largest).
template <typename Get>
ExtractFlag Number(std::string name, std::string help, FlagRole role, std::string key, Get get,
                   double min, std::optional<double> max = std::nullopt) {
  ExtractFlag flag = Scalar(std::move(name), std::move(help), role, std::move(key), get);
  flag.parse = [get, min, max](const Texts& texts, ExtractOptions& options) -> Status {
    using T = std::decay_t<decltype(get(options))>;
    auto value = ParseNumber<T>(texts.back(), static_cast<T>(min),
                                max ? static_cast<T>(*max) : std::numeric_limits<T>::max());
    if (!value) return std::unexpected(value.error());
    get(options) = *value;
    return {};
  };
  return flag;
}

template <typename Get>
ExtractFlag Switch(std::string name, std::string help, std::string key, Get get) {
  ExtractFlag flag = Row(std::move(name), std::move(help), FlagRole::kRunOnly, std::move(key));
  flag.arity = ExtractFlag::Arity::kSwitch;
  flag.record = [get](const ExtractOptions& options) { return nlohmann::json(get(options)); };
  flag.parse = [get](const Texts&, ExtractOptions& options) -> Status {
    get(options) = true;
    return {};
  };
  flag.print = [get](const ExtractOptions& options) { return get(options) ? Texts{""} : Texts{}; };
  return flag;
}

// A list of strings, given as several values; with `comma_lists`, each may also be a
// comma-separated list (file names may hold commas, so --data's may not).
template <typename Get>
ExtractFlag List(std::string name, std::string help, FlagRole role, std::string key, Get get,
                 bool comma_lists) {
  ExtractFlag flag = Row(std::move(name), std::move(help), role, std::move(key));
  flag.arity = ExtractFlag::Arity::kMany;
  flag.record = [get](const ExtractOptions& options) { return nlohmann::json(get(options)); };
  flag.parse = [get, comma_lists](const Texts& texts, ExtractOptions& options) -> Status {
    get(options) = comma_lists ? SplitAtCommas(texts) : texts;
    for (const std::string& item : get(options)) {
      if (item.empty()) return std::unexpected("an empty entry");
    }
    return {};
  };
  flag.print = [get](const ExtractOptions& options) {
    return get(options) == get(Defaults()) ? Texts{} : get(options);
  };
  return flag;
}

}  // namespace actex::flag_kinds

#endif  // ACTEX_ACTORS_EXTRACT_FLAG_KINDS_H_
