#ifndef ACTEX_STORAGE_JOB_LATENTS_H_
#define ACTEX_STORAGE_JOB_LATENTS_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "storage/latent_examples.h"

namespace actex {

// The name of a job's merged latent examples, beside its host folders: the host that
// ends a job with --sae writes it, and `actex inspect --latents OUT` writes it again.
inline constexpr const char* kJobLatentsFile = "latents.safetensors";

// Every SAE's latent examples over a whole job.
struct JobLatents {
  LatentExamplesBySite by_site;
  int64_t tokens = 0;  // of the listed shards, those without examples included
  int64_t files = 0;   // examples files merged
};

// Merges the latent examples file listed with every shard of every host folder of
// `host_dirs` (each with a metadata.json). The result is the same bits however the
// job's tokens were split over hosts, shards, kills and resumes (latent_examples.h).
// Refused, naming the file: a listing that cannot be read, a listed examples file
// missing (uploaded and deleted: download it back first) or of other bytes or crc32
// than listed, or damaged, or of another shape than another's of the same site.
std::expected<JobLatents, std::string> MergeJobLatents(const std::vector<std::string>& host_dirs);

// MergeJobLatents of `host_dirs`, saved as `out_dir`/latents.safetensors (tmp, fsync,
// rename). Refused, writing nothing: what MergeJobLatents refuses, and host folders
// without any examples file (the run had no --sae), naming `out_dir`.
std::expected<JobLatents, std::string> WriteJobLatents(const std::string& out_dir,
                                                       const std::vector<std::string>& host_dirs);

// Whether `out_dir`/latents.safetensors, when there is one, holds the merge of the
// examples files `host_dirs` list. A file of other bytes is a fault (it summarises
// another run: a resumed job's, another job's): {false, why}. A merge that cannot be
// made (an examples file uploaded and deleted) leaves it unchecked: {true, why}. Absent
// or equal: {true, ""}.
struct JobLatentsCheck {
  bool agrees = true;
  std::string note;
};
JobLatentsCheck CheckJobLatentsFile(const std::string& out_dir,
                                    const std::vector<std::string>& host_dirs);

}  // namespace actex

#endif  // ACTEX_STORAGE_JOB_LATENTS_H_
