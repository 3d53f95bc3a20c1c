// Fuzzes the safetensors reader: the input is written to a file and opened with
// SafetensorsFile::Open, as the model loader opens a downloaded model.safetensors.
//
// Invariants checked: a refusal names the file; an accepted file's tensors have a
// known dtype, byte sizes equal to dtype size x shape, fit in the data section
// without overlapping, and the accepted file survives a round trip: its tensors and
// metadata, written again with EncodeSafetensorsHeader and opened, read back the
// same.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "storage/safetensors.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_scratch_dir.h"

namespace actex {
namespace {

constexpr size_t kLengthPrefixBytes = 8;

// dtype bytes x product(shape) in 128 bits, so it cannot overflow for any shape the
// reader could have accepted.
unsigned __int128 ExpectedBytes(const SafetensorsTensor& tensor) {
  unsigned __int128 bytes = static_cast<unsigned>(SafetensorsDtypeBytes(tensor.dtype));
  for (int64_t dim : tensor.shape) {
    FUZZ_CHECK(dim >= 0, "negative dimension accepted");
    bytes *= static_cast<uint64_t>(dim);
    if (bytes > (static_cast<unsigned __int128>(1) << 64)) return bytes;  // saturated: too big
  }
  return bytes;
}

void CheckTensors(const SafetensorsFile& file) {
  const uint64_t data_bytes =
      static_cast<uint64_t>(file.file_bytes()) - kLengthPrefixBytes - file.header_json().size();
  std::vector<std::span<const uint8_t>> used;
  uint64_t total = 0;
  for (const auto& [name, tensor] : file.tensors()) {
    FUZZ_CHECK(SafetensorsDtypeBytes(tensor.dtype) > 0, "unknown dtype %s accepted",
               tensor.dtype.c_str());
    FUZZ_CHECK(ExpectedBytes(tensor) == tensor.bytes.size(), "tensor %s: %zu bytes for its shape",
               name.c_str(), tensor.bytes.size());
    total += tensor.bytes.size();
    if (!tensor.bytes.empty()) used.push_back(tensor.bytes);
  }
  FUZZ_CHECK(total <= data_bytes, "tensors hold %llu bytes, the data section %llu",
             static_cast<unsigned long long>(total), static_cast<unsigned long long>(data_bytes));
  std::sort(used.begin(), used.end(),
            [](const auto& a, const auto& b) { return a.data() < b.data(); });
  for (size_t i = 1; i < used.size(); ++i) {
    FUZZ_CHECK(used[i - 1].data() + used[i - 1].size() <= used[i].data(), "tensors overlap");
  }
}

// Writes the accepted file's tensors again (back to back, in name order) and checks
// that the copy opens to the same tensors and metadata.
void CheckRoundTrip(const SafetensorsFile& file, const FuzzScratchDir& dir) {
  std::vector<TensorToWrite> tensors;
  for (const auto& [name, tensor] : file.tensors()) {
    tensors.push_back(TensorToWrite{name, tensor.dtype, tensor.shape, nullptr});
  }
  auto header = EncodeSafetensorsHeader(tensors, file.metadata());
  // The writer is stricter than the reader about names (empty, "__metadata__"); a
  // file it would not write cannot be compared.
  if (!header) return;
  std::string copy = *header;
  for (const auto& [name, tensor] : file.tensors()) {
    copy.append(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
  }
  const std::string path = dir.Write("copy.safetensors", copy);
  auto reopened = SafetensorsFile::Open(path);
  FUZZ_CHECK(reopened.has_value(), "a re-encoded file is refused: %s", reopened.error().c_str());
  FUZZ_CHECK((*reopened)->metadata() == file.metadata(), "metadata changed in a round trip");
  FUZZ_CHECK((*reopened)->tensors().size() == file.tensors().size(), "tensor count changed");
  for (const auto& [name, tensor] : file.tensors()) {
    auto found = (*reopened)->tensors().find(name);
    FUZZ_CHECK(found != (*reopened)->tensors().end(), "tensor %s lost", name.c_str());
    const SafetensorsTensor& again = found->second;
    FUZZ_CHECK(again.dtype == tensor.dtype && again.shape == tensor.shape, "tensor %s changed",
               name.c_str());
    FUZZ_CHECK(again.bytes.size() == tensor.bytes.size() &&
                   (tensor.bytes.empty() ||
                    std::memcmp(again.bytes.data(), tensor.bytes.data(), tensor.bytes.size()) == 0),
               "tensor %s bytes changed", name.c_str());
  }
}

void FuzzOneInput(std::string_view input) {
  static const FuzzScratchDir dir;
  const std::string path = dir.Write("model.safetensors", input);
  auto file = SafetensorsFile::Open(path);
  if (!file) {
    FUZZ_CHECK(file.error().find(path) != std::string::npos, "error does not name the file: %s",
               file.error().c_str());
    return;
  }
  FUZZ_CHECK((*file)->file_bytes() == static_cast<int64_t>(input.size()), "file size");
  CheckTensors(**file);
  CheckRoundTrip(**file, dir);
}

}  // namespace
}  // namespace actex

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  actex::FuzzOneInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
