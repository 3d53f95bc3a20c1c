// Paths are paths: the same model folder and corpus spelled otherwise ("m/", "./m",
// absolute) or reached from another working directory are the same run on resume,
// a changed --data is named as such, and `actex verify` works from anywhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// Runs actex with `args`, its current directory `cwd`.
ActexOutcome RunActexIn(const TempDir& dir, const std::string& cwd, std::vector<std::string> args) {
  return RunActex(dir.path() + "/run", std::move(args), std::chrono::seconds(120), cwd);
}

std::vector<std::string> Extract(const std::string& model, const std::string& data,
                                 const std::string& out) {
  return {"extract", "--model", model, "--data", data, "--out", out, "--layers", "0,1"};
}

// A model folder `name` in `dir` holding copies of the fixture's files (of its
// `variant` subfolder).
void CopyModel(const TempDir& dir, const std::string& name, const std::string& variant = "") {
  fs::create_directory(dir.path() + "/" + name);
  for (const char* file : {"config.json", "model.safetensors"}) {
    fs::copy_file(ACTEX_FIXTURES_DIR "/qwen2-tiny" + variant + "/" + file,
                  dir.path() + "/" + name + "/" + file);
  }
}

constexpr const char* kComplete = "was already complete";

class PathSpelling : public testing::Test {
 protected:
  void SetUp() override {
    CopyModel(dir_, "m");
    dir_.Write("c.jsonl", "{\"input_ids\":[1,2,3]}\n{\"input_ids\":[4,5]}\n");
    fs::create_directory(dir_.path() + "/elsewhere");
    const ActexOutcome first = RunActexIn(dir_, dir_.path(), Extract("m/", "c.jsonl", "out"));
    ASSERT_EQ(first.exit_code, 0) << first.err;
  }
  TempDir dir_;
};

TEST_F(PathSpelling, TheSameFolderAndFilesSpelledOtherwiseResume) {
  const ActexOutcome dotted = RunActexIn(dir_, dir_.path(), Extract("./m", "./c.jsonl", "out"));
  EXPECT_EQ(dotted.exit_code, 0) << dotted.err;
  EXPECT_NE(dotted.err.find(kComplete), std::string::npos) << dotted.err;
  const std::string root = dir_.path();
  const ActexOutcome absolute =
      RunActexIn(dir_, root + "/elsewhere", Extract(root + "/m", root + "/c.jsonl", root + "/out"));
  EXPECT_EQ(absolute.exit_code, 0) << absolute.err;
  EXPECT_NE(absolute.err.find(kComplete), std::string::npos) << absolute.err;
  const ActexOutcome relative =
      RunActexIn(dir_, root + "/elsewhere", Extract("../m", "../c.jsonl", "../out"));
  EXPECT_EQ(relative.exit_code, 0) << relative.err;
  EXPECT_NE(relative.err.find(kComplete), std::string::npos) << relative.err;
}

TEST_F(PathSpelling, AModelFolderMovedWithTheSameFilesIsTheSameModel) {
  fs::rename(dir_.path() + "/m", dir_.path() + "/moved");
  const ActexOutcome moved = RunActexIn(dir_, dir_.path(), Extract("moved", "c.jsonl", "out"));
  EXPECT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_NE(moved.err.find(kComplete), std::string::npos) << moved.err;
}

TEST_F(PathSpelling, AnotherModelFolderWithOtherFilesIsRefusedNamingModel) {
  CopyModel(dir_, "other", "/model-bf16");  // the same model in bfloat16: other files
  const ActexOutcome refused = RunActexIn(dir_, dir_.path(), Extract("other", "c.jsonl", "out"));
  EXPECT_NE(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.err.find("--model: out/host_00 was written with the model in " + dir_.path() +
                             "/m, this run gives " + dir_.path() + "/other, whose files differ"),
            std::string::npos)
      << refused.err;
  // Other files in the same folder are another model too.
  for (const char* file : {"config.json", "model.safetensors"}) {
    fs::copy_file(dir_.path() + "/other/" + file, dir_.path() + "/m/" + file,
                  fs::copy_options::overwrite_existing);
  }
  const ActexOutcome changed = RunActexIn(dir_, dir_.path(), Extract("m", "c.jsonl", "out"));
  EXPECT_NE(changed.exit_code, 0) << changed.err;
  EXPECT_NE(changed.err.find("--model: the files in " + dir_.path() + "/m changed since"),
            std::string::npos)
      << changed.err;
}

TEST_F(PathSpelling, AChangedDataIsNamedAsDataWithTheFileThatDiffers) {
  dir_.Write("d.jsonl", "{\"input_ids\":[7]}\n");
  const ActexOutcome changed = RunActexIn(dir_, dir_.path(), Extract("m", "d.jsonl", "out"));
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_NE(changed.err.find("--data: "), std::string::npos) << changed.err;
  EXPECT_NE(changed.err.find(dir_.path() + "/c.jsonl (now " + dir_.path() + "/d.jsonl)"),
            std::string::npos)
      << changed.err;
  EXPECT_EQ(changed.err.find("corpus_size"), std::string::npos) << changed.err;
  // The same file with other contents is named as a changed corpus, not as its size.
  dir_.Write("c.jsonl", "{\"input_ids\":[1,2,3]}\n");
  const ActexOutcome edited = RunActexIn(dir_, dir_.path(), Extract("m", "c.jsonl", "out"));
  EXPECT_NE(edited.exit_code, 0);
  EXPECT_NE(edited.err.find("--data: the corpus files " + dir_.path() + "/c.jsonl changed"),
            std::string::npos)
      << edited.err;
}

TEST_F(PathSpelling, VerifyReadsTheRecordedCorpusFromAnyDirectoryAndSaysWhich) {
  const ActexOutcome verify = RunActexIn(dir_, "/", {"verify", dir_.path() + "/out"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("corpus: " + dir_.path() + "/c.jsonl (as host_00/metadata.json"),
            std::string::npos)
      << verify.out;
  EXPECT_NE(verify.out.find("verified 2 documents"), std::string::npos) << verify.out;
}

// Outputs written before paths were recorded absolute name their corpus as typed:
// verify takes those paths from its current directory and says so.
TEST_F(PathSpelling, VerifySaysWhereAnOlderOutputsRelativeCorpusPathsWereTaken) {
  const std::string metadata_path = dir_.path() + "/out/host_00/metadata.json";
  nlohmann::json metadata = nlohmann::json::parse(std::ifstream(metadata_path));
  metadata["config"]["data"] = {"c.jsonl"};
  std::ofstream(metadata_path) << metadata.dump(2);
  const ActexOutcome verify = RunActexIn(dir_, dir_.path(), {"verify", "out"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("corpus: " + dir_.path() +
                            "/c.jsonl (as host_00/metadata.json names "
                            "it; its relative paths are taken from the current directory " +
                            dir_.path() + ")"),
            std::string::npos)
      << verify.out;
}

}  // namespace
}  // namespace actex
