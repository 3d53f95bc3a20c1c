#ifndef ACTEX_TESTS_MODEL_TOKENIZER_TEMP_DIR_H_
#define ACTEX_TESTS_MODEL_TOKENIZER_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace actex {

// A fresh directory under /tmp (mkdtemp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/actex_tokenizer_test_XXXXXX";
    const char* made = mkdtemp(pattern);
    path_ = made != nullptr ? made : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `contents` to `name` inside the directory and returns the full path.
  std::string Write(const std::string& name, std::string_view contents) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    return file;
  }

 private:
  std::string path_;
};

}  // namespace actex

#endif  // ACTEX_TESTS_MODEL_TOKENIZER_TEMP_DIR_H_
