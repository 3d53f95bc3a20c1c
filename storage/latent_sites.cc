#include "storage/latent_sites.h"

#include <cstring>

#include "storage/float_convert.h"

namespace actex {
namespace {

template <typename T>
T ElementAt(const SafetensorsTensor& tensor, int64_t index) {
  T value;
  std::memcpy(&value, tensor.bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

float FloatAt(const SafetensorsTensor& tensor, int64_t index) {
  if (tensor.dtype == "F32") return ElementAt<float>(tensor, index);
  const uint16_t bits = ElementAt<uint16_t>(tensor, index);
  return tensor.dtype == "BF16" ? Bfloat16BitsToFloat(bits) : HalfBitsToFloat(bits);
}

LatentSiteNames LatentSiteNamesOf(std::string_view site) {
  const std::string prefix = std::string(site) + ".latents.";
  return {prefix + "ids", prefix + "values", prefix + "count"};
}

std::vector<StoredSite> StoredLatentSites(std::string_view site, int k) {
  LatentSiteNames names = LatentSiteNamesOf(site);
  return {{std::move(names.ids), k, /*integer=*/true},
          {std::move(names.values), k, /*integer=*/false},
          {std::move(names.count), 1, /*integer=*/true}};
}

std::string CheckLatentRow(std::span<const int32_t> ids, std::span<const float> values,
                           int32_t count, int64_t d_sae) {
  const int64_t k = static_cast<int64_t>(ids.size());
  if (count < 0) return "count is " + std::to_string(count) + ", below 0";
  int64_t used = 0;
  while (used < k && ids[used] != kPaddingLatent) ++used;
  for (int64_t i = 0; i < k; ++i) {
    const std::string entry = "entry " + std::to_string(i);
    if (i < used && (ids[i] < 0 || ids[i] >= d_sae)) {
      return entry + ": id " + std::to_string(ids[i]) + " is outside [0, " + std::to_string(d_sae) +
             ")";
    }
    if (i >= used && ids[i] != kPaddingLatent) {
      return entry + ": id " + std::to_string(ids[i]) + " after the padding (-1) of entry " +
             std::to_string(used);
    }
    if (i >= used && values[i] != 0) {
      return entry + ": padding (-1) with value " + std::to_string(values[i]) + ", expected 0";
    }
    if (i > 0 && i < used && values[i] > values[i - 1]) {
      return entry + ": value " + std::to_string(values[i]) + " above the " +
             std::to_string(values[i - 1]) + " before it (values must descend)";
    }
  }
  if (count <= k && used != count) {
    return "count is " + std::to_string(count) + " but " + std::to_string(used) +
           " entries are latents";
  }
  if (count > k && used != k) {
    return "count is " + std::to_string(count) + ", above K " + std::to_string(k) + ", but only " +
           std::to_string(used) + " entries are latents";
  }
  return "";
}

std::string CheckShardLatents(const std::map<std::string, SafetensorsTensor>& tensors,
                              const SaeRecord& sae) {
  const LatentSiteNames names = LatentSiteNamesOf(sae.site);
  const auto ids = tensors.find(names.ids), values = tensors.find(names.values),
             count = tensors.find(names.count), doc_ids = tensors.find("doc_ids"),
             positions = tensors.find("positions");
  for (auto found : {ids, values, count, doc_ids, positions}) {
    if (found == tensors.end()) return "";
  }
  const SafetensorsTensor& id_tensor = ids->second;
  if (id_tensor.shape.size() != 2 || values->second.shape != id_tensor.shape) return "";
  const int64_t tokens = id_tensor.shape[0], k = id_tensor.shape[1];
  std::vector<int32_t> row_ids(static_cast<size_t>(k));
  std::vector<float> row_values(static_cast<size_t>(k));
  for (int64_t row = 0; row < tokens; ++row) {
    for (int64_t i = 0; i < k; ++i) {
      row_ids[i] = ElementAt<int32_t>(id_tensor, row * k + i);
      row_values[i] = FloatAt(values->second, row * k + i);
    }
    const std::string fault =
        CheckLatentRow(row_ids, row_values, ElementAt<int32_t>(count->second, row), sae.d_sae);
    if (fault.empty()) continue;
    return "site " + sae.site + " latents: row " + std::to_string(row) + " (doc " +
           std::to_string(ElementAt<int64_t>(doc_ids->second, row)) + ", position " +
           std::to_string(ElementAt<int32_t>(positions->second, row)) + "): " + fault;
  }
  return "";
}

}  // namespace actex
