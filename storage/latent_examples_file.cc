// The latent examples file (latent_examples.h): per site S, S.examples.values [D, N] F32,
// S.examples.doc_ids [D, N] I64, S.examples.positions [D, N] I32 (each latent's examples
// strongest first, unused slots last), S.fire_count [D] I64, S.value_sum [D] F64 and
// S.value_sum_fixed [D, 2] U64 (value_sum × 2^32 as 128 bits: high word, low word).
#include <charconv>
#include <cmath>
#include <cstring>

#include "storage/file_io.h"
#include "storage/latent_examples.h"
#include "storage/safetensors.h"

namespace actex {
namespace {

constexpr const char* kFormat = "actex-latent-examples";
constexpr const char* kVersion = "1";

// One tensor of one site: its name suffix, dtype, and whether it is [D, N], [D] or [D, 2].
struct TensorKind {
  const char* suffix;
  const char* dtype;
  enum Shape { kPerExample, kPerLatent, kPerLatentPair } shape;
};
constexpr TensorKind kValues{".examples.values", "F32", TensorKind::kPerExample};
constexpr TensorKind kDocIds{".examples.doc_ids", "I64", TensorKind::kPerExample};
constexpr TensorKind kPositions{".examples.positions", "I32", TensorKind::kPerExample};
constexpr TensorKind kFireCount{".fire_count", "I64", TensorKind::kPerLatent};
constexpr TensorKind kValueSum{".value_sum", "F64", TensorKind::kPerLatent};
constexpr TensorKind kValueSumFixed{".value_sum_fixed", "U64", TensorKind::kPerLatentPair};
constexpr TensorKind kTensorKinds[] = {kValues,    kDocIds,   kPositions,
                                       kFireCount, kValueSum, kValueSumFixed};

std::vector<int64_t> ShapeOf(const TensorKind& kind, int64_t latents, int64_t examples) {
  switch (kind.shape) {
    case TensorKind::kPerExample:
      return {latents, examples};
    case TensorKind::kPerLatent:
      return {latents};
    case TensorKind::kPerLatentPair:
      break;
  }
  return {latents, 2};
}

// A tensor's elements, read into memory as they are stored (little-endian, as here).
template <typename T>
std::vector<T> CopyIn(const SafetensorsTensor& tensor) {
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

// Appends `from`'s bytes as they are in memory to `out`.
template <typename T>
void CopyOut(const std::vector<T>& from, std::string& out) {
  out.append(reinterpret_cast<const char*>(from.data()), from.size() * sizeof(T));
}

}  // namespace

// Save and Load, with access to the heaps.
struct LatentExamplesCodec {
  // Appends `examples`' tensors' bytes, in kTensorKinds order, to `out`.
  static void Encode(const LatentExamples& examples, std::string& out) {
    const size_t d = static_cast<size_t>(examples.latents()), n = examples.examples();
    std::vector<float> values(d * n);       // [D, N]
    std::vector<int64_t> doc_ids(d * n);    // [D, N]
    std::vector<int32_t> positions(d * n);  // [D, N]
    std::vector<double> sums(d);            // [D]
    std::vector<uint64_t> fixed(d * 2);     // [D, 2]
    for (size_t latent = 0; latent < d; ++latent) {
      const std::vector<LatentExample> sorted = examples.ExamplesOf(latent);
      for (size_t slot = 0; slot < n; ++slot) {
        values[latent * n + slot] = sorted[slot].value;
        doc_ids[latent * n + slot] = sorted[slot].doc_id;
        positions[latent * n + slot] = sorted[slot].position;
      }
      sums[latent] = examples.value_sum(latent);
      fixed[latent * 2] = static_cast<uint64_t>(examples.value_sums_[latent] >> 64);
      fixed[latent * 2 + 1] = static_cast<uint64_t>(examples.value_sums_[latent]);
    }
    CopyOut(values, out);
    CopyOut(doc_ids, out);
    CopyOut(positions, out);
    CopyOut(examples.fire_counts_, out);
    CopyOut(sums, out);
    CopyOut(fixed, out);
  }

