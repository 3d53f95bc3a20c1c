#ifndef ACTEX_BASE_WHOLE_FILE_H_
#define ACTEX_BASE_WHOLE_FILE_H_

#include <expected>
#include <string>

namespace actex {

// The bytes of a small file (a config, metadata.json, a tokenizer): "cannot open PATH:
// <reason>" or "cannot read PATH: <reason>" otherwise.
std::expected<std::string, std::string> ReadWholeFile(const std::string& path);

}  // namespace actex

#endif  // ACTEX_BASE_WHOLE_FILE_H_
