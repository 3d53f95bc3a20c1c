#include "storage/shard_examples.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "storage/crc32.h"
#include "storage/float_convert.h"

namespace actex {

std::map<std::string, LatentColumns> FindLatentColumns(const std::vector<StoredSite>& sites) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < sites.size(); ++i) index[sites[i].name] = i;
  std::map<std::string, LatentColumns> found;
  const std::string suffix = LatentSiteNamesOf("").ids;
  for (size_t ids = 0; ids < sites.size(); ++ids) {
    const std::string& name = sites[ids].name;
    if (!name.ends_with(suffix) || !sites[ids].integer) continue;
    const std::string site = name.substr(0, name.size() - suffix.size());
    auto values = index.find(LatentSiteNamesOf(site).values);
    if (values == index.end() || sites[values->second].integer ||
        sites[values->second].width != sites[ids].width) {
      continue;
    }
    found[site] = {site, ids, values->second, sites[ids].width};
  }
  return found;
}

float AsStored(float value, OutputDtype dtype) {
  switch (dtype) {
    case OutputDtype::kF16:
      return HalfBitsToFloat(FloatToHalfBits(value));
    case OutputDtype::kBF16:
      return Bfloat16BitsToFloat(FloatToBfloat16Bits(value));
    case OutputDtype::kF32:
      break;
  }
  return value;
}

namespace {

// The shard's tensors and where they come from, for messages.
struct ShardTensors {
  const std::map<std::string, SafetensorsTensor>& tensors;
  const std::string& path;
};

// Tensor `name` of `shard`, of one of `dtypes` and `width` columns per token (-1: one
// dimension).
std::expected<const SafetensorsTensor*, std::string> ShardTensor(
    const ShardTensors& shard, const std::string& name, std::initializer_list<const char*> dtypes,
    int64_t tokens, int64_t width) {
  auto found = shard.tensors.find(name);
  if (found == shard.tensors.end()) return std::unexpected(shard.path + ": no tensor " + name);
  const SafetensorsTensor& tensor = found->second;
  const bool dtype_ok = std::find(dtypes.begin(), dtypes.end(), tensor.dtype) != dtypes.end();
  const bool shape_ok = tensor.shape.size() == (width < 0 ? 1u : 2u) && tensor.shape[0] == tokens &&
                        (width < 0 || tensor.shape[1] == width) &&
                        SafetensorsTensorBytes(tensor.dtype, tensor.shape).value_or(-1) ==
                            static_cast<int64_t>(tensor.bytes.size());
  if (!dtype_ok || !shape_ok) {
    return std::unexpected(shard.path + ": tensor " + name + " is " + tensor.dtype +
                           " of another shape than its " + std::to_string(tokens) + " tokens");
  }
  return &tensor;
}

}  // namespace

std::expected<LatentExamplesBySite, std::string> RecomputeShardExamples(
    const std::map<std::string, SafetensorsTensor>& tensors, const std::string& path,
    const LatentExamplesBySite& like) {
  const ShardTensors shard{tensors, path};
  auto doc_ids_tensor = shard.tensors.find("doc_ids");
  if (doc_ids_tensor == shard.tensors.end() || doc_ids_tensor->second.shape.size() != 1) {
    return std::unexpected(shard.path + ": no doc_ids tensor of one dimension");
  }
  const int64_t tokens = doc_ids_tensor->second.shape[0];
  auto doc_ids = ShardTensor(shard, "doc_ids", {"I64"}, tokens, -1);      // [tokens]
  auto positions = ShardTensor(shard, "positions", {"I32"}, tokens, -1);  // [tokens]
  if (!doc_ids || !positions) {
    return std::unexpected(!doc_ids ? doc_ids.error() : positions.error());
  }
  LatentExamplesBySite out;
  for (const auto& [site, shape] : like) {
    const LatentSiteNames names = LatentSiteNamesOf(site);
    auto stored = shard.tensors.find(names.ids);  // K from its shape, checked next
    const int64_t k = stored != shard.tensors.end() && stored->second.shape.size() == 2
                          ? stored->second.shape[1]
                          : 0;
    auto ids = ShardTensor(shard, names.ids, {"I32"}, tokens, k);  // [tokens, K]
    auto values =
        ShardTensor(shard, names.values, {"F32", "F16", "BF16"}, tokens, k);  // [tokens, K]
    if (!ids || !values) return std::unexpected(!ids ? ids.error() : values.error());
    LatentExamples examples(shape.latents(), shape.examples());
    std::vector<int32_t> token_ids(static_cast<size_t>(k));   // [K]
    std::vector<float> token_values(static_cast<size_t>(k));  // [K]
    for (int64_t token = 0; token < tokens; ++token) {
      const size_t first = static_cast<size_t>(token * k);
      std::memcpy(token_ids.data(), (*ids)->bytes.data() + first * sizeof(int32_t),
                  token_ids.size() * sizeof(int32_t));
      for (size_t i = 0; i < token_values.size(); ++i) {
        token_values[i] = FloatAt(**values, static_cast<int64_t>(first + i));
      }
      int64_t doc_id;
      int32_t position;
      std::memcpy(&doc_id, (*doc_ids)->bytes.data() + token * sizeof(int64_t), sizeof(doc_id));
      std::memcpy(&position, (*positions)->bytes.data() + token * sizeof(int32_t),
                  sizeof(position));
      if (auto added = examples.AddToken(doc_id, position, token_ids, token_values); !added) {
        return std::unexpected(shard.path + ": " + names.ids + ": " + added.error());
      }
    }
    out.emplace(site, std::move(examples));
  }
  return out;
}

