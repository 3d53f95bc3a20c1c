#ifndef ACTEX_STORAGE_UTF8_H_
#define ACTEX_STORAGE_UTF8_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace actex {

// The 0-based offset of the first byte that does not start a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates U+D800..U+DFFF, nothing
// above U+10FFFF, no truncated sequence), or std::nullopt if all of `text` is valid.
std::optional<size_t> FindInvalidUtf8(std::string_view text);

}  // namespace actex

#endif  // ACTEX_STORAGE_UTF8_H_
