#ifndef ACTEX_BASE_ABSOLUTE_PATH_H_
#define ACTEX_BASE_ABSOLUTE_PATH_H_

#include <string>

namespace actex {

// `path` as an absolute, lexically normal path with no trailing slash: "m/", "./m" and
// "/abs/m" (run from /abs) are all "/abs/m". Relative paths are taken from `base`
// (an absolute folder), or from the current directory when `base` is empty. Symlinks
// are not resolved and the path need not exist, so a glob pattern keeps its wildcards.
// This is how metadata.json records --model and --data, so that an output can be
// resumed and verified from any working directory.
std::string AbsolutePath(const std::string& path, const std::string& base = "");

// The current directory, or "." when it cannot be read (it was removed).
std::string CurrentDirectory();

}  // namespace actex

#endif  // ACTEX_BASE_ABSOLUTE_PATH_H_