  // `site`'s tensors of `file`, checked: every example in order and well formed, the
  // value sum the nearest double of its fixed point.
  static std::expected<LatentExamples, std::string> Decode(const SafetensorsFile& file,
                                                           const std::string& site,
                                                           int64_t examples) {
    const auto problem = [&](const TensorKind& kind, const std::string& what) {
      return std::unexpected(file.path() + ": tensor " + site + kind.suffix + " " + what);
    };
    const auto find = [&](const TensorKind& kind) -> const SafetensorsTensor* {
      auto found = file.tensors().find(site + kind.suffix);
      return found == file.tensors().end() ? nullptr : &found->second;
    };
    const SafetensorsTensor* fire_count = find(kFireCount);
    if (fire_count == nullptr || fire_count->shape.size() != 1) {
      return problem(kFireCount, "is missing or not one-dimensional");
    }
    const int64_t latents = fire_count->shape[0];
    if (latents < 1) return problem(kFireCount, "has no latents");
    for (const TensorKind& kind : kTensorKinds) {
      const SafetensorsTensor* tensor = find(kind);
      if (tensor == nullptr) return problem(kind, "is missing");
      if (tensor->dtype != kind.dtype || tensor->shape != ShapeOf(kind, latents, examples)) {
        return problem(kind, "is " + tensor->dtype + " of another shape, expected " + kind.dtype +
                                 " [" + std::to_string(latents) + ", ...] with " +
                                 std::to_string(examples) + " examples");
      }
    }
    LatentExamples out(latents, examples);
    const auto values = CopyIn<float>(*find(kValues));
    const auto doc_ids = CopyIn<int64_t>(*find(kDocIds));
    const auto positions = CopyIn<int32_t>(*find(kPositions));
    const auto sums = CopyIn<double>(*find(kValueSum));
    const auto fixed = CopyIn<uint64_t>(*find(kValueSumFixed));
    out.fire_counts_ = CopyIn<int64_t>(*fire_count);
    for (int64_t latent = 0; latent < latents; ++latent) {
      const std::string where = " at latent " + std::to_string(latent);
      LatentExample* heap = out.slots_.data() + latent * examples;
      int64_t used = 0;
      for (int64_t slot = 0; slot < examples; ++slot) {
        const size_t at = static_cast<size_t>(latent * examples + slot);
        const LatentExample example{values[at], positions[at], doc_ids[at]};
        const bool unused = example == LatentExample{};
        const bool firing = example.value > 0 && std::isfinite(example.value) &&
                            example.doc_id >= 0 && example.position >= 0;
        if (!unused && !firing) return problem(kValues, "holds a malformed example" + where);
        if (slot > 0 && !StrongerExample(heap[slot - 1], example) && !unused) {
          return problem(kValues, "is not strongest first" + where);
        }
        used += unused ? 0 : 1;
        heap[slot] = example;
      }
      if (out.fire_counts_[latent] < used) {
        return problem(kFireCount, "counts fewer firings than examples" + where);
      }
      std::make_heap(heap, heap + examples, StrongerExample);
      out.weakest_value_[latent] = heap[0].value;
      out.value_sums_[latent] =
          (static_cast<unsigned __int128>(fixed[latent * 2]) << 64) | fixed[latent * 2 + 1];
      const double sum = out.value_sum(latent);
      if (std::memcmp(&sum, &sums[latent], sizeof(double)) != 0) {
        return problem(kValueSum, "disagrees with value_sum_fixed" + where);
      }
    }
    return out;
  }
};

std::expected<std::string, std::string> EncodeLatentExamples(const LatentExamplesBySite& by_site) {
  std::vector<TensorToWrite> layout;
  std::string sites;
  int64_t examples = 0;
  for (const auto& [site, site_examples] : by_site) {
    if (examples != 0 && site_examples.examples() != examples) {
      return std::unexpected("site " + site + " keeps " + std::to_string(site_examples.examples()) +
                             " examples per latent, another " + std::to_string(examples));
    }
    examples = site_examples.examples();
    sites += (sites.empty() ? "" : ",") + site;
    for (const TensorKind& kind : kTensorKinds) {
      layout.push_back({site + kind.suffix, kind.dtype,
                        ShapeOf(kind, site_examples.latents(), examples), nullptr});
    }
  }
  auto header = EncodeSafetensorsHeader(layout, {{"format", kFormat},
                                                 {"version", kVersion},
                                                 {"examples", std::to_string(examples)},
                                                 {"sites", sites}});
  if (!header) return std::unexpected(header.error());
  for (const auto& [site, site_examples] : by_site) {
    LatentExamplesCodec::Encode(site_examples, *header);
  }
  return std::move(*header);
}

std::expected<void, std::string> SaveLatentExamples(const std::string& path,
                                                    const LatentExamplesBySite& by_site) {
  auto bytes = EncodeLatentExamples(by_site);
  if (!bytes) return std::unexpected(path + ": " + bytes.error());
  return WriteFileAtomically(path, *bytes, nullptr);
}

std::expected<LatentExamplesBySite, std::string> LoadLatentExamples(const std::string& path) {
  auto file = SafetensorsFile::Open(path);
  if (!file) return std::unexpected(file.error());
  const auto& metadata = (*file)->metadata();
  const auto field = [&](const char* key) {
    auto found = metadata.find(key);
    return found == metadata.end() ? std::string() : found->second;
  };
  if (field("format") != kFormat || field("version") != kVersion) {
    return std::unexpected(path + ": __metadata__ format \"" + field("format") + "\" version \"" +
                           field("version") + "\", expected " + kFormat + " version " + kVersion);
  }
  const std::string examples_text = field("examples");
  int64_t examples = 0;
  const char* end = examples_text.data() + examples_text.size();
  if (std::from_chars(examples_text.data(), end, examples).ptr != end || examples < 1) {
    return std::unexpected(path + ": __metadata__ examples \"" + examples_text +
                           "\" is not a positive integer");
  }
  LatentExamplesBySite by_site;
  const std::string sites = field("sites");
  for (size_t begin = 0; begin < sites.size();) {
    const size_t comma = std::min(sites.find(',', begin), sites.size());
    const std::string site = sites.substr(begin, comma - begin);
    auto decoded = LatentExamplesCodec::Decode(**file, site, examples);
    if (!decoded) return std::unexpected(decoded.error());
    by_site.emplace(site, std::move(*decoded));
    begin = comma + 1;
  }
  if (by_site.size() * std::size(kTensorKinds) != (*file)->tensors().size()) {
    return std::unexpected(path + ": holds tensors of no site its __metadata__ sites names");
  }
  return by_site;
}

}  // namespace actex
