#ifndef ACTEX_STORAGE_UNLISTED_SHARDS_H_
#define ACTEX_STORAGE_UNLISTED_SHARDS_H_

#include <expected>
#include <set>
#include <string>
#include <vector>

namespace actex {

// Shard files a host folder holds but its metadata.json does not list. A run that
// stopped between renaming a shard and listing it leaves one; so does a listing
// entry lost or edited away, and then the file is the only copy of its documents.
// Nothing here deletes such a file: a resume moves it into the folder's
// `unlisted/` subfolder (kUnlistedFolder) byte for byte, out of the way of the
// shard of the same name the resume writes, and recomputes its chunks.

inline constexpr char kUnlistedFolder[] = "unlisted";

// Whether `name` is a shard file's name: shard_<digits>.safetensors[.gz].
bool IsShardFileName(const std::string& name);

// What a shard file is, in words for messages: "whole (its header and size
// agree)", "not whole: <why>" (the header does not parse, or the size is not the
// header's data extent), or for a .gz file "gzip'd (not checked)".
std::string DescribeShardFile(const std::string& path);

// What SetAsideUnlisted did.
struct UnlistedCleanup {
  // Temporary files of interrupted writes (*.tmp, spill files: host_folder_files.h), deleted.
  std::vector<std::string> removed_tmp;
  std::vector<std::string> set_aside;  // unlisted shard files, as they are now named
};

// In host folder `dir`: deletes *.tmp files and moves every shard file and latent
// examples file (host_folder_files.h's ExamplesFileName) not in `listed` into `dir`/unlisted/
// (created when needed), under its own name, or
// "<n>_<name>" when a file of that name was set aside before. Logs a warning for
// each file set aside, saying where it went and what it is. Errors name the file.
std::expected<UnlistedCleanup, std::string> SetAsideUnlisted(const std::string& dir,
                                                             const std::set<std::string>& listed);

}  // namespace actex

#endif  // ACTEX_STORAGE_UNLISTED_SHARDS_H_
