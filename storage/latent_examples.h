#ifndef ACTEX_STORAGE_LATENT_EXAMPLES_H_
#define ACTEX_STORAGE_LATENT_EXAMPLES_H_

// Each SAE latent's strongest examples and density over a set of tokens: what the shard
// writer keeps per SAE site for the shard it writes, saves beside it
// (shard_NNNNNN.examples.safetensors) and `actex inspect --latents` merges over a job
// into latents.safetensors. The file format is docs/sae.md's "Latent examples".
//
// Every number is exact and independent of how the tokens were split: the examples are
// the N greatest (value, then lower doc id, then lower position) of a total order over
// distinct tokens, fire counts are integers, and value sums are kept as 128-bit fixed
// point (value_sum_fixed), so Merge of any split gives the same bits as the whole.

#include <cstdint>
#include <expected>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace actex {

// One token where a latent fired. An unused slot has doc id and position -1, value 0.
struct LatentExample {
  float value = 0;
  int32_t position = -1;
  int64_t doc_id = -1;
  bool operator==(const LatentExample&) const = default;
};

// One SAE's latents over some tokens: per latent its `examples` strongest tokens (a
// bounded heap each, its weakest on top), how many tokens it fired on (value > 0 among
// the token's stored latents) and the sum of those values.
class LatentExamples {
 public:
  // `latents` is the SAE's d_sae, `examples` N (both >= 1).
  LatentExamples(int64_t latents, int64_t examples);
  // The memory one holds for `latents` × `examples`, allocated at construction (in a
  // double: the sizes a caller checks may be any typo).
  static double BytesFor(int64_t latents, int64_t examples);

  // Adds one token (doc id, position) with its stored latents: `ids` [K] and `values`
  // [K] (as stored, widened to float32). A latent with a finite value > 0 fires; the
  // others (unused slots, zeros) are passed over. Refused, changing nothing, when
  // CheckToken refuses it.
  std::expected<void, std::string> AddToken(int64_t doc_id, int32_t position,
                                            std::span<const int32_t> ids,
                                            std::span<const float> values);
  // Whether AddToken would take the token: every firing latent's id in 0..latents-1.
  std::expected<void, std::string> CheckToken(int64_t doc_id, int32_t position,
                                              std::span<const int32_t> ids,
                                              std::span<const float> values) const;
  // Adds `other`'s tokens, which must be others than this one's (another split of the
  // same job) and of the same shape: the result equals adding them one by one.
  std::expected<void, std::string> Merge(const LatentExamples& other);

  int64_t latents() const { return latents_; }
  int64_t examples() const { return examples_; }
  // `latent`'s examples, strongest first, padded with unused slots to examples().
  std::vector<LatentExample> ExamplesOf(int64_t latent) const;
  int64_t fire_count(int64_t latent) const { return fire_counts_[latent]; }
  // The sum of `latent`'s firing values, each rounded down to a multiple of 2^-32 (values
  // at least 2^-9 are exact), as the nearest double.
  double value_sum(int64_t latent) const;
  // The same sum exactly: value_sum × 2^32 as an unsigned 128-bit integer.
  unsigned __int128 value_sum_fixed(int64_t latent) const { return value_sums_[latent]; }

  bool operator==(const LatentExamples& other) const;

 private:
  friend struct LatentExamplesCodec;  // latent_examples.cc: Save and Load
  void Offer(int64_t latent, const LatentExample& example);

  int64_t latents_ = 0, examples_ = 0;
  // [latents, examples]: latent l's heap is slots_[l*examples, +filled_[l]), its weakest
  // first (std::push_heap with StrongerExample as "less").
  std::vector<LatentExample> slots_;
  std::vector<int32_t> filled_;                // [latents]
  std::vector<float> weakest_value_;           // [latents] the heap top's value once full
  std::vector<int64_t> fire_counts_;           // [latents]
  std::vector<unsigned __int128> value_sums_;  // [latents] × 2^32
};

// Whether `a` ranks before `b`: a greater value, then a lower doc id, then a lower
// position. Every reader of examples orders them so.
bool StrongerExample(const LatentExample& a, const LatentExample& b);

// The latent examples of every SAE of an output, by site (hook name).
using LatentExamplesBySite = std::map<std::string, LatentExamples>;

// The bytes of a latent examples file (docs/sae.md) holding `by_site`, in site order.
std::expected<std::string, std::string> EncodeLatentExamples(const LatentExamplesBySite& by_site);
// Writes EncodeLatentExamples's bytes to `path` (tmp, fsync, rename).
std::expected<void, std::string> SaveLatentExamples(const std::string& path,
                                                    const LatentExamplesBySite& by_site);
// Reads a latent examples file. A damaged one (wrong format or version, a missing site's
// tensor, a shape or dtype off, examples out of order, a value sum disagreeing with its
// fixed point) is refused naming the file and the tensor.
std::expected<LatentExamplesBySite, std::string> LoadLatentExamples(const std::string& path);

// Merges `from` into `into` site by site (a site only in `from` is copied); a site of
// another shape is refused naming it.
std::expected<void, std::string> MergeLatentExamples(LatentExamplesBySite& into,
                                                     const LatentExamplesBySite& from);

}  // namespace actex

#endif  // ACTEX_STORAGE_LATENT_EXAMPLES_H_
