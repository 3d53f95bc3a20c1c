#ifndef ACTEX_TESTS_SAE_SAE_FIXTURES_H_
#define ACTEX_TESTS_SAE_SAE_FIXTURES_H_

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/test_files.h"

namespace actex {

// tests/fixtures/sae/NAME: the SAE folders the libraries saved (make_sae_fixtures.py).
inline std::string SaeFixture(const std::string& name) {
  return std::string(ACTEX_FIXTURES_DIR) + "/sae/" + name;
}

// A copy of fixture folder `name` in `temp` (as temp/FOLDER, FOLDER its last component
// unless `as` names another), for a test that damages it; returns its path.
inline std::string CopySaeFixture(const TempDir& temp, const std::string& name,
                                  const std::string& as = "") {
  const std::filesystem::path source = SaeFixture(name);
  const std::string target = temp.File(as.empty() ? source.filename().string() : as);
  std::filesystem::create_directories(target);
  std::filesystem::copy(source, target, std::filesystem::copy_options::recursive);
  return target;
}

// Rewrites DIR/cfg.json with `edit` applied to its JSON.
inline void EditSaeConfig(const std::string& dir,
                          const std::function<void(nlohmann::json&)>& edit) {
  const std::string path = dir + "/cfg.json";
  nlohmann::json config = nlohmann::json::parse(ReadBytes(path));
  edit(config);
  WriteBytes(path, config.dump());
}

}  // namespace actex

#endif  // ACTEX_TESTS_SAE_SAE_FIXTURES_H_
