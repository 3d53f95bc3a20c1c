// Every reader of what a shuffle writes against every careless edit of it
// (json_mutations.h): a resumed shuffle reading its state.json and metadata.json,
// and VerifyShuffled and the lm_saes export reading a finished shuffle's
// metadata.json. None may throw; a refusal by a resume or an export names the
// shuffle's folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "storage/activation_shuffle.h"
#include "storage/lm_saes_export.h"
#include "storage/shuffled_verifier.h"
#include "tests/storage/json_mutations.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class DamagedShuffle : public testing::Test {
 protected:
  void SetUp() override {
    SyntheticOutput spec;
    spec.hosts = 1;
    spec.documents = 40;
    spec.sites = {{"blocks.0.hook_resid_post", 8}};
    WriteSyntheticOutput(dir_.File("out"), spec);
  }
  ShuffleOptions Options() const {
    ShuffleOptions options;
    options.source_dir = dir_.File("out");
    options.out_dir = Shuffled();
    options.rows_per_file = 40;
    options.memory_bytes = 1 << 20;
    return options;
  }
  std::string Shuffled() const { return dir_.File("shuffled"); }
  std::string Saved() const { return dir_.File("saved"); }
  void Restore() {
    fs::remove_all(Shuffled());
    fs::copy(Saved(), Shuffled(), fs::copy_options::recursive);
  }

  // Runs `read` (which returns an error or nothing) on every mutation of `file`
  // (inside the shuffle's folder), the folder restored from Saved() each time.
  // `names_folder`: a refusal must name the shuffle's folder (VerifyShuffled's may
  // name the source instead, whose listing it compares).
  void Sweep(const std::string& file, const std::function<std::optional<std::string>()>& read,
             bool names_folder = true) {
    const nlohmann::json original = ReadJson(Saved() + "/" + file);
    for (const JsonMutation& mutation : JsonMutations(original)) {
      SCOPED_TRACE(file + ": " + mutation.what);
      Restore();
      WriteBytes(Shuffled() + "/" + file, mutation.document.dump());
      try {
        auto error = read();
        if (error && names_folder) {
          EXPECT_THAT(*error, HasSubstr(Shuffled()));
        }
      } catch (const std::exception& error) {
        ADD_FAILURE() << "threw " << error.what();
      }
    }
  }

  TempDir dir_;
};

template <typename Result>
std::optional<std::string> ErrorOf(const Result& result) {
  if (result) return std::nullopt;
  if constexpr (std::is_same_v<typename Result::error_type, CommandError>) {
    return result.error().message;
  } else {
    return result.error();
  }
}

TEST_F(DamagedShuffle, AResumeNeverThrowsOnItsStateOrListing) {
  ShuffleOptions failing = Options();
  failing.fail_after_bytes = 3000;  // past the first state.json, before the end
  auto failed = ShuffleActivations(failing);
  ASSERT_FALSE(failed.has_value());
  ASSERT_THAT(failed.error().message, HasSubstr("No space left")) << failed.error().message;
  ASSERT_TRUE(fs::exists(Shuffled() + "/.shuffle_work/state.json"));
  fs::copy(Shuffled(), Saved(), fs::copy_options::recursive);
  auto resume = [&] { return ErrorOf(ShuffleActivations(Options())); };
  Sweep(".shuffle_work/state.json", resume);
  Sweep("metadata.json", resume);
}

TEST_F(DamagedShuffle, ReadersOfAFinishedShuffleNeverThrowOnItsListing) {
  auto shuffled = ShuffleActivations(Options());
  ASSERT_TRUE(shuffled.has_value()) << shuffled.error().message;
  fs::copy(Shuffled(), Saved(), fs::copy_options::recursive);
  Sweep("metadata.json", [&] { return ErrorOf(ShuffleActivations(Options())); });
  Sweep(
      "metadata.json", [&] { return ErrorOf(VerifyShuffled(Shuffled(), "")); },
      /*names_folder=*/false);
  Sweep("metadata.json", [&] {
    LmSaesExportOptions options;
    options.source_dir = Shuffled();
    options.out_dir = dir_.File("export");
    fs::remove_all(options.out_dir);
    return ErrorOf(ExportForLmSaes(options));
  });
}

}  // namespace
}  // namespace actex
