// ShuffleActivations and VerifyShuffled on outputs of several host folders written
// by ShardWriter: every row exactly once, a permutation fixed by the seed alone,
// resumable after a failure, and damaged inputs or outputs named.
#include "storage/activation_shuffle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/float_convert.h"
#include "storage/safetensors.h"
#include "storage/shuffled_output.h"
#include "storage/shuffled_verifier.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ShuffleOptions Options(const std::string& source, const std::string& out) {
  ShuffleOptions options;
  options.source_dir = source;
  options.out_dir = out;
  options.rows_per_file = 97;
  options.seed = 7;
  options.memory_bytes = 1 << 20;
  return options;
}

// (doc id, position) of every row, file after file.
std::vector<std::pair<int64_t, int32_t>> RowOrder(const std::string& dir) {
  std::vector<std::pair<int64_t, int32_t>> rows;
  for (int64_t f = 0; fs::exists(dir + "/" + ShuffledFileName(f)); ++f) {
    auto file = SafetensorsFile::Open(dir + "/" + ShuffledFileName(f));
    EXPECT_TRUE(file.has_value());
    const auto& doc_ids = (*file)->tensors().at("doc_ids").bytes;
    const auto& positions = (*file)->tensors().at("positions").bytes;
    for (size_t r = 0; r < doc_ids.size() / 8; ++r) {
      int64_t doc;
      int32_t position;
      std::memcpy(&doc, doc_ids.data() + 8 * r, 8);
      std::memcpy(&position, positions.data() + 4 * r, 4);
      rows.emplace_back(doc, position);
    }
  }
  return rows;
}

std::string FilesBytes(const std::string& dir) {
  std::string bytes;
  for (int64_t f = 0; fs::exists(dir + "/" + ShuffledFileName(f)); ++f) {
    bytes += ReadBytes(dir + "/" + ShuffledFileName(f));
  }
  return bytes;
}

void ExpectVerified(const std::string& dir, int64_t rows) {
  auto check = VerifyShuffled(dir, "");
  ASSERT_TRUE(check.has_value()) << check.error();
  EXPECT_THAT(check->faults, IsEmpty());
  EXPECT_EQ(check->rows, rows);
}

class ShuffleOfTwoHosts : public testing::Test {
 protected:
  void SetUp() override { WriteSyntheticOutput(source(), spec_); }
  std::string source() const { return dir_.File("out"); }
  std::string shuffled() const { return dir_.File("shuffled"); }

  TempDir dir_;
  SyntheticOutput spec_{.gzip_odd_hosts = true};
};

TEST_F(ShuffleOfTwoHosts, EveryRowOnceInFilesOfTheGivenSize) {
  auto result = ShuffleActivations(Options(source(), shuffled()));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  const int64_t rows = SyntheticRows(spec_);
  EXPECT_EQ(result->rows, rows);
  EXPECT_GT(result->buckets, 1);
  EXPECT_EQ(result->files, (rows + 96) / 97);
  ExpectVerified(shuffled(), rows);
  const auto order = RowOrder(shuffled());
  ASSERT_EQ(static_cast<int64_t>(order.size()), rows);
  EXPECT_EQ(std::set(order.begin(), order.end()).size(), order.size());
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
  EXPECT_FALSE(fs::exists(shuffled() + "/.shuffle_work"));
}

TEST_F(ShuffleOfTwoHosts, PermutationIsFixedByTheSeedAloneNotByMemoryOrFileSize) {
  auto options = Options(source(), shuffled());
  ASSERT_TRUE(ShuffleActivations(options).has_value());
  auto other = Options(source(), dir_.File("other"));
  other.memory_bytes = 64 << 20;  // one bucket
  other.rows_per_file = 1000;
  auto result = ShuffleActivations(other);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->buckets, 1);
  EXPECT_EQ(RowOrder(shuffled()), RowOrder(dir_.File("other")));
  auto reseeded = Options(source(), dir_.File("reseeded"));
  reseeded.seed = 8;
  ASSERT_TRUE(ShuffleActivations(reseeded).has_value());
  EXPECT_NE(RowOrder(shuffled()), RowOrder(dir_.File("reseeded")));
}

