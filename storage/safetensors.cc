#include "storage/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "base/regular_file.h"
#include "base/text.h"
#include "storage/file_io.h"

namespace actex {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian numbers; this code reads them in place");

namespace {

// Reads a JSON number that must be a non-negative integer fitting int64_t.
bool ReadNonNegative(const nlohmann::json& value, int64_t* out) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v < 0) return false;
    *out = v;
    return true;
  }
  return false;
}

struct ParsedTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t begin = 0;
  int64_t end = 0;
};

// Checks one header entry against the format; `data_bytes` is what follows the header.
std::expected<ParsedTensor, std::string> ParseTensorEntry(const std::string& name,
                                                          const nlohmann::json& entry,
                                                          int64_t data_bytes) {
  if (!entry.is_object()) return std::unexpected(std::string("entry is not a JSON object"));
  ParsedTensor tensor;
  tensor.name = name;
  auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) {
    return std::unexpected(std::string("missing or non-string \"dtype\""));
  }
  tensor.dtype = dtype->get<std::string>();
  auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) {
    return std::unexpected(std::string("missing or non-array \"shape\""));
  }
  for (const auto& dim : *shape) {
    int64_t value = 0;
    if (!ReadNonNegative(dim, &value)) {
      return std::unexpected("shape " + DescribeJson(*shape) +
                             " is not a list of non-negative integers");
    }
    tensor.shape.push_back(value);
  }
  auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
      !ReadNonNegative((*offsets)[0], &tensor.begin) ||
      !ReadNonNegative((*offsets)[1], &tensor.end)) {
    return std::unexpected(
        std::string("\"data_offsets\" is not [begin, end] of non-negative integers"));
  }
  if (tensor.begin > tensor.end) {
    return std::unexpected("data_offsets " + offsets->dump() + " end before they begin");
  }
  if (tensor.end > data_bytes) {
    return std::unexpected("data_offsets " + offsets->dump() + " run past the end of the data (" +
                           std::to_string(data_bytes) + " bytes after the header)");
  }
  auto expected_bytes = SafetensorsTensorBytes(tensor.dtype, tensor.shape);
  if (!expected_bytes) return std::unexpected(expected_bytes.error());
  if (*expected_bytes != tensor.end - tensor.begin) {
    return std::unexpected(tensor.dtype + " " + ShapeText(tensor.shape) + " needs " +
                           std::to_string(*expected_bytes) + " bytes but data_offsets " +
                           offsets->dump() + " span " + std::to_string(tensor.end - tensor.begin));
  }
  return tensor;
}

// The tensors that `header_json` lists in a data section of `data_bytes` bytes, and
// its "__metadata__" strings into `metadata`. Errors say what is wrong (not the path).
std::expected<std::vector<ParsedTensor>, std::string> ParseHeader(
    const std::string& header_json, int64_t data_bytes,
    std::map<std::string, std::string>* metadata) {
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_json);
  } catch (const nlohmann::json::exception& error) {
    return std::unexpected(std::string("header is not valid JSON: ") + error.what());
  }
  if (!header.is_object()) return std::unexpected("header is not a JSON object");
  std::vector<ParsedTensor> parsed;
  for (const auto& [name, entry] : header.items()) {
    if (name == kSafetensorsMetadataKey) {
      if (!entry.is_object()) return std::unexpected("\"__metadata__\" is not a JSON object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          return std::unexpected("\"__metadata__\" entry \"" + key + "\" is not a string");
        }
        (*metadata)[key] = value.get<std::string>();
      }
      continue;
    }
    auto tensor = ParseTensorEntry(name, entry, data_bytes);
    if (!tensor) return std::unexpected("tensor \"" + name + "\": " + tensor.error());
    parsed.push_back(std::move(*tensor));
  }
  return parsed;
}

// Fails naming two tensors that share bytes of the data section; empty tensors occupy
// none and cannot overlap.
std::expected<void, std::string> CheckNoOverlap(const std::vector<ParsedTensor>& parsed) {
  std::vector<const ParsedTensor*> by_offset;
  for (const auto& tensor : parsed) {
    if (tensor.end > tensor.begin) by_offset.push_back(&tensor);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->begin < by_offset[i - 1]->end) {
      return std::unexpected("tensor \"" + by_offset[i]->name + "\" overlaps tensor \"" +
                             by_offset[i - 1]->name + "\" in the data section");
    }
  }
  return {};
}

}  // namespace

