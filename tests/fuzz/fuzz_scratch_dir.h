#ifndef ACTEX_TESTS_FUZZ_FUZZ_SCRATCH_DIR_H_
#define ACTEX_TESTS_FUZZ_FUZZ_SCRATCH_DIR_H_

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace actex {

// A fresh directory under /tmp for the harnesses that must hand the code under test
// a file. One per fuzzer process: libFuzzer runs inputs one after the other, so each
// input overwrites the same few files. Removed when the process exits normally; a
// crash leaves it behind for inspection.
class FuzzScratchDir {
 public:
  FuzzScratchDir() {
    char name[] = "/tmp/actex_fuzz_XXXXXX";
    if (::mkdtemp(name) == nullptr) {
      std::perror("mkdtemp");
      std::abort();  // the harness cannot run at all: not a finding
    }
    path_ = name;
  }
  ~FuzzScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  FuzzScratchDir(const FuzzScratchDir&) = delete;
  FuzzScratchDir& operator=(const FuzzScratchDir&) = delete;

  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

  // Replaces `name` with exactly `bytes`; returns its path. The old file is removed
  // first: on ext4, truncating a file that has data makes close(2) flush it to disk
  // (auto_da_alloc), which costs milliseconds per input.
  std::string Write(std::string_view name, std::string_view bytes) const {
    const std::string path = File(name);
    ::unlink(path.c_str());
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size() ||
        std::fclose(file) != 0) {
      std::perror(path.c_str());
      std::abort();  // the disk, not the code under test, failed
    }
    return path;
  }

 private:
  std::string path_;
};

}  // namespace actex

#endif  // ACTEX_TESTS_FUZZ_FUZZ_SCRATCH_DIR_H_