TEST_F(ShuffleOfTwoHosts, ChosenSitesInAnotherDtypeWithSkippedTokens) {
  auto options = Options(source(), shuffled());
  options.sites = {"blocks.1.hook_resid_post"};
  options.dtype = "F32";
  options.skip_token_ids = {0, 248, 255};  // doc 0's first token, and some of others
  auto result = ShuffleActivations(options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  int64_t skipped = 0;
  for (int64_t doc = 0; doc < spec_.documents; ++doc) {
    for (int t = 0; t < SyntheticTokens(doc); ++t) {
      const int32_t token = static_cast<int32_t>((doc * 31 + t * 7) % 151000);
      skipped += token == 0 || token == 248 || token == 255;
    }
  }
  ASSERT_GT(skipped, 3);
  EXPECT_EQ(result->skipped, skipped);
  ExpectVerified(shuffled(), SyntheticRows(spec_) - skipped);
  auto file = SafetensorsFile::Open(shuffled() + "/" + ShuffledFileName(0));
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ((*file)->tensors().size(), 4u);
  EXPECT_EQ((*file)->tensors().at("blocks.1.hook_resid_post").dtype, "F32");
}

TEST_F(ShuffleOfTwoHosts, FailedShuffleResumesToTheSameFiles) {
  ASSERT_TRUE(ShuffleActivations(Options(source(), dir_.File("reference"))).has_value());
  const std::string reference = FilesBytes(dir_.File("reference"));
  // Fail at ever later points (as a full disk would), resuming each time.
  int failures = 0;
  for (int64_t budget = 20000;; budget += 250000) {
    auto options = Options(source(), shuffled());
    options.fail_after_bytes = budget;
    auto result = ShuffleActivations(options);
    if (result) break;
    EXPECT_THAT(result.error().message, HasSubstr("No space left on device"));
    EXPECT_EQ(result.error().kind, CommandError::Kind::kStopped);
    ++failures;
  }
  EXPECT_GT(failures, 3);
  auto result = ShuffleActivations(Options(source(), shuffled()));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_TRUE(result->resumed);
  EXPECT_EQ(FilesBytes(shuffled()), reference);
  ExpectVerified(shuffled(), SyntheticRows(spec_));
}

TEST_F(ShuffleOfTwoHosts, KilledBeforeItsFirstListingWasInPlaceStartsAfresh) {
  ASSERT_TRUE(ShuffleActivations(Options(source(), dir_.File("reference"))).has_value());
  // What a kill between writing metadata.json's temporary copy and renaming it
  // leaves: the work folder and half a listing under the temporary name.
  fs::create_directories(shuffled() + "/.shuffle_work");
  WriteBytes(shuffled() + "/.shuffle_work/state.json", "{\"buckets\": 3}");
  WriteBytes(AtomicWriteTempPath(shuffled() + "/metadata.json"), "{\"format\": \"act");
  auto result = ShuffleActivations(Options(source(), shuffled()));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(FilesBytes(shuffled()), FilesBytes(dir_.File("reference")));
  ExpectVerified(shuffled(), SyntheticRows(spec_));
  // Any other file there is someone else's: refused, left as it was.
  const std::string other = dir_.File("other");
  fs::create_directories(other);
  WriteBytes(other + "/notes.txt", "mine");
  auto refused = ShuffleActivations(Options(source(), other));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, CommandError::Kind::kRefused);
  EXPECT_THAT(refused.error().message, HasSubstr("is not empty"));
  EXPECT_EQ(ReadBytes(other + "/notes.txt"), "mine");
}

TEST_F(ShuffleOfTwoHosts, OtherParametersOverAnUnfinishedShuffleAreRefused) {
  auto options = Options(source(), shuffled());
  options.fail_after_bytes = 30000;
  ASSERT_FALSE(ShuffleActivations(options).has_value());
  options.fail_after_bytes = -1;
  options.seed = 9;
  auto result = ShuffleActivations(options);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("already holds another shuffle"));
  EXPECT_EQ(result.error().kind, CommandError::Kind::kRefused);
}

TEST_F(ShuffleOfTwoHosts, AMemoryBudgetPastTheMachinesIsRefusedWritingNothing) {
  auto options = Options(source(), shuffled());
  options.memory_bytes = int64_t{100000} << 40;  // --memory 100000TB
  auto result = ShuffleActivations(options);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, CommandError::Kind::kRefused);
  // "this machine's 23.4 GiB", or a container's limit.
  EXPECT_THAT(result.error().message, HasSubstr("--memory 104857600000 MiB is more than this "));
  EXPECT_FALSE(std::filesystem::exists(shuffled()));
}

TEST_F(ShuffleOfTwoHosts, DamagedSourceShardIsNamed) {
  const std::string shard = source() + "/host_00/shard_000002.safetensors";
  std::string bytes = ReadBytes(shard);
  bytes[bytes.size() - 40] ^= 1;
  WriteBytes(shard, bytes);
  auto result = ShuffleActivations(Options(source(), shuffled()));
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("host_00/shard_000002.safetensors"));
  EXPECT_THAT(result.error().message, HasSubstr("damaged"));
  EXPECT_EQ(result.error().kind, CommandError::Kind::kStopped);
}

