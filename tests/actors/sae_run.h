#ifndef ACTEX_TESTS_ACTORS_SAE_RUN_H_
#define ACTEX_TESTS_ACTORS_SAE_RUN_H_

// Test support: `actex extract --sae` as users run it, on tests/fixtures/qwen2-tiny with
// the SAE fixtures (tests/fixtures/sae, trained on blocks.1.hook_resid_post).

#include <string>
#include <vector>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"

namespace actex {

inline const std::string kSaeSite = "blocks.1.hook_resid_post";
inline constexpr int kSaeTopK = 8;

// A fixture SAE's folder: "saelens-topk", "sparsify/layers.1", ...
std::string SaeFixtureDir(const std::string& name);

// `documents` pre-tokenized documents of 5 to 60 tokens from the model's 512 ids.
std::string PreTokenizedCorpus(int documents);

// extract of dir/c.jsonl into dir/out: layer 1, `sites` dense, `--sae sae`, K kSaeTopK,
// two device shards, float32.
std::vector<std::string> SaeExtractArgs(const TempDir& dir, const std::string& sites,
                                        const std::string& sae);

// Writes `documents` documents to dir/c.jsonl and runs SaeExtractArgs with the fixture
// SAE `sae` on kSaeSite.
ActexOutcome ExtractWithSae(const TempDir& dir, int documents, const std::string& sites,
                            const std::string& sae);

}  // namespace actex

#endif  // ACTEX_TESTS_ACTORS_SAE_RUN_H_
