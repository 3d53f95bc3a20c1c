#include "storage/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

const std::string kFixture = std::string(ACTEX_FIXTURES_DIR) + "/qwen2-tiny/model.safetensors";

// A safetensors file from a raw JSON header and data section.
std::string RawFile(const std::string& header, const std::string& data) {
  uint64_t length = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  return out + header + data;
}

std::string OpenError(const std::string& path) {
  auto file = SafetensorsFile::Open(path);
  EXPECT_FALSE(file.has_value()) << "opened " << path;
  return file.has_value() ? std::string() : file.error();
}

TEST(SafetensorsFile, OpensFixtureWithEveryTensorAndMetadata) {
  auto file = SafetensorsFile::Open(kFixture);
  ASSERT_TRUE(file.has_value()) << file.error();
  const auto& tensors = (*file)->tensors();
  EXPECT_EQ(tensors.size(), 26u);
  ASSERT_TRUE(tensors.contains("model.embed_tokens.weight"));
  const SafetensorsTensor& embed = tensors.at("model.embed_tokens.weight");
  EXPECT_EQ(embed.dtype, "F32");
  EXPECT_EQ(embed.shape, (std::vector<int64_t>{512, 64}));
  EXPECT_EQ(embed.bytes.size(), 512u * 64u * 4u);
  EXPECT_EQ((*file)->metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ((*file)->file_bytes(), static_cast<int64_t>(std::filesystem::file_size(kFixture)));
  EXPECT_EQ((*file)->path(), kFixture);
  EXPECT_EQ((*file)->header_json().front(), '{');
}

TEST(SafetensorsFile, TensorBytesAreTheFileBytesAtTheirOffsets) {
  auto file = SafetensorsFile::Open(kFixture);
  ASSERT_TRUE(file.has_value()) << file.error();
  const std::string raw = ReadBytes(kFixture);
  const size_t data_start = 8 + (*file)->header_json().size();
  const auto header = nlohmann::json::parse((*file)->header_json());
  size_t covered = 0;
  for (const auto& [name, tensor] : (*file)->tensors()) {
    const size_t begin = header[name]["data_offsets"][0].get<size_t>();
    ASSERT_EQ(header[name]["data_offsets"][1].get<size_t>() - begin, tensor.bytes.size()) << name;
    EXPECT_EQ(
        std::memcmp(raw.data() + data_start + begin, tensor.bytes.data(), tensor.bytes.size()), 0)
        << name;
    covered += tensor.bytes.size();
  }
  // The fixture's tensors tile the data section exactly.
  EXPECT_EQ(covered, raw.size() - data_start);
}

TEST(SafetensorsFile, RejectsMissingFileWithOsError) {
  TempDir dir;
  std::string error = OpenError(dir.File("absent.safetensors"));
  EXPECT_THAT(error, HasSubstr(dir.File("absent.safetensors")));
  EXPECT_THAT(error, HasSubstr("No such file or directory"));
}

TEST(SafetensorsFile, RejectsFileShorterThanLengthPrefix) {
  TempDir dir;
  WriteBytes(dir.File("short.safetensors"), "abcd");
  EXPECT_THAT(OpenError(dir.File("short.safetensors")), HasSubstr("fewer than the 8-byte"));
}

TEST(SafetensorsFile, RejectsHeaderLengthBeyondFile) {
  TempDir dir;
  std::string raw = ReadBytes(kFixture).substr(0, 100);
  WriteBytes(dir.File("cut.safetensors"), raw);
  std::string error = OpenError(dir.File("cut.safetensors"));
  EXPECT_THAT(error, HasSubstr(dir.File("cut.safetensors")));
  EXPECT_THAT(error, HasSubstr("header length 2656 exceeds the 92 bytes"));
}

TEST(SafetensorsFile, RejectsTruncatedDataNamingTheTensor) {
  TempDir dir;
  std::string raw = ReadBytes(kFixture);
  raw.pop_back();
  WriteBytes(dir.File("cut.safetensors"), raw);
  std::string error = OpenError(dir.File("cut.safetensors"));
  EXPECT_THAT(error, HasSubstr(dir.File("cut.safetensors")));
  EXPECT_THAT(error, HasSubstr("tensor \""));
  EXPECT_THAT(error, HasSubstr("run past the end of the data"));
}

TEST(SafetensorsFile, RejectsCorruptJsonHeader) {
  TempDir dir;
  std::string raw = ReadBytes(kFixture);
  raw[8 + 20] = '\x01';
  WriteBytes(dir.File("bad.safetensors"), raw);
  EXPECT_THAT(OpenError(dir.File("bad.safetensors")), HasSubstr("header is not valid JSON"));
}

TEST(SafetensorsFile, RejectsHeaderThatIsNotAnObject) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"), RawFile("[1, 2]  ", ""));
  EXPECT_THAT(OpenError(dir.File("a.safetensors")), HasSubstr("header is not a JSON object"));
}

