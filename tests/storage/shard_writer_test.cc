// What ShardWriter writes: the site and id tensors of each shard, metadata.json with
// each shard's CRC, shards rolled over by size with documents whole, closed shards
// listed together, 16-bit and integer sites, gzip'd shards.
#include "storage/shard_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <vector>

#include "storage/float_convert.h"
#include "storage/safetensors.h"
#include "storage/shard_listing.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/shard_writer_checks.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

using writer_test::CheckListedShards;
using writer_test::kWriterSites;
using writer_test::OpenOrDie;
using writer_test::Options;
using writer_test::Values;

TEST(ShardWriter, WritesShardWithSiteAndIdTensors) {
  TempDir dir;
  auto writer = OpenOrDie(Options(dir.path()));
  std::vector<OwnedDocument> documents = {MakeDocument(0, 3, kWriterSites),
                                          MakeDocument(2, 1, kWriterSites),
                                          MakeDocument(5, 4, kWriterSites)};
  for (const auto& document : documents) {
    auto added = AddWhole(*writer, document);
    ASSERT_TRUE(added.has_value()) << added.error();
  }
  ASSERT_TRUE(writer->Finish().has_value());

  auto file = SafetensorsFile::Open(dir.File("shard_000001.safetensors"));
  ASSERT_TRUE(file.has_value()) << file.error();
  const auto& tensors = (*file)->tensors();
  EXPECT_EQ(tensors.size(), 5u);
  EXPECT_EQ((*file)->metadata(),
            (std::map<std::string, std::string>{{"format", "pt"}, {"model", "qwen2-tiny"}}));
  const auto& resid = tensors.at("blocks.0.hook_resid_post");
  EXPECT_EQ(resid.dtype, "F32");
  EXPECT_EQ(resid.shape, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(tensors.at("blocks.1.hook_mlp_out").shape, (std::vector<int64_t>{8, 5}));
  EXPECT_EQ(tensors.at("token_ids").dtype, "I32");
  EXPECT_EQ(tensors.at("doc_ids").dtype, "I64");
  EXPECT_EQ(tensors.at("positions").dtype, "I32");
  EXPECT_EQ(Values<int64_t>(tensors.at("doc_ids")), (std::vector<int64_t>{0, 0, 0, 2, 5, 5, 5, 5}));
  EXPECT_EQ(Values<int32_t>(tensors.at("positions")),
            (std::vector<int32_t>{0, 1, 2, 0, 0, 1, 2, 3}));
  std::vector<int32_t> token_ids;
  std::vector<float> mlp;
  for (const auto& document : documents) {
    token_ids.insert(token_ids.end(), document.token_ids.begin(), document.token_ids.end());
    mlp.insert(mlp.end(), document.sites[1].begin(), document.sites[1].end());
  }
  EXPECT_EQ(Values<int32_t>(tensors.at("token_ids")), token_ids);
  EXPECT_EQ(Values<float>(tensors.at("blocks.1.hook_mlp_out")), mlp);

  // Nothing but the shard and metadata.json remains: no spill or temporary file.
  EXPECT_EQ(DirectoryEntries(dir.path()),
            (std::set<std::string>{"shard_000001.safetensors", "metadata.json"}));
  EXPECT_EQ(writer->stats().shards, 1);
  EXPECT_EQ(writer->stats().docs, 3);
  EXPECT_EQ(writer->stats().tokens, 8);
}

TEST(ShardWriter, WritesMetadataJsonWithCrcOfEachShard) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  options.dtype = OutputDtype::kBF16;
  options.shard_bytes = 1;  // every document closes its shard
  auto writer = OpenOrDie(options);
  for (int64_t doc : {3, 4}) ASSERT_TRUE(AddWhole(*writer, MakeDocument(doc, 2, kWriterSites)));
  ASSERT_TRUE(writer->Finish().has_value());

  const nlohmann::json metadata = ReadMetadata(dir.path());
  EXPECT_EQ(metadata["format"], "actex-activations");
  EXPECT_EQ(metadata["version"], 1);
  EXPECT_EQ(metadata["complete"], true);
  EXPECT_EQ(metadata["config"], options.run_config);
  EXPECT_EQ(metadata["dtype"], "bfloat16");
  EXPECT_EQ(metadata["sites"], nlohmann::json::parse(R"([{"name":"blocks.0.hook_resid_post",
      "width":8},{"name":"blocks.1.hook_mlp_out","width":5}])"));
  ASSERT_EQ(metadata["shards"].size(), 2u);
  const auto& second = metadata["shards"][1];
  EXPECT_EQ(second["file"], "shard_000002.safetensors");
  EXPECT_EQ(second["first_doc_id"], 4);
  EXPECT_EQ(second["last_doc_id"], 4);
  EXPECT_EQ(second["docs"], 1);
  EXPECT_EQ(second["tokens"], 2);
  const std::string bytes = ReadBytes(dir.File("shard_000002.safetensors"));
  EXPECT_EQ(second["bytes"], bytes.size());
  char crc[9];
  std::snprintf(crc, sizeof(crc), "%08x", Crc32Of(bytes));
  EXPECT_EQ(second["crc32"], crc);
  EXPECT_EQ(
      metadata["totals"],
      nlohmann::json::parse(
          R"({"docs":2,"tokens":4,"shards":2,"bytes":)" +
          std::to_string(metadata["shards"][0]["bytes"].get<int64_t>() + bytes.size()) + "}"));
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{3, 4}));
}

