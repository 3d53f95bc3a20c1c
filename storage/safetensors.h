#ifndef ACTEX_STORAGE_SAFETENSORS_H_
#define ACTEX_STORAGE_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace actex {

// The safetensors format: an 8-byte little-endian header length, a JSON header
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the tensor bytes, offsets relative to the end of the header.

struct SafetensorsTensor {
  std::string dtype;  // "F32", "BF16", "F16", "I32", "I64", ...
  std::vector<int64_t> shape;
  std::span<const uint8_t> bytes;  // inside the mapping
};

// A safetensors file mapped read-only. Open validates the whole header (offsets in
// range, sizes matching dtype x shape, no overlap) and names the file in every error.
class SafetensorsFile {
 public:
  static std::expected<std::unique_ptr<SafetensorsFile>, std::string> Open(const std::string& path);

  const std::map<std::string, SafetensorsTensor>& tensors() const;
  const std::map<std::string, std::string>& metadata() const;
  const std::string& path() const;
  int64_t file_bytes() const;
  const std::string& header_json() const;
  // The bytes after the header, where the tensors' data_offsets point.
  int64_t data_bytes() const;

  ~SafetensorsFile();

 private:
  SafetensorsFile();
  struct State;
  std::unique_ptr<State> state_;
};

// A tensor to write: its bytes come from `fill`, called once with a buffer of exactly
// the tensor's size, so large models are produced without holding them in memory.
struct TensorToWrite {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::function<void(std::span<uint8_t>)> fill;
};

// Writes `tensors` (in the given order) to `path` via a temporary file, fsync and
// rename. The header is padded with spaces to a multiple of 8 bytes.
std::expected<void, std::string> WriteSafetensors(
    const std::string& path, const std::vector<TensorToWrite>& tensors,
    const std::map<std::string, std::string>& metadata);

// Size in bytes of one element of `dtype`, 0 if unknown. Knows every dtype of the
// format: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2.
int SafetensorsDtypeBytes(const std::string& dtype);

// Bytes of a tensor of `dtype` and `shape`; an error for an unknown dtype, a
// negative dimension, or a size that does not fit int64_t.
std::expected<int64_t, std::string> SafetensorsTensorBytes(const std::string& dtype,
                                                           const std::vector<int64_t>& shape);

// Bytes of the little-endian header length that starts the file.
inline constexpr size_t kSafetensorsLengthBytes = 8;

// The header key that holds the file's string metadata, never a tensor's name.
inline constexpr const char* kSafetensorsMetadataKey = "__metadata__";

// The bytes that precede the tensor data in a safetensors file holding `tensors`
// back to back in the given order (their `fill` is not used): the 8-byte length
// and the JSON header padded with spaces to a multiple of 8, and further to `at_least`
// bytes in all (a multiple of 8: the room a writer left for it before the data; the
// format allows any trailing spaces). Errors on an unknown dtype, a negative dimension,
// an empty, reserved or duplicate name. For writers that stream the tensor bytes
// themselves (the shard writer).
std::expected<std::string, std::string> EncodeSafetensorsHeader(
    const std::vector<TensorToWrite>& tensors, const std::map<std::string, std::string>& metadata,
    size_t at_least = 0);

}  // namespace actex

#endif  // ACTEX_STORAGE_SAFETENSORS_H_