TEST(SafetensorsFile, RejectsUnknownDtypeNamingTheTensor) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"),
             RawFile(R"({"w":{"dtype":"F48","shape":[1],"data_offsets":[0,6]}})", "123456"));
  std::string error = OpenError(dir.File("a.safetensors"));
  EXPECT_THAT(error, HasSubstr("tensor \"w\""));
  EXPECT_THAT(error, HasSubstr("unknown dtype \"F48\""));
}

TEST(SafetensorsFile, RejectsShapeThatDisagreesWithOffsets) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"),
             RawFile(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", "12345678"));
  std::string error = OpenError(dir.File("a.safetensors"));
  EXPECT_THAT(error,
              HasSubstr("tensor \"w\": F32 [3] needs 12 bytes but data_offsets [0,8] span 8"));
}

TEST(SafetensorsFile, RejectsNegativeOrFractionalShape) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"),
             RawFile(R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})", ""));
  EXPECT_THAT(OpenError(dir.File("a.safetensors")), HasSubstr("not a list of non-negative"));
  WriteBytes(dir.File("b.safetensors"),
             RawFile(R"({"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,0]}})", ""));
  EXPECT_THAT(OpenError(dir.File("b.safetensors")), HasSubstr("not a list of non-negative"));
}

// Found by fuzzing: the error quoted the shape with dump(), which recurses once per
// nesting level, so this 200 KB header crashed the reader (stack overflow).
TEST(SafetensorsFile, RejectsDeeplyNestedShapeWithoutQuotingIt) {
  TempDir dir;
  const std::string shape = std::string(100000, '[') + std::string(100000, ']');
  WriteBytes(dir.File("a.safetensors"),
             RawFile(R"({"w":{"dtype":"U8","shape":)" + shape + R"(,"data_offsets":[0,0]}})", ""));
  const std::string error = OpenError(dir.File("a.safetensors"));
  EXPECT_THAT(error, HasSubstr("tensor \"w\": shape an array of 1 elements is not a list"));
  EXPECT_LT(error.size(), 300u);
}

TEST(SafetensorsFile, RejectsReversedOffsets) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"),
             RawFile(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[4,2]}})", "1234"));
  EXPECT_THAT(OpenError(dir.File("a.safetensors")), HasSubstr("end before they begin"));
}

TEST(SafetensorsFile, RejectsOverlappingTensors) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"),
             RawFile(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                     R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                     "123456"));
  std::string error = OpenError(dir.File("a.safetensors"));
  EXPECT_THAT(error, HasSubstr("tensor \"b\" overlaps tensor \"a\""));
}

TEST(SafetensorsFile, RejectsMetadataValueThatIsNotAString) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"), RawFile(R"({"__metadata__":{"n":1}})", ""));
  EXPECT_THAT(OpenError(dir.File("a.safetensors")), HasSubstr("\"__metadata__\" entry \"n\""));
}

TEST(SafetensorsFile, AcceptsEmptyTensorAndPaddedHeader) {
  TempDir dir;
  WriteBytes(dir.File("a.safetensors"),
             RawFile(R"({"e":{"dtype":"F32","shape":[0,5],"data_offsets":[0,0]}})"
                     "      ",
                     ""));
  auto file = SafetensorsFile::Open(dir.File("a.safetensors"));
  ASSERT_TRUE(file.has_value()) << file.error();
  EXPECT_EQ((*file)->tensors().at("e").bytes.size(), 0u);
  EXPECT_EQ((*file)->tensors().at("e").shape, (std::vector<int64_t>{0, 5}));
}

TEST(SafetensorsDtype, KnowsEveryDtypeOfTheFormat) {
  EXPECT_EQ(SafetensorsDtypeBytes("F64"), 8);
  EXPECT_EQ(SafetensorsDtypeBytes("F32"), 4);
  EXPECT_EQ(SafetensorsDtypeBytes("F16"), 2);
  EXPECT_EQ(SafetensorsDtypeBytes("BF16"), 2);
  EXPECT_EQ(SafetensorsDtypeBytes("I64"), 8);
  EXPECT_EQ(SafetensorsDtypeBytes("I32"), 4);
  EXPECT_EQ(SafetensorsDtypeBytes("I16"), 2);
  EXPECT_EQ(SafetensorsDtypeBytes("I8"), 1);
  EXPECT_EQ(SafetensorsDtypeBytes("U8"), 1);
  EXPECT_EQ(SafetensorsDtypeBytes("BOOL"), 1);
  EXPECT_EQ(SafetensorsDtypeBytes("U32"), 4);
  EXPECT_EQ(SafetensorsDtypeBytes("f32"), 0);
  EXPECT_EQ(SafetensorsDtypeBytes(""), 0);
}

