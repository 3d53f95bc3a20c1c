// A flag newer than a run's metadata.json: the run, written before the flag existed,
// resumes as if it had been given the flag's default (--precision fp32), and only a
// value other than that default is refused as a different run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

// actex run with `dir` as its current directory.
ActexOutcome RunActexInside(const TempDir& dir, std::vector<std::string> args) {
  return RunActex(dir.path() + "/run", std::move(args), std::chrono::seconds(120), dir.path());
}

// Rewrites host_00/metadata.json's config through `edit`.
void EditRecordedConfig(const TempDir& dir, void (*edit)(nlohmann::json& config)) {
  const std::string path = dir.path() + "/out/host_00/metadata.json";
  nlohmann::json metadata = nlohmann::json::parse(std::ifstream(path));
  edit(metadata["config"]);
  std::ofstream(path) << metadata.dump(2);
}

TEST(RecordedDefaults, ARunRecordedBeforePrecisionExistedResumesAsFp32) {
  TempDir dir;
  dir.Write("c.jsonl", "{\"input_ids\":[1,2,3]}\n{\"input_ids\":[4,5]}\n");
  const std::vector<std::string> extract = {"extract", "--model",  ACTEX_FIXTURES_DIR "/qwen2-tiny",
                                            "--data",  "c.jsonl",  "--out",
                                            "out",     "--layers", "1"};
  ASSERT_EQ(RunActexInside(dir, extract).exit_code, 0);

  EditRecordedConfig(dir, [](nlohmann::json& config) { config.erase("precision"); });
  const ActexOutcome older = RunActexInside(dir, extract);
  EXPECT_EQ(older.exit_code, 0) << older.err;
  EXPECT_NE(older.err.find("was already complete"), std::string::npos) << older.err;

  EditRecordedConfig(dir, [](nlohmann::json& config) { config["precision"] = "bf16"; });
  const ActexOutcome other = RunActexInside(dir, extract);
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.err.find("--precision: "), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("was written with \"bf16\", this run asks for \"fp32\""),
            std::string::npos)
      << other.err;
}

}  // namespace
}  // namespace actex
