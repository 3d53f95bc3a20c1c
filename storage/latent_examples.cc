#include "storage/latent_examples.h"

#include <algorithm>
#include <cmath>

namespace actex {
namespace {

// Values at or beyond this count as it in the value sum, so 2^32 × value fits 128 bits
// with room for 2^37 tokens (no SAE latent comes near).
constexpr float kLargestSummedValue = 0x1p90f;

// `value` × 2^32 rounded down: the fixed point value sums are kept in.
unsigned __int128 FixedPoint(float value) {
  if (value < 0x1p31f) {  // the usual case, on 64-bit arithmetic
    return static_cast<uint64_t>(static_cast<double>(value) * 0x1p32);
  }
  const double capped = std::min(value, kLargestSummedValue);
  return static_cast<unsigned __int128>(capped) << 32;  // an integer from 2^23 on
}

}  // namespace

bool StrongerExample(const LatentExample& a, const LatentExample& b) {
  if (a.value != b.value) return a.value > b.value;
  if (a.doc_id != b.doc_id) return a.doc_id < b.doc_id;
  return a.position < b.position;
}

LatentExamples::LatentExamples(int64_t latents, int64_t examples)
    : latents_(latents),
      examples_(examples),
      // Unused slots (value 0) rank below every firing token, so a heap of them is
      // one whose weakest any firing token displaces.
      slots_(static_cast<size_t>(latents * examples)),
      weakest_value_(static_cast<size_t>(latents), 0.0f),
      fire_counts_(static_cast<size_t>(latents), 0),
      value_sums_(static_cast<size_t>(latents), 0) {}

double LatentExamples::BytesFor(int64_t latents, int64_t examples) {
  const double per_latent = sizeof(int32_t) + sizeof(float) + sizeof(int64_t) +
                            sizeof(unsigned __int128);  // filled, weakest, count, sum
  return static_cast<double>(latents) *
         (static_cast<double>(examples) * sizeof(LatentExample) + per_latent);
}

void LatentExamples::Offer(int64_t latent, const LatentExample& example) {
  // Most tokens are weaker than a full heap's weakest: one float compare turns them away.
  if (example.value < weakest_value_[latent]) return;
  LatentExample* heap = slots_.data() + latent * examples_;
  if (!StrongerExample(example, heap[0])) return;
  std::pop_heap(heap, heap + examples_, StrongerExample);
  heap[examples_ - 1] = example;
  std::push_heap(heap, heap + examples_, StrongerExample);
  weakest_value_[latent] = heap[0].value;
}

std::expected<void, std::string> LatentExamples::CheckToken(int64_t doc_id, int32_t position,
                                                            std::span<const int32_t> ids,
                                                            std::span<const float> values) const {
  for (size_t k = 0; k < ids.size(); ++k) {
    if (values[k] > 0 && std::isfinite(values[k]) && (ids[k] < 0 || ids[k] >= latents_)) {
      return std::unexpected("document " + std::to_string(doc_id) + " position " +
                             std::to_string(position) + ": latent id " + std::to_string(ids[k]) +
                             " is not below the SAE's " + std::to_string(latents_) + " latents");
    }
  }
  return {};
}

std::expected<void, std::string> LatentExamples::AddToken(int64_t doc_id, int32_t position,
                                                          std::span<const int32_t> ids,
                                                          std::span<const float> values) {
  if (auto checked = CheckToken(doc_id, position, ids, values); !checked) return checked;
  for (size_t k = 0; k < ids.size(); ++k) {
    const float value = values[k];
    // NaN fails the comparison; an infinite value has no place in a sum or a ranking.
    if (!(value > 0) || !std::isfinite(value)) continue;
    const int64_t latent = ids[k];
    ++fire_counts_[latent];
    value_sums_[latent] += FixedPoint(value);
    Offer(latent, {value, position, doc_id});
  }
  return {};
}

std::expected<void, std::string> LatentExamples::Merge(const LatentExamples& other) {
  if (other.latents_ != latents_ || other.examples_ != examples_) {
    return std::unexpected("latent examples of " + std::to_string(other.latents_) + " latents x " +
                           std::to_string(other.examples_) + " examples cannot join " +
                           std::to_string(latents_) + " x " + std::to_string(examples_));
  }
  for (int64_t latent = 0; latent < latents_; ++latent) {
    fire_counts_[latent] += other.fire_counts_[latent];
    value_sums_[latent] += other.value_sums_[latent];
    const LatentExample* theirs = other.slots_.data() + latent * examples_;
    for (int64_t slot = 0; slot < examples_; ++slot) {
      if (theirs[slot].doc_id >= 0) Offer(latent, theirs[slot]);
    }
  }
  return {};
}

std::vector<LatentExample> LatentExamples::ExamplesOf(int64_t latent) const {
  const auto first = slots_.begin() + latent * examples_;
  std::vector<LatentExample> sorted(first, first + examples_);
  std::sort(sorted.begin(), sorted.end(), StrongerExample);
  return sorted;
}

double LatentExamples::value_sum(int64_t latent) const {
  return std::ldexp(static_cast<double>(value_sums_[latent]), -32);
}

bool LatentExamples::operator==(const LatentExamples& other) const {
  if (latents_ != other.latents_ || examples_ != other.examples_ ||
      fire_counts_ != other.fire_counts_ || value_sums_ != other.value_sums_) {
    return false;
  }
  for (int64_t latent = 0; latent < latents_; ++latent) {
    if (ExamplesOf(latent) != other.ExamplesOf(latent)) return false;
  }
  return true;
}

std::expected<void, std::string> MergeLatentExamples(LatentExamplesBySite& into,
                                                     const LatentExamplesBySite& from) {
  for (const auto& [site, examples] : from) {
    auto [place, inserted] = into.try_emplace(site, examples);
    if (inserted) continue;
    if (auto merged = place->second.Merge(examples); !merged) {
      return std::unexpected("site " + site + ": " + merged.error());
    }
  }
  return {};
}

}  // namespace actex