TEST(WriteSafetensors, RoundTripsTensorsMetadataAndOrder) {
  TempDir dir;
  const std::string path = dir.File("out.safetensors");
  std::vector<float> weights(6);
  std::iota(weights.begin(), weights.end(), -2.5f);
  std::vector<int64_t> ids = {7, -1, int64_t{1} << 40};
  std::vector<size_t> fill_sizes;
  std::vector<TensorToWrite> tensors = {
      {"z.weights",
       "F32",
       {2, 3},
       [&](std::span<uint8_t> out) {
         fill_sizes.push_back(out.size());
         std::memcpy(out.data(), weights.data(), out.size());
       }},
      {"a.ids",
       "I64",
       {3},
       [&](std::span<uint8_t> out) {
         fill_sizes.push_back(out.size());
         std::memcpy(out.data(), ids.data(), out.size());
       }},
      {"empty", "BF16", {0}, [&](std::span<uint8_t> out) { fill_sizes.push_back(out.size()); }},
  };
  auto written = WriteSafetensors(path, tensors, {{"format", "pt"}, {"note", "x y"}});
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_EQ(fill_sizes, (std::vector<size_t>{24, 24, 0}));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.has_value()) << file.error();
  EXPECT_EQ((*file)->header_json().size() % 8, 0u);
  EXPECT_EQ((*file)->metadata().at("note"), "x y");
  const auto& read = (*file)->tensors();
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read.at("z.weights").shape, (std::vector<int64_t>{2, 3}));
  std::vector<float> weights_back(6);
  std::memcpy(weights_back.data(), read.at("z.weights").bytes.data(), 24);
  EXPECT_EQ(weights_back, weights);
  std::vector<int64_t> ids_back(3);
  std::memcpy(ids_back.data(), read.at("a.ids").bytes.data(), 24);
  EXPECT_EQ(ids_back, ids);
  // Data follows the order given, not the name order.
  EXPECT_LT(read.at("z.weights").bytes.data(), read.at("a.ids").bytes.data());
  EXPECT_EQ(read.at("empty").dtype, "BF16");
}

TEST(WriteSafetensors, RewritesFixtureByteForByteIdenticalTensors) {
  auto source = SafetensorsFile::Open(kFixture);
  ASSERT_TRUE(source.has_value()) << source.error();
  std::vector<TensorToWrite> tensors;
  for (const auto& [name, tensor] : (*source)->tensors()) {
    auto bytes = tensor.bytes;
    tensors.push_back({name, tensor.dtype, tensor.shape, [bytes](std::span<uint8_t> out) {
                         std::memcpy(out.data(), bytes.data(), bytes.size());
                       }});
  }
  TempDir dir;
  auto written = WriteSafetensors(dir.File("copy.safetensors"), tensors, (*source)->metadata());
  ASSERT_TRUE(written.has_value()) << written.error();
  auto copy = SafetensorsFile::Open(dir.File("copy.safetensors"));
  ASSERT_TRUE(copy.has_value()) << copy.error();
  ASSERT_EQ((*copy)->tensors().size(), 26u);
  for (const auto& [name, tensor] : (*source)->tensors()) {
    const auto& other = (*copy)->tensors().at(name);
    EXPECT_EQ(other.shape, tensor.shape) << name;
    EXPECT_TRUE(std::equal(tensor.bytes.begin(), tensor.bytes.end(), other.bytes.begin(),
                           other.bytes.end()))
        << name;
  }
}

TEST(WriteSafetensors, RejectsDuplicateNameAndUnknownDtype) {
  TempDir dir;
  auto noop = [](std::span<uint8_t>) {};
  auto duplicate =
      WriteSafetensors(dir.File("a"), {{"w", "F32", {1}, noop}, {"w", "F32", {1}, noop}}, {});
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_THAT(duplicate.error(), HasSubstr("tensor \"w\" appears twice"));
  auto unknown = WriteSafetensors(dir.File("b"), {{"w", "Q4", {1}, noop}}, {});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error(), HasSubstr("unknown dtype \"Q4\""));
  EXPECT_FALSE(std::filesystem::exists(dir.File("a")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("b")));
}

TEST(WriteSafetensors, ReportsUnwritablePathWithOsError) {
  TempDir dir;
  const std::string path = dir.File("no/such/dir/out.safetensors");
  auto result =
      WriteSafetensors(path, {{"w", "U8", {1}, [](std::span<uint8_t> b) { b[0] = 1; }}}, {});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr(path + ".tmp"));
  EXPECT_THAT(result.error(), HasSubstr("No such file or directory"));
}

TEST(WriteSafetensors, ReportsFillFailureAndLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.File("out.safetensors");
  auto result = WriteSafetensors(
      path, {{"w", "U8", {1}, [](std::span<uint8_t>) { throw std::runtime_error("boom"); }}}, {});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("filling tensor \"w\" failed: boom"));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace actex