double ShardExamples::BytesFor(const std::map<std::string, int64_t>& sae_latents,
                               int64_t examples) {
  double bytes = 0;
  for (const auto& [site, latents] : sae_latents) {
    bytes += 2 * LatentExamples::BytesFor(latents, examples);
  }
  return bytes;
}

std::expected<void, std::string> ShardExamples::CheckMemory(
    const std::map<std::string, int64_t>& sae_latents, int64_t examples) {
  const double bytes = BytesFor(sae_latents, examples);
  if (bytes <= kMaxExamplesBytes) return {};
  int64_t latents = 0;
  for (const auto& [site, width] : sae_latents) latents += width;
  return std::unexpected("--sae-examples " + std::to_string(examples) + " would keep " +
                         std::to_string(static_cast<int64_t>(bytes / (1 << 20))) +
                         " MiB of latent examples in " + "memory (" + std::to_string(latents) +
                         " latents, for the open shard and its open chunk); " + "at most " +
                         std::to_string(kMaxExamplesBytes >> 20) + " MiB: lower --sae-examples");
}

std::expected<ShardExamples, std::string> ShardExamples::Create(
    const std::vector<StoredSite>& sites, const std::map<std::string, int64_t>& sae_latents,
    int64_t examples, OutputDtype dtype) {
  ShardExamples out;
  out.dtype_ = dtype;
  if (sae_latents.empty()) return out;
  if (examples < 1) {
    return std::unexpected("--sae-examples must be at least 1, got " + std::to_string(examples));
  }
  if (auto memory = CheckMemory(sae_latents, examples); !memory) {
    return std::unexpected(memory.error());
  }
  const auto columns = FindLatentColumns(sites);
  for (const auto& [site, latents] : sae_latents) {
    auto found = columns.find(site);
    if (found == columns.end()) {
      const LatentSiteNames names = LatentSiteNamesOf(site);
      return std::unexpected("SAE site " + site + ": its examples need the stored sites " +
                             names.ids + " (I32) and " + names.values +
                             " of one width, which the writer was not given");
    }
    if (latents < 1) {
      return std::unexpected("SAE site " + site + " has " + std::to_string(latents) + " latents");
    }
    out.saes_.push_back(
        {found->second, LatentExamples(latents, examples), LatentExamples(latents, examples)});
  }
  return out;
}

std::expected<void, std::string> ShardExamples::AddDocument(const DocumentActivations& document) {
  // Every token is checked before any is added, so a refused document leaves no trace.
  for (bool adding : {false, true}) {
    for (Sae& sae : saes_) {
      const size_t k = static_cast<size_t>(sae.columns.stored);
      const std::span<const int32_t> ids = document.sites[sae.columns.ids].integers;  // [tokens, K]
      const std::span<const float> values =
          document.sites[sae.columns.values].values;  // [tokens, K]
      stored_.resize(k);
      for (size_t token = 0; token < document.positions.size(); ++token) {
        for (size_t i = 0; i < k; ++i) stored_[i] = AsStored(values[token * k + i], dtype_);
        const auto token_ids = ids.subspan(token * k, k);
        auto taken = adding ? sae.chunk.AddToken(document.doc_id, document.positions[token],
                                                 token_ids, stored_)
                            : sae.chunk.CheckToken(document.doc_id, document.positions[token],
                                                   token_ids, stored_);
        if (!taken) return std::unexpected("SAE site " + sae.columns.site + ": " + taken.error());
      }
    }
  }
  return {};
}

void ShardExamples::EndChunk() {
  for (Sae& sae : saes_) {
    // Same shape by construction: Merge cannot fail.
    (void)sae.shard.Merge(sae.chunk);
    sae.chunk = LatentExamples(sae.chunk.latents(), sae.chunk.examples());
  }
}

void ShardExamples::DropChunk() {
  for (Sae& sae : saes_) sae.chunk = LatentExamples(sae.chunk.latents(), sae.chunk.examples());
}

std::expected<ListedShard, std::string> ShardExamples::Save(const std::string& path,
                                                            const std::string& name,
                                                            WriteBudget* budget) {
  LatentExamplesBySite by_site;
  for (Sae& sae : saes_) {
    const int64_t latents = sae.shard.latents(), examples = sae.shard.examples();
    by_site.emplace(sae.columns.site, std::exchange(sae.shard, LatentExamples(latents, examples)));
  }
  auto bytes = EncodeLatentExamples(by_site);
  if (!bytes) return std::unexpected(path + ": " + bytes.error());
  if (auto written = WriteFileAtomically(path, *bytes, budget); !written) {
    return std::unexpected(written.error());
  }
  return ListedShard{name, static_cast<int64_t>(bytes->size()), Crc32Hex(*bytes)};
}

}  // namespace actex
