// ParseByteSize, declared in shard_writer.h next to the option it parses.

#include <cctype>
#include <cstdint>
#include <expected>
#include <string>

#include "storage/shard_writer.h"

namespace actex {

std::expected<int64_t, std::string> ParseByteSize(const std::string& text) {
  const auto fail = [&]() {
    return std::unexpected("invalid byte size \"" + text +
                           "\": expected a positive whole number with an optional unit B, KB, "
                           "MB, GB or TB (binary: 1KB = 1024), e.g. 512MB");
  };
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  size_t digits_end = begin;
  int64_t number = 0;
  while (digits_end < end && std::isdigit(static_cast<unsigned char>(text[digits_end]))) {
    if (__builtin_mul_overflow(number, 10, &number) ||
        __builtin_add_overflow(number, text[digits_end] - '0', &number)) {
      return std::unexpected("byte size \"" + text + "\" is too large");
    }
    ++digits_end;
  }
  if (digits_end == begin) return fail();
  std::string unit;
  for (size_t i = digits_end; i < end; ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i])) && unit.empty()) continue;
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  }
  // "K", "KB" and "KIB" all mean 1024: sizes here are always binary.
  if (unit.size() == 3 && unit.substr(1) == "IB") unit.erase(1, 1);
  if (unit.size() == 2 && unit[1] == 'B' && unit[0] != 'B') unit.pop_back();
  int shift = 0;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (unit == "K") {
    shift = 10;
  } else if (unit == "M") {
    shift = 20;
  } else if (unit == "G") {
    shift = 30;
  } else if (unit == "T") {
    shift = 40;
  } else {
    return fail();
  }
  if (number == 0) return std::unexpected("byte size \"" + text + "\" must be positive");
  if (number > (INT64_MAX >> shift)) {
    return std::unexpected("byte size \"" + text + "\" is too large");
  }
  return number << shift;
}

}  // namespace actex