TEST(ShardWriter, RollsOverBySizeKeepingDocumentsWhole) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  // Bytes per token: 8*4 + 5*4 site values + 4 + 8 + 4 ids = 68.
  options.shard_bytes = 68 * 10;
  auto writer = OpenOrDie(options);
  std::vector<int64_t> added;
  for (int64_t doc = 0; doc < 40; ++doc) {
    const int tokens = 1 + static_cast<int>((doc * 5) % 7);
    ASSERT_TRUE(AddWhole(*writer, MakeDocument(doc * 2, tokens, kWriterSites)));
    added.push_back(doc * 2);
  }
  ASSERT_TRUE(writer->Finish().has_value());
  EXPECT_EQ(CheckListedShards(dir.path()), added);
  const nlohmann::json metadata = ReadMetadata(dir.path());
  ASSERT_GT(metadata["shards"].size(), 3u);
  for (size_t i = 0; i + 1 < metadata["shards"].size(); ++i) {
    const int64_t tensor_bytes = metadata["shards"][i]["tokens"].get<int64_t>() * 68;
    EXPECT_GE(tensor_bytes, options.shard_bytes);           // closed once it reached the limit
    EXPECT_LT(tensor_bytes, options.shard_bytes + 68 * 7);  // ... and not one document later
  }
  EXPECT_EQ(metadata["totals"]["docs"], 40);
}

TEST(ShardWriter, GivesDocumentLargerThanTheLimitAShardOfItsOwn) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  options.shard_bytes = 68 * 4;
  auto writer = OpenOrDie(options);
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(0, 1, kWriterSites)));
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(1, 50, kWriterSites)));
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(2, 1, kWriterSites)));
  ASSERT_TRUE(writer->Finish().has_value());
  const nlohmann::json metadata = ReadMetadata(dir.path());
  ASSERT_EQ(metadata["shards"].size(), 2u);
  EXPECT_EQ(metadata["shards"][0]["tokens"], 51);  // doc 0 then the big one closes it
  EXPECT_EQ(metadata["shards"][1]["first_doc_id"], 2);
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{0, 1, 2}));
}

TEST(ShardWriter, ListsOnlyClosedShardsUntilFinish) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  options.shard_bytes = 68 * 3;
  auto writer = OpenOrDie(options);
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 0u);  // written at Open
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(0, 3, kWriterSites)));
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(1, 2, kWriterSites)));
  nlohmann::json metadata = ReadMetadata(dir.path());
  EXPECT_EQ(metadata["complete"], false);
  EXPECT_EQ(metadata["shards"].size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir.File("shard_000002.safetensors")));
  EXPECT_EQ(writer->stats().docs, 1);
  ASSERT_TRUE(writer->Finish().has_value());
  metadata = ReadMetadata(dir.path());
  EXPECT_EQ(metadata["complete"], true);
  EXPECT_EQ(metadata["shards"].size(), 2u);
  EXPECT_EQ(writer->stats().docs, 2);
}

// With a listing interval, closed shards wait (written whole, unlisted) and are
// listed together, with one question to before_listing, once the interval passed at
// a chunk's end; ListEnded lists whatever waits at once.
TEST(ShardWriter, ListsClosedShardsTogetherOnceTheListingIntervalPassed) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  options.shard_bytes = 68 * 2;  // every document closes a shard
  options.listing_interval = std::chrono::milliseconds(200);
  std::vector<std::vector<int64_t>> asked;
  options.before_listing = [&](const std::vector<int64_t>& chunks) {
    asked.push_back(chunks);
    return std::expected<void, std::string>();
  };
  auto writer = OpenOrDie(options);
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(0, 2, kWriterSites)));
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(1, 2, kWriterSites)));
  EXPECT_TRUE(std::filesystem::exists(dir.File("shard_000002.safetensors")));
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 0u);
  EXPECT_TRUE(asked.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(2, 2, kWriterSites)));
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 3u);
  EXPECT_EQ(asked, (std::vector<std::vector<int64_t>>{{0, 1, 2}}));
  ASSERT_TRUE(AddWhole(*writer, MakeDocument(3, 2, kWriterSites)));
  ASSERT_TRUE(writer->ListEnded());
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 4u);
  EXPECT_EQ(asked.back(), (std::vector<int64_t>{3}));
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(ShardWriter, ConvertsToBfloat16AndFloat16) {
  for (OutputDtype dtype : {OutputDtype::kBF16, OutputDtype::kF16}) {
    TempDir dir;
    ShardWriterOptions options = Options(dir.path());
    options.dtype = dtype;
    auto writer = OpenOrDie(options);
    OwnedDocument document = MakeDocument(7, 6, kWriterSites);
    document.sites[0][0] = 1e30f;     // beyond float16: infinity there
    document.sites[0][1] = 0x1p-20f;  // a float16 subnormal
    ASSERT_TRUE(AddWhole(*writer, document));
    ASSERT_TRUE(writer->Finish().has_value());
    auto file = SafetensorsFile::Open(dir.File("shard_000001.safetensors"));
    ASSERT_TRUE(file.has_value()) << file.error();
    const auto& tensor = (*file)->tensors().at("blocks.0.hook_resid_post");
    EXPECT_EQ(tensor.dtype, dtype == OutputDtype::kBF16 ? "BF16" : "F16");
    const auto bits = Values<uint16_t>(tensor);
    ASSERT_EQ(bits.size(), document.sites[0].size());
    for (size_t i = 0; i < bits.size(); ++i) {
      const float value = document.sites[0][i];
      ASSERT_EQ(bits[i],
                dtype == OutputDtype::kBF16 ? FloatToBfloat16Bits(value) : FloatToHalfBits(value))
          << i;
    }
    EXPECT_EQ(ReadMetadata(dir.path())["dtype"],
              dtype == OutputDtype::kBF16 ? "bfloat16" : "float16");
  }
}

