#ifndef ACTEX_ACTORS_RUN_FINGERPRINT_H_
#define ACTEX_ACTORS_RUN_FINGERPRINT_H_

#include <map>
#include <string>
#include <vector>

#include "actors/extract_options.h"
#include "actors/mesh_plan.h"

namespace actex {

// What every host of a job must agree on, field by field, in words a user can act on
// when one differs ("--layers differs: host 0 has 20,21 but host 2 has 20"). Keys are
// the flags (or "model files", "corpus files") so the message points at the cause.
std::map<std::string, std::string> RunFingerprint(const ExtractOptions& options,
                                                  const ExtractPlan& plan, const MeshPlan& mesh,
                                                  const std::string& weights_fingerprint,
                                                  const std::string& tokenizer_hash,
                                                  const std::vector<std::string>& corpus_files);

// actex's version, compared at the rendezvous too.
const char* SoftwareVersion();

}  // namespace actex

#endif  // ACTEX_ACTORS_RUN_FINGERPRINT_H_
