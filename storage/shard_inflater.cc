#include "storage/shard_inflater.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace actex {

namespace {

constexpr size_t kOutputChunkBytes = size_t{1} << 20;
// The safetensors format caps its header at 100 MB; a larger length means damage,
// and believing it would make the verifier buffer whatever follows.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

}  // namespace

ShardInflater::ShardInflater() : output_(kOutputChunkBytes) {
  captures_["doc_ids"];
  captures_["positions"];
}

void ShardInflater::CaptureAlso(const std::vector<std::string>& names) {
  for (const std::string& name : names) captures_[name];
}

std::span<const uint8_t> ShardInflater::Captured(const std::string& name) const {
  auto found = captures_.find(name);
  return found == captures_.end() ? std::span<const uint8_t>() : found->second.bytes;
}

std::map<std::string, SafetensorsTensor> ShardInflater::CapturedTensors() const {
  const nlohmann::json header = nlohmann::json::parse(header_, nullptr, false);
  std::map<std::string, SafetensorsTensor> tensors;
  if (!header.is_object()) return tensors;
  for (const auto& [name, entry] : header.items()) {
    const std::span<const uint8_t> bytes = Captured(name);
    if (bytes.empty() || !entry.is_object()) continue;
    tensors[name] = {entry.value("dtype", ""), entry.value("shape", std::vector<int64_t>{}), bytes};
  }
  return tensors;
}

ShardInflater::~ShardInflater() = default;

void ShardInflater::Feed(const uint8_t* data, size_t size) {
  if (!error_.empty() || size == 0) return;
  decoder_.SetInput(data, size);
  while (error_.empty()) {
    auto inflated = decoder_.Inflate(output_.data(), output_.size());
    if (!inflated) {
      error_ = inflated.error();
      break;
    }
    Consume(output_.data(), *inflated);
    if (*inflated < output_.size()) break;  // every byte fed is consumed
  }
}

void ShardInflater::Finish() {
  if (!error_.empty()) return;
  if (auto finished = decoder_.Finish(); !finished) error_ = finished.error();
}

int64_t ShardInflater::data_bytes() const {
  return header_complete_ ? inflated_bytes_ - static_cast<int64_t>(kSafetensorsLengthBytes) -
                                static_cast<int64_t>(header_length_)
                          : 0;
}

void ShardInflater::Consume(const uint8_t* data, size_t size) {
  while (size > 0 && error_.empty()) {
    size_t taken = 0;
    if (inflated_bytes_ < static_cast<int64_t>(kSafetensorsLengthBytes)) {
      const size_t at = static_cast<size_t>(inflated_bytes_);
      taken = std::min(size, kSafetensorsLengthBytes - at);
      std::memcpy(length_prefix_ + at, data, taken);
      if (at + taken == kSafetensorsLengthBytes) {
        std::memcpy(&header_length_, length_prefix_, sizeof(header_length_));  // little-endian
        if (header_length_ > kMaxHeaderBytes) {
          error_ = "header length " + std::to_string(header_length_) +
                   " bytes is beyond the format's 100 MB limit (damaged or not a safetensors file)";
        } else if (header_length_ == 0) {
          header_complete_ = true;
          PlanCaptures();
        }
      }
    } else if (!header_complete_) {
      taken = std::min<size_t>(size, header_length_ - header_.size());
      header_.append(reinterpret_cast<const char*>(data), taken);
      if (header_.size() == header_length_) {
        header_complete_ = true;
        PlanCaptures();
      }
    } else {
      taken = size;
      const int64_t begin = data_bytes(), end = begin + static_cast<int64_t>(size);
      for (auto& [name, capture] : captures_) {
        const int64_t from = std::max(begin, capture.begin), to = std::min(end, capture.end);
        if (from < to) {
          capture.bytes.insert(capture.bytes.end(), data + (from - begin), data + (to - begin));
        }
      }
    }
    inflated_bytes_ += static_cast<int64_t>(taken);
    data += taken;
    size -= taken;
  }
}

void ShardInflater::PlanCaptures() {
  const nlohmann::json header = nlohmann::json::parse(header_, nullptr, false);
  if (header.is_discarded() || !header.is_object()) return;  // reported by the layout check
  for (auto& [name, capture_entry] : captures_) {
    Capture* capture = &capture_entry;
    auto entry = header.find(name);
    if (entry == header.end() || !entry->is_object() || !entry->contains("data_offsets")) continue;
    const auto& offsets = (*entry)["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned()) {
      continue;
    }
    const auto begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > static_cast<uint64_t>(INT64_MAX)) continue;
    capture->begin = static_cast<int64_t>(begin);
    capture->end = static_cast<int64_t>(end);
  }
}

}  // namespace actex
