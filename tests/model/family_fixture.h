#ifndef ACTEX_TESTS_MODEL_FAMILY_FIXTURE_H_
#define ACTEX_TESTS_MODEL_FAMILY_FIXTURE_H_

// The reference activations of HF transformers in tests/fixtures (model-families,
// moe-families, qwen2-tiny): where each family's folder is, which of our sites each
// fixture tensor equals, and the comparison every forward test makes against them.

#include <gtest/gtest.h>

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/packed_batch.h"
#include "model/shard_device.h"
#include "model/sites.h"
#include "storage/safetensors.h"

namespace actex::test_support {

bool IsMixtureOfExperts(const std::string& family);
// Every family fixture: qwen2-tiny, the dense model-families, the moe-families.
std::vector<std::string> EveryFamily();
// A fixture's model and reference files.
struct FamilyFiles {
  std::shared_ptr<const ModelWeights> weights;
  std::unique_ptr<SafetensorsFile> expected, z;  // expected.safetensors, ZFile
};
// Opens them for `family`; an error names the file.
std::expected<FamilyFiles, std::string> OpenFamilyFiles(const std::string& family);

// A test's name for a family or preset parameter: "_" for what is not a letter or digit
// ("qwen2-tiny" -> "qwen2_tiny", "qwen2.5-0.5b" -> "qwen2_5_0_5b").
std::string FamilyTestName(const ::testing::TestParamInfo<std::string>& info);

// The fixture folder of `family` ("llama", "olmoe", ..., or "qwen2-tiny").
std::string FamilyDir(const std::string& family);
// The file holding the fixture's z tensors (README-z.md): z.safetensors next to
// expected.safetensors, or expected.safetensors itself for the mixtures of experts.
std::string ZFile(const std::string& family);

// Every site `config` has up to its last layer and the fixture tensor (after "<case>.")
// it equals (z: in ZFile). The mixture-of-experts fixtures hold no mlp_post (not even
// of qwen2_moe's dense layer). With `expected` and `z` given, only the sites whose
// tensors the fixture holds (qwen2-tiny has hidden states and z alone).
std::vector<std::pair<Site, std::string>> Comparisons(const ModelConfig& config,
                                                      const SafetensorsFile* expected = nullptr,
                                                      const SafetensorsFile* z = nullptr);
std::vector<Site> SitesOf(const std::vector<std::pair<Site, std::string>>& comparisons);

// The single-sequence cases of the fixture ("len1", "len7", ...: each "<case>.input_ids"
// but the padded batch's).
std::vector<std::string> SingleSequenceCases(const SafetensorsFile& expected);
// The fixture's padded batch ("padbatch.input_ids", "padbatch.lengths") packed end to
// end without its padding, positions from 0 in each row.
PackedBatch UnpaddedBatch(const SafetensorsFile& expected);

// The worst relative error per site kind over a whole test, printed at its end.
using WorstErrors = std::map<std::string, float>;

// Checks `captures` (rows [first_row, first_row + rows) of a forward over the sites of
// `comparisons`) against the fixture's tensors of case `prefix`: max|Δ| <= `bound` ·
// max|ref| per tensor, expert_ids equal positionally. Records the errors in `worst`.
void ExpectMatchesFixture(const std::vector<SiteActivations>& captures,
                          const std::vector<std::pair<Site, std::string>>& comparisons,
                          const SafetensorsFile& expected, const SafetensorsFile& z,
                          const std::string& prefix, int64_t first_row, int64_t rows,
                          const std::string& label, WorstErrors& worst, float bound = 2e-5f,
                          bool routing_must_match = true);
// Runs every single-sequence case of `expected` that `reference` holds, and the packed
// batch where it holds its rows, through `shards` shards of `weights` on the devices
// `make_device` makes, and checks every rank's captures against `reference` (z tensors:
// `reference_z`) within `bound`, the routing too if `routing_must_match`
// (ExpectMatchesFixture).
void ExpectEveryCaseMatches(const std::shared_ptr<const ModelWeights>& weights,
                            const SafetensorsFile& expected, const SafetensorsFile& reference,
                            const SafetensorsFile& reference_z,
                            const std::vector<std::pair<Site, std::string>>& comparisons,
                            const ShardDeviceMaker& make_device, int shards, float bound,
                            const std::string& label, WorstErrors& worst,
                            bool routing_must_match = true);
// --precision bf16 (bfloat16 products, float32 accumulation, on either device) against
// HF's float32 numbers, per tensor relative to its max|ref| (model/README.md, Numerics):
// a dense family within kBf16DenseBound; a mixture of experts within kBf16MoeBound (a
// token whose experts were near a tie may move to others, and everything after it
// differs), and what it computes before its first routing within kBf16DenseBound.
inline constexpr float kBf16DenseBound = 7.5e-2f;
inline constexpr float kBf16MoeBound = 1.0f;
// Checks every case of `family` on `shards` shards of `make_device` (a bf16 device) so;
// the errors go to `worst` and, for a mixture of experts, `before_routing`.
void ExpectBf16WithinBounds(const std::string& family, const FamilyFiles& files,
                            const std::vector<std::pair<Site, std::string>>& comparisons,
                            const ShardDeviceMaker& make_device, int shards,
                            const std::string& label, WorstErrors& worst,
                            WorstErrors& before_routing);
// Prints "parity <label> max|d|/max|ref|: <kind> <error> ...".
void PrintWorst(const std::string& label, const WorstErrors& worst);

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_MODEL_FAMILY_FIXTURE_H_