TEST(ShardWriter, WritesAnIntegerSiteAsI32WhateverTheDtypeWithoutStatistics) {
  const std::vector<StoredSite> sites = {{"blocks.0.hook_resid_post", 8},
                                         {"blocks.0.mlp.hook_expert_indices", 2, true}};
  for (OutputDtype dtype : {OutputDtype::kF32, OutputDtype::kBF16, OutputDtype::kF16}) {
    TempDir dir;
    ShardWriterOptions options = Options(dir.path());
    options.sites = sites;
    options.dtype = dtype;
    auto writer = OpenOrDie(options);
    const OwnedDocument document = MakeDocument(7, 6, sites);
    ASSERT_TRUE(AddWhole(*writer, document));
    ASSERT_TRUE(writer->Finish().has_value());
    auto file = SafetensorsFile::Open(dir.File("shard_000001.safetensors"));
    ASSERT_TRUE(file.has_value()) << file.error();
    const auto& ids = (*file)->tensors().at("blocks.0.mlp.hook_expert_indices");
    EXPECT_EQ(ids.dtype, "I32");
    EXPECT_EQ(ids.shape, (std::vector<int64_t>{6, 2}));
    EXPECT_EQ(Values<int32_t>(ids), document.integers[1]);
    const nlohmann::json metadata = ReadMetadata(dir.path());
    EXPECT_EQ(metadata["sites"][1],
              (nlohmann::json{
                  {"name", "blocks.0.mlp.hook_expert_indices"}, {"width", 2}, {"dtype", "I32"}}));
    EXPECT_FALSE(metadata["sites"][0].contains("dtype"));  // a float site: the file's dtype
    EXPECT_TRUE(metadata["statistics"].contains("blocks.0.hook_resid_post"));
    EXPECT_FALSE(metadata["statistics"].contains("blocks.0.mlp.hook_expert_indices"));
  }
}

TEST(ShardWriter, RefusesFloatsForAnIntegerSite) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  options.sites[1].integer = true;
  auto writer = OpenOrDie(options);
  auto added = writer->Add(MakeDocument(0, 2, kWriterSites).View());  // site 1 as floats
  ASSERT_FALSE(added.has_value());
  EXPECT_THAT(added.error(), HasSubstr("site \"blocks.1.hook_mlp_out\" came as floats, but it is "
                                       "an integer site"));
}

TEST(ShardWriter, GzipShardDecompressesToTheUncompressedShard) {
  TempDir plain_dir, gzip_dir;
  ShardWriterOptions plain = Options(plain_dir.path());
  ShardWriterOptions gzip = Options(gzip_dir.path());
  gzip.gzip = true;
  for (auto* options : {&plain, &gzip}) {
    options->shard_bytes = 68 * 20;
    auto writer = OpenOrDie(*options);
    for (int64_t doc = 0; doc < 12; ++doc)
      ASSERT_TRUE(AddWhole(*writer, MakeDocument(doc, 9, kWriterSites)));
    ASSERT_TRUE(writer->Finish().has_value());
  }
  const nlohmann::json metadata = ReadMetadata(gzip_dir.path());
  ASSERT_EQ(metadata["shards"].size(), 4u);
  for (int shard = 1; shard <= 4; ++shard) {
    const std::string name = "shard_00000" + std::to_string(shard) + ".safetensors";
    EXPECT_EQ(Gunzip(gzip_dir.File(name + ".gz")), ReadBytes(plain_dir.File(name))) << name;
    EXPECT_EQ(metadata["shards"][shard - 1]["file"], name + ".gz");
  }
  EXPECT_EQ(CheckListedShards(gzip_dir.path()).size(), 12u);
}

}  // namespace
}  // namespace actex