TEST(Shuffle, MissingOrEmptySourceIsAnError) {
  TempDir dir;
  auto missing = ShuffleActivations(Options(dir.File("nothing"), dir.File("shuffled")));
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message, HasSubstr("is not a directory"));
  WriteSyntheticOutput(dir.File("out"), SyntheticOutput{.hosts = 1, .documents = 3});
  auto inside = ShuffleActivations(Options(dir.File("out"), dir.File("out/shuffled")));
  ASSERT_FALSE(inside.has_value());
  EXPECT_THAT(inside.error().message, HasSubstr("is inside"));
  EXPECT_EQ(inside.error().kind, CommandError::Kind::kRefused);
  fs::create_directories(dir.File("empty"));
  auto empty = ShuffleActivations(Options(dir.File("empty"), dir.File("shuffled")));
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error().message, HasSubstr("holds no host folder"));
}

TEST_F(ShuffleOfTwoHosts, VerifyFindsAChangedValueAndAMissingFile) {
  ASSERT_TRUE(ShuffleActivations(Options(source(), shuffled())).has_value());
  // A changed activation, with metadata.json's crc32 brought along so that only
  // the row comparison can find it.
  const std::string first = shuffled() + "/" + ShuffledFileName(0);
  std::string bytes = ReadBytes(first);
  auto file = SafetensorsFile::Open(first);
  ASSERT_TRUE(file.has_value());
  const size_t header = 8 + (*file)->header_json().size();
  file->reset();
  bytes[header + 3] ^= 0x40;
  WriteBytes(first, bytes);
  auto metadata = nlohmann::json::parse(ReadBytes(shuffled() + "/metadata.json"));
  metadata["files"][0]["crc32"] = Crc32Hex(bytes);
  WriteBytes(shuffled() + "/metadata.json", metadata.dump());
  fs::remove(shuffled() + "/" + ShuffledFileName(2));
  auto check = VerifyShuffled(shuffled(), "");
  ASSERT_TRUE(check.has_value()) << check.error();
  std::string faults;
  for (const auto& fault : check->faults) faults += fault + "\n";
  EXPECT_THAT(faults, HasSubstr("1 rows whose values differ from their source row"));
  EXPECT_THAT(faults, HasSubstr(ShuffledFileName(2) + ": cannot open"));
  EXPECT_THAT(faults, HasSubstr("97 source rows missing"));
}

TEST(Shuffle, AnIntegerSiteKeepsItsValuesWithItsRowsUnderBfloat16) {
  TempDir dir;
  SyntheticOutput spec{.documents = 60, .dtype = OutputDtype::kF32};
  spec.sites = {{"blocks.0.hook_resid_post", 6}, {"blocks.0.mlp.hook_expert_indices", 2, true}};
  WriteSyntheticOutput(dir.File("out"), spec);
  auto options = Options(dir.File("out"), dir.File("shuffled"));
  options.dtype = "BF16";  // converts the float site only
  auto result = ShuffleActivations(options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ExpectVerified(dir.File("shuffled"), SyntheticRows(spec));
  const auto metadata = nlohmann::json::parse(ReadBytes(dir.File("shuffled/metadata.json")));
  EXPECT_EQ(metadata["parameters"]["sites"][1]["dtype"], "I32");
  int64_t rows = 0;
  for (int64_t f = 0; fs::exists(dir.File("shuffled/" + ShuffledFileName(f))); ++f) {
    auto file = SafetensorsFile::Open(dir.File("shuffled/" + ShuffledFileName(f)));
    ASSERT_TRUE(file.has_value()) << file.error();
    const auto& tensors = (*file)->tensors();
    const auto& floats = tensors.at("blocks.0.hook_resid_post");
    const auto& ids = tensors.at("blocks.0.mlp.hook_expert_indices");
    ASSERT_EQ(floats.dtype, "BF16");
    ASSERT_EQ(ids.dtype, "I32");
    for (int64_t r = 0; r < ids.shape[0]; ++r, ++rows) {
      int64_t doc;
      int32_t position;
      std::memcpy(&doc, tensors.at("doc_ids").bytes.data() + 8 * r, 8);
      std::memcpy(&position, tensors.at("positions").bytes.data() + 4 * r, 4);
      for (int d = 0; d < 2; ++d) {
        int32_t id;
        std::memcpy(&id, ids.bytes.data() + 4 * (r * 2 + d), 4);
        ASSERT_EQ(id, ExpertIdValue(doc, position, 1, d))
            << "doc " << doc << " position " << position;
      }
      for (int d = 0; d < 6; ++d) {
        uint16_t bits;
        std::memcpy(&bits, floats.bytes.data() + 2 * (r * 6 + d), 2);
        ASSERT_EQ(bits, FloatToBfloat16Bits(ActivationValue(doc, position, 0, d)));
      }
    }
  }
  EXPECT_EQ(rows, SyntheticRows(spec));
}

}  // namespace
}  // namespace actex
