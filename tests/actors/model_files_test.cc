// Careless and hostile input files, through the real actex binary: a FIFO or a device
// where a model or corpus file should be is refused instead of read forever, and each
// refusal names the real cause (a dangling symlink, a missing folder, a directory).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// Runs `actex extract` from `model` of `corpus` (empty: a one-document corpus); a run
// that reads a FIFO would block, so a short limit makes that a failure.
ActexOutcome Extract(const TempDir& dir, const std::string& model, const std::string& corpus = "",
                     const std::string& layers = "0,1") {
  const std::string data =
      corpus.empty() ? dir.Write("c.jsonl", "{\"input_ids\":[1,2,3]}\n") : corpus;
  std::vector<std::string> args = {"extract", "--model",           model,      "--data", data,
                                   "--out",   dir.path() + "/out", "--layers", layers};
  return RunActex(dir.path() + "/run", std::move(args), std::chrono::seconds(60));
}

// A model folder of the fixture's files, each a symlink (so any one can be replaced).
std::string ModelCopy(const TempDir& dir) {
  const std::string model = dir.path() + "/model";
  fs::create_directory(model);
  for (const char* name : {"config.json", "model.safetensors"}) {
    fs::create_symlink(kTinyModelDir + "/" + name, model + "/" + name);
  }
  return model;
}

void Replace(const std::string& path) { fs::remove(path); }

void ExpectRefused(const ActexOutcome& outcome, const std::string& message) {
  EXPECT_EQ(outcome.exit_code, 2) << "refused before any work (over 128: killed after the time "
                                     "limit, it read forever): "
                                  << outcome.err;
  EXPECT_NE(outcome.err.find(message), std::string::npos) << outcome.err;
}

TEST(ModelFiles, AFifoOrADeviceIsRefusedInsteadOfReadForever) {
  for (const char* name : {"model.safetensors", "config.json"}) {
    TempDir dir;
    const std::string model = ModelCopy(dir);
    Replace(model + "/" + name);
    ASSERT_EQ(::mkfifo((model + "/" + name).c_str(), 0644), 0);
    ExpectRefused(Extract(dir, model),
                  model + "/" + name + " is a FIFO (named pipe), not a regular file");
  }
  TempDir dir;
  const std::string model = ModelCopy(dir);
  Replace(model + "/model.safetensors");
  fs::create_symlink("/dev/zero", model + "/model.safetensors");
  ExpectRefused(Extract(dir, model), "model.safetensors is a character device, not a regular file");
}

TEST(ModelFiles, ATokenizerJsonThatIsAFifoOrADirectoryIsNamedAsSuch) {
  {
    TempDir dir;
    const std::string model = ModelCopy(dir);
    ASSERT_EQ(::mkfifo((model + "/tokenizer.json").c_str(), 0644), 0);
    ExpectRefused(Extract(dir, model), "tokenizer.json is a FIFO (named pipe), not a regular file");
  }
  TempDir dir;
  const std::string model = ModelCopy(dir);
  fs::create_directory(model + "/tokenizer.json");
  const ActexOutcome outcome = Extract(dir, model);
  ExpectRefused(outcome, "tokenizer.json is a directory, not a regular file");
  EXPECT_EQ(outcome.err.find("not valid JSON"), std::string::npos) << outcome.err;
}

TEST(ModelFiles, AConfigOverTheSizeBoundIsRefusedWithoutReadingIt) {
  TempDir dir;
  const std::string model = ModelCopy(dir);
  Replace(model + "/config.json");
  // Sparse: 1 GiB and a byte of holes, no disk used.
  ASSERT_EQ(::truncate(dir.Write("model/config.json", "").c_str(), (int64_t{1} << 30) + 1), 0);
  ExpectRefused(Extract(dir, model), "config.json is 1073741825 bytes, more than the 1 GiB");
}

TEST(ModelFiles, ADanglingOrLoopingWeightsSymlinkSaysWhereItPoints) {
  {
    TempDir dir;
    const std::string model = ModelCopy(dir);
    Replace(model + "/model.safetensors");
    fs::create_symlink(dir.path() + "/gone.safetensors", model + "/model.safetensors");
    const ActexOutcome outcome = Extract(dir, model);
    ExpectRefused(outcome, "model.safetensors is a symbolic link to " + dir.path() +
                               "/gone.safetensors, which does not exist");
    EXPECT_EQ(outcome.err.find("has neither"), std::string::npos) << outcome.err;
  }
  TempDir dir;
  const std::string model = ModelCopy(dir);
  Replace(model + "/model.safetensors");
  fs::create_symlink("model.safetensors", model + "/model.safetensors");
  ExpectRefused(Extract(dir, model),
                "model.safetensors is a symbolic link to model.safetensors that loops");
}

TEST(CorpusFiles, AGlobInAMissingFolderNamesTheFolder) {
  TempDir dir;
  ExpectRefused(Extract(dir, kTinyModelDir, dir.path() + "/nope/*.jsonl"),
                "the folder " + dir.path() + "/nope does not exist");
  fs::create_directory(dir.path() + "/empty");
  ExpectRefused(Extract(dir, kTinyModelDir, dir.path() + "/empty/*.jsonl"),
                "matches no file in " + dir.path() + "/empty");
}

TEST(CorpusFiles, AFifoIsRefusedSayingWhy) {
  TempDir dir;
  const std::string fifo = dir.path() + "/stream.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ExpectRefused(Extract(dir, kTinyModelDir, fifo),
                "input " + fifo +
                    " is a FIFO (named pipe), not a regular file: actex reads each "
                    "corpus file more than once");
}

TEST(Layers, ARangeBeyondTheModelIsQuotedAsGiven) {
  TempDir dir;
  const ActexOutcome outcome = Extract(dir, kTinyModelDir, "", "0-5");
  ExpectRefused(outcome, "--layers 0-5: layer 2 is not in the model, which has 2 layers (0..1)");
}

}  // namespace
}  // namespace actex
