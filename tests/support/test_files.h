#ifndef ACTEX_TESTS_SUPPORT_TEST_FILES_H_
#define ACTEX_TESTS_SUPPORT_TEST_FILES_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

namespace actex {

// A fresh directory under /tmp, removed with everything in it when the test ends (the
// one temporary folder of every test binary).
class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/actex-test-XXXXXX";
    if (::mkdtemp(name) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed: " << std::strerror(errno);
      return;
    }
    path_ = name;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` inside the directory.
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `contents` to `name` inside the directory and returns its path.
  std::string Write(const std::string& name, std::string_view contents) const {
    const std::string file = File(name);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    EXPECT_TRUE(out.good()) << file;
    return file;
  }

 private:
  std::string path_;
};

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadBytes(path));
}

// Writes `value` indented by two, as actex writes its json files.
inline void WriteJson(const std::string& path, const nlohmann::json& value) {
  WriteBytes(path, value.dump(2) + "\n");
}

// The names in `dir`, sorted.
inline std::set<std::string> DirectoryEntries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

}  // namespace actex

#endif  // ACTEX_TESTS_SUPPORT_TEST_FILES_H_
