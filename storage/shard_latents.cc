#include "storage/shard_latents.h"

#include <cstring>

#include "storage/latent_sites.h"
#include "storage/shuffle_rows.h"

namespace actex {
namespace {

template <typename T>
T LoadAt(std::span<const uint8_t> bytes, int64_t index) {
  T value;
  std::memcpy(&value, bytes.data() + index * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return value;
}

}  // namespace

std::expected<std::unique_ptr<ShardLatents>, std::string> ShardLatents::Open(
    const std::string& path) {
  auto file = SafetensorsFile::Open(path);
  if (!file) return std::unexpected(file.error());
  std::unique_ptr<ShardLatents> shard(new ShardLatents(std::move(*file)));
  const auto& tensors = shard->file_->tensors();
  struct {
    const char* name;
    const char* dtype;
    std::span<const uint8_t>* bytes;
  } columns[] = {{"token_ids", "I32", &shard->token_ids_},
                 {"doc_ids", "I64", &shard->doc_ids_},
                 {"positions", "I32", &shard->positions_}};
  for (const auto& column : columns) {
    const auto tensor = tensors.find(column.name);
    if (tensor == tensors.end() || tensor->second.dtype != column.dtype ||
        tensor->second.shape.size() != 1) {
      return std::unexpected(path + " has no tensor " + column.name + " [tokens] " + column.dtype);
    }
    shard->tokens_ = tensor->second.shape[0];
    *column.bytes = tensor->second.bytes;
  }
  if (shard->doc_ids_.size() != 8 * static_cast<size_t>(shard->tokens_) ||
      shard->token_ids_.size() != shard->positions_.size()) {
    return std::unexpected(path + ": token_ids, doc_ids and positions differ in length");
  }
  return shard;
}

int32_t ShardLatents::token_id(int64_t row) const { return LoadAt<int32_t>(token_ids_, row); }
int64_t ShardLatents::doc_id(int64_t row) const { return LoadAt<int64_t>(doc_ids_, row); }
int32_t ShardLatents::position(int64_t row) const { return LoadAt<int32_t>(positions_, row); }

int64_t ShardLatents::RowOf(int64_t doc_id, int32_t position) const {
  // Documents are whole and in order inside a shard, so the first row of the document
  // plus the position is the row; checked rather than assumed.
  for (int64_t row = 0; row < tokens_; ++row) {
    if (this->doc_id(row) != doc_id) continue;
    const int64_t candidate = row + position;
    if (candidate < tokens_ && this->doc_id(candidate) == doc_id &&
        this->position(candidate) == position) {
      return candidate;
    }
    return -1;
  }
  return -1;
}

std::expected<ShardLatents::Latents, std::string> ShardLatents::ReadLatents(
    std::string_view site) const {
  const auto& tensors = file_->tensors();
  const auto [ids_name, values_name, count_name] = LatentSiteNamesOf(site);
  const auto ids = tensors.find(ids_name);
  if (ids == tensors.end() || ids->second.dtype != "I32" || ids->second.shape.size() != 2 ||
      ids->second.shape[0] != tokens_) {
    return std::unexpected(file_->path() + " has no tensor " + ids_name + " [" +
                           std::to_string(tokens_) + ", K] I32: was " + std::string(site) +
                           " encoded with --sae?");
  }
  Latents latents;
  latents.k = ids->second.shape[1];
  const auto values = tensors.find(values_name);
  const std::string& dtype = values == tensors.end() ? "" : values->second.dtype;
  if (values == tensors.end() || values->second.shape != ids->second.shape ||
      (dtype != "F32" && dtype != "F16" && dtype != "BF16")) {
    return std::unexpected(file_->path() + " has no tensor " + values_name + " [" +
                           std::to_string(tokens_) + ", " + std::to_string(latents.k) +
                           "] of a float dtype");
  }
  const size_t entries = static_cast<size_t>(tokens_ * latents.k);
  latents.ids.resize(entries);
  std::memcpy(latents.ids.data(), ids->second.bytes.data(), entries * sizeof(int32_t));
  latents.values.resize(entries);
  ConvertFloats(dtype, values->second.bytes.data(), "F32",
                reinterpret_cast<uint8_t*>(latents.values.data()), static_cast<int64_t>(entries));
  return latents;
}

}  // namespace actex
