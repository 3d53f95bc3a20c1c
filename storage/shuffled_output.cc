#include "storage/shuffled_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/json_field.h"

namespace actex {

using nlohmann::json;

std::string ShuffledFileName(int64_t index) {
  char name[48];
  std::snprintf(name, sizeof(name), "shuffled_%06lld.safetensors",
                static_cast<long long>(index + 1));
  return name;
}

std::string DtypeName(const std::string& dtype) {
  if (dtype == "F32") return "float32";
  if (dtype == "F16") return "float16";
  if (dtype == "BF16") return "bfloat16";
  return "";
}

std::string DtypeFromName(const std::string& name) {
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    if (DtypeName(dtype) == name) return dtype;
  }
  return "";
}

std::expected<std::pair<int64_t, uint32_t>, std::string> FileCrc32(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::unexpected(OsError("cannot open", path, errno));
  std::vector<uint8_t> chunk(size_t{1} << 20);
  int64_t total = 0;
  uint32_t crc = 0;
  for (;;) {
    const ssize_t got = ::read(fd.get(), chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::unexpected(OsError("cannot read", path, errno));
    if (got == 0) return std::make_pair(total, crc);
    crc = Crc32Update(crc, chunk.data(), static_cast<size_t>(got));
    total += got;
  }
}

bool IsShuffledOutput(const std::string& dir) {
  auto text = ReadWholeFile(dir + "/metadata.json");
  if (!text) return false;
  const json metadata = json::parse(*text, nullptr, false);
  return JsonStringField(metadata, {}, "format").value_or("") == kShuffledFormat;
}

}  // namespace actex
