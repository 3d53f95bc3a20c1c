#ifndef ACTEX_TESTS_FUZZ_SEED_FOLDER_H_
#define ACTEX_TESTS_FUZZ_SEED_FOLDER_H_

// What make_seed_corpus's writers share: reading a fixture and one target's folder of
// generated seeds. Any failure ends the program, naming the path: it is a tool run by
// hand after a format changes.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace actex {

inline std::string ReadFileOrExit(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One target's folder: removes its old generated seeds, then writes new ones.
class SeedFolder {
 public:
  SeedFolder(const std::filesystem::path& root, const std::string& target) : dir_(root / target) {
    std::filesystem::create_directories(dir_);
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().filename().string().starts_with("gen_")) {
        std::filesystem::remove(entry.path());
      }
    }
  }
  void Write(const std::string& name, std::string_view bytes) {
    std::ofstream out(dir_ / ("gen_" + name), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", (dir_ / name).c_str());
      std::exit(1);
    }
    ++count_;
  }
  ~SeedFolder() { std::printf("%s: %d seeds\n", dir_.c_str(), count_); }

 private:
  std::filesystem::path dir_;
  int count_ = 0;
};

}  // namespace actex

#endif  // ACTEX_TESTS_FUZZ_SEED_FOLDER_H_
