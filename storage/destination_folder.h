#ifndef ACTEX_STORAGE_DESTINATION_FOLDER_H_
#define ACTEX_STORAGE_DESTINATION_FOLDER_H_

#include <expected>
#include <optional>
#include <set>
#include <string>

namespace actex {

// Refuses `to`, the folder a command derives from the folder `source` (`actex
// shuffle OUT --to SHUFFLED`, `actex export OUT --to DIR`), when writing there would
// touch what the user did not name: an empty `to` (which would mean the filesystem
// root or the current folder, depending on how it is joined), one that resolves to the
// filesystem root, to `source` itself, to a folder inside `source` (taken for a host
// folder later) or to a folder holding `source`. Paths are compared resolved
// (std::filesystem::weakly_canonical of the absolute path: symlinks, "..", "./" and
// trailing slashes do not hide a match). The error names `flag` and what to do.
// Nothing is created or written.
std::expected<void, std::string> CheckDestinationFolder(const std::string& flag,
                                                        const std::string& to,
                                                        const std::string& source);

// The first .safetensors file of `folder` not named in `written` (the files an export
// writes there), or nothing; nothing too when `folder` does not exist. Trainers' loaders
// read every .safetensors file of a site's folder, so such a file, left by an earlier
// export, would be read beside this export's as if it were one of them. Fails only
// when the folder cannot be listed.
std::expected<std::optional<std::string>, std::string> FirstSafetensorsNotWritten(
    const std::string& folder, const std::set<std::string>& written);

}  // namespace actex

#endif  // ACTEX_STORAGE_DESTINATION_FOLDER_H_
