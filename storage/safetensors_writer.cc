#include <algorithm>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>

#include "storage/file_io.h"
#include "storage/safetensors.h"

namespace actex {

std::expected<std::string, std::string> EncodeSafetensorsHeader(
    const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata,
    size_t at_least) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto& entry = header[kSafetensorsMetadataKey] = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) entry[key] = value;
  }
  int64_t offset = 0;
  for (const auto& tensor : tensors) {
    if (tensor.name.empty() || tensor.name == kSafetensorsMetadataKey) {
      return std::unexpected("tensor name \"" + tensor.name + "\" is not allowed");
    }
    if (header.contains(tensor.name)) {
      return std::unexpected("tensor \"" + tensor.name + "\" appears twice");
    }
    auto bytes = SafetensorsTensorBytes(tensor.dtype, tensor.shape);
    if (!bytes) return std::unexpected("tensor \"" + tensor.name + "\": " + bytes.error());
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + *bytes}}};
    offset += *bytes;
  }
  std::string json;
  try {
    json = header.dump();
  } catch (const nlohmann::json::exception& error) {
    return std::unexpected(std::string("cannot encode safetensors header: ") + error.what());
  }
  // Padding keeps the data section 8-byte aligned for readers that map it in place.
  json.append((8 - json.size() % 8) % 8, ' ');
  if (kSafetensorsLengthBytes + json.size() < at_least) {
    json.append(at_least - kSafetensorsLengthBytes - json.size(), ' ');
  }
  const uint64_t length = json.size();
  std::string out(kSafetensorsLengthBytes, '\0');
  std::memcpy(out.data(), &length, kSafetensorsLengthBytes);
  return out + json;
}

std::expected<void, std::string> WriteSafetensors(
    const std::string& path, const std::vector<TensorToWrite>& tensors,
    const std::map<std::string, std::string>& metadata) {
  auto header = EncodeSafetensorsHeader(tensors, metadata);
  if (!header) return std::unexpected(path + ": " + header.error());
  size_t largest = 0;
  for (const auto& tensor : tensors) {
    if (!tensor.fill) {
      return std::unexpected(path + ": tensor \"" + tensor.name + "\" has no fill function");
    }
    // SafetensorsTensorBytes succeeded inside EncodeSafetensorsHeader.
    largest =
        std::max(largest, static_cast<size_t>(*SafetensorsTensorBytes(tensor.dtype, tensor.shape)));
  }

  return WriteFileAtomically(
      path, [&](int fd, const std::string& tmp_path) -> std::expected<void, std::string> {
        if (auto ok = WriteAll(fd, header->data(), header->size(), tmp_path, nullptr); !ok) {
          return ok;
        }
        std::vector<uint8_t> buffer;
        try {
          buffer.resize(largest);
        } catch (const std::bad_alloc&) {
          return std::unexpected(path + ": cannot allocate " + std::to_string(largest) +
                                 " bytes for the largest tensor");
        }
        for (const auto& tensor : tensors) {
          std::span<uint8_t> bytes(buffer.data(), static_cast<size_t>(*SafetensorsTensorBytes(
                                                      tensor.dtype, tensor.shape)));
          try {
            tensor.fill(bytes);
          } catch (const std::exception& error) {
            return std::unexpected(path + ": filling tensor \"" + tensor.name +
                                   "\" failed: " + error.what());
          }
          if (auto ok = WriteAll(fd, bytes.data(), bytes.size(), tmp_path, nullptr); !ok) {
            return ok;
          }
        }
        return {};
      });
}

}  // namespace actex
