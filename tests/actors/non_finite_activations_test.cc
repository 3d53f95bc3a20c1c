// Activations that are not finite as stored: a NaN weight, and an embedding value
// that float16 cannot hold. The run counts them per site in metadata.json (whose
// statistics stay valid JSON), says so when it ends, `actex inspect` shows them and
// `actex verify` warns, without calling the output faulty.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "actex_process.h"
#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

// Sets embed_tokens[row][column] of the F32 model.safetensors in `model_dir`.
void PatchEmbedding(const std::string& model_dir, int64_t row, int64_t column, float value) {
  const std::string path = model_dir + "/model.safetensors";
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  uint64_t header_bytes = 0;
  file.read(reinterpret_cast<char*>(&header_bytes), sizeof(header_bytes));
  std::string header(header_bytes, '\0');
  file.read(header.data(), static_cast<std::streamsize>(header_bytes));
  const auto tensor = nlohmann::json::parse(header).at("model.embed_tokens.weight");
  ASSERT_EQ(tensor.at("dtype"), "F32");
  const int64_t width = tensor.at("shape")[1].get<int64_t>();
  const int64_t offset = 8 + static_cast<int64_t>(header_bytes) +
                         tensor.at("data_offsets")[0].get<int64_t>() +
                         (row * width + column) * static_cast<int64_t>(sizeof(float));
  file.seekp(offset);
  file.write(reinterpret_cast<const char*>(&value), sizeof(value));
  ASSERT_TRUE(file.good()) << path;
}

// The tiny fixture model with a NaN in token 7's embedding and 1e5, beyond float16,
// in token 5's.
std::string DamagedModel(const TempDir& dir) {
  const std::string model = dir.path() + "/model";
  fs::create_directories(model);
  for (const char* name : {"config.json", "model.safetensors"}) {
    fs::copy_file(std::string(ACTEX_FIXTURES_DIR "/qwen2-tiny/") + name, model + "/" + name);
  }
  PatchEmbedding(model, 7, 0, std::numeric_limits<float>::quiet_NaN());
  PatchEmbedding(model, 5, 3, 1e5f);
  return model;
}

// Token 5 twice and token 7 once: three embedding rows that are not finite in float16.
std::string Corpus(const TempDir& dir) {
  return dir.Write("c.jsonl",
                   "{\"input_ids\": [5, 1, 5]}\n{\"input_ids\": [7, 2]}\n"
                   "{\"input_ids\": [1, 2, 3]}\n");
}

std::vector<std::string> ExtractArgs(const TempDir& dir, const std::string& model,
                                     const std::string& dtype, const std::string& out) {
  return {"extract", "--model", model,     "--data",           Corpus(dir),
          "--out",   out,       "--sites", "embed,resid_post", "--layers",
          "0",       "--dtype", dtype,     "--blas-threads",   "1"};
}

TEST(NonFiniteActivations, AreCountedPerSiteInTheStoredDtypeReportedAndWarnedAbout) {
  TempDir dir;
  const std::string model = DamagedModel(dir);
  const std::string out = dir.path() + "/half";
  ActexOutcome run = RunActex(dir, ExtractArgs(dir, model, "float16", out));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("activations that are not finite as stored in float16"));
  EXPECT_THAT(run.err, HasSubstr("hook_embed: 3 values in 3 rows"));

  const nlohmann::json metadata = ReadJson(out + "/host_00/metadata.json");
  const auto& embed = metadata["statistics"]["hook_embed"];
  EXPECT_EQ(embed["non_finite_values"], 3);
  EXPECT_EQ(embed["non_finite_rows"], 3);
  EXPECT_TRUE(embed["max_abs"].is_number()) << "the NaN is left out: " << embed["max_abs"];
  EXPECT_EQ(embed["max_abs"], 1e5) << "float32 values beyond float16 stay in the statistics";
  const auto& resid = metadata["statistics"]["blocks.0.hook_resid_post"];
  EXPECT_GE(resid["non_finite_values"].get<int64_t>(), 3);
  EXPECT_TRUE(resid["sum_norms"].is_number()) << resid["sum_norms"];
  for (double sum : resid["sum"].get<std::vector<double>>()) EXPECT_TRUE(std::isfinite(sum));

  ActexOutcome inspect = RunActex(dir, {"inspect", out});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("not finite as stored: "));
  EXPECT_THAT(inspect.out, HasSubstr("hook_embed: 3 values in 3 rows"));
  ActexOutcome stats = RunActex(dir, {"inspect", out, "--stats", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(nlohmann::json::parse(stats.out)["hook_embed"]["non_finite_values"], 3);

  ActexOutcome verify = RunActex(dir, {"verify", out});
  EXPECT_EQ(verify.exit_code, 0) << "a warning, not a fault: " << verify.out;
  EXPECT_THAT(verify.out, HasSubstr("warning: host_00/metadata.json: activations not finite as "
                                    "stored in float16: "));
  EXPECT_THAT(verify.out, HasSubstr("hook_embed: 3 values in 3 rows"));

  // A rerun reads the counts back from metadata.json and keeps them.
  ActexOutcome again = RunActex(dir, ExtractArgs(dir, model, "float16", out));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("hook_embed: 3 values in 3 rows"));
  EXPECT_EQ(ReadJson(out + "/host_00/metadata.json")["statistics"], metadata["statistics"]);
}

TEST(NonFiniteActivations, Float32StoresTheValuesFloat16CannotHold) {
  TempDir dir;
  const std::string model = DamagedModel(dir);
  const std::string out = dir.path() + "/single";
  ActexOutcome run = RunActex(dir, ExtractArgs(dir, model, "float32", out));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("hook_embed: 1 value in 1 row"));
  EXPECT_EQ(
      ReadJson(out + "/host_00/metadata.json")["statistics"]["hook_embed"]["non_finite_values"], 1)
      << "the NaN only";
}

TEST(NonFiniteActivations, AFiniteRunSaysNothingAboutThem) {
  TempDir dir;
  const std::string out = dir.path() + "/clean";
  ActexOutcome run =
      RunActex(dir, ExtractArgs(dir, ACTEX_FIXTURES_DIR "/qwen2-tiny", "float16", out));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, testing::Not(HasSubstr("not finite")));
  EXPECT_EQ(
      ReadJson(out + "/host_00/metadata.json")["statistics"]["hook_embed"]["non_finite_values"], 0);
  ActexOutcome verify = RunActex(dir, {"verify", out});
  EXPECT_THAT(verify.out, testing::Not(HasSubstr("not finite")));
}

}  // namespace
}  // namespace actex