struct SafetensorsFile::State {
  std::string path;
  void* mapping = MAP_FAILED;
  size_t mapping_bytes = 0;
  std::map<std::string, SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
  std::string header_json;

  ~State() {
    if (mapping != MAP_FAILED) ::munmap(mapping, mapping_bytes);
  }
};

SafetensorsFile::SafetensorsFile() : state_(std::make_unique<State>()) {}
SafetensorsFile::~SafetensorsFile() = default;

std::expected<std::unique_ptr<SafetensorsFile>, std::string> SafetensorsFile::Open(
    const std::string& path) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  State& state = *file->state_;
  state.path = path;
  auto fail = [&](const std::string& message) { return std::unexpected(path + ": " + message); };

  // A FIFO or a device (a link to /dev/zero) is refused here, before mmap or read.
  auto opened = OpenRegularFile(path);
  if (!opened) return std::unexpected(opened.error());
  const int fd = opened->fd();
  const auto file_bytes = static_cast<uint64_t>(opened->bytes());
  if (file_bytes < kSafetensorsLengthBytes) {
    return fail("not a safetensors file: " + std::to_string(file_bytes) +
                " bytes, fewer than the 8-byte header length");
  }
  state.mapping_bytes = static_cast<size_t>(file_bytes);
  state.mapping = ::mmap(nullptr, state.mapping_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  if (state.mapping == MAP_FAILED) return std::unexpected(OsError("cannot mmap", path, errno));
  const auto* bytes = static_cast<const uint8_t*>(state.mapping);

  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes, kSafetensorsLengthBytes);
  if (header_bytes > file_bytes - kSafetensorsLengthBytes) {
    return fail("header length " + std::to_string(header_bytes) + " exceeds the " +
                std::to_string(file_bytes - kSafetensorsLengthBytes) +
                " bytes that follow it (truncated or not a safetensors file)");
  }
  state.header_json.assign(reinterpret_cast<const char*>(bytes) + kSafetensorsLengthBytes,
                           static_cast<size_t>(header_bytes));
  const int64_t data_bytes =
      static_cast<int64_t>(file_bytes - kSafetensorsLengthBytes - header_bytes);
  const uint8_t* data = bytes + kSafetensorsLengthBytes + header_bytes;

  auto parsed = ParseHeader(state.header_json, data_bytes, &state.metadata);
  if (!parsed) return fail(parsed.error());
  if (auto apart = CheckNoOverlap(*parsed); !apart) return fail(apart.error());
  for (auto& tensor : *parsed) {
    SafetensorsTensor& out = state.tensors[tensor.name];
    out.dtype = std::move(tensor.dtype);
    out.shape = std::move(tensor.shape);
    out.bytes = std::span<const uint8_t>(data + tensor.begin,
                                         static_cast<size_t>(tensor.end - tensor.begin));
  }
  return file;
}

const std::map<std::string, SafetensorsTensor>& SafetensorsFile::tensors() const {
  return state_->tensors;
}
const std::map<std::string, std::string>& SafetensorsFile::metadata() const {
  return state_->metadata;
}
const std::string& SafetensorsFile::path() const { return state_->path; }
int64_t SafetensorsFile::file_bytes() const { return static_cast<int64_t>(state_->mapping_bytes); }
const std::string& SafetensorsFile::header_json() const { return state_->header_json; }
int64_t SafetensorsFile::data_bytes() const {
  return file_bytes() - static_cast<int64_t>(kSafetensorsLengthBytes + state_->header_json.size());
}

int SafetensorsDtypeBytes(const std::string& dtype) {
  static const std::pair<const char*, int> kSizes[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
      {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  for (const auto& [name, bytes] : kSizes) {
    if (dtype == name) return bytes;
  }
  return 0;
}

std::expected<int64_t, std::string> SafetensorsTensorBytes(const std::string& dtype,
                                                           const std::vector<int64_t>& shape) {
  int64_t bytes = SafetensorsDtypeBytes(dtype);
  if (bytes == 0) return std::unexpected("unknown dtype \"" + dtype + "\"");
  for (int64_t dim : shape) {
    if (dim < 0) return std::unexpected("negative dimension " + std::to_string(dim));
    if (__builtin_mul_overflow(bytes, dim, &bytes)) {
      return std::unexpected(std::string("shape too large: byte size overflows 64 bits"));
    }
  }
  return bytes;
}

}  // namespace actex
