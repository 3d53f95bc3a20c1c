#include "storage/shard_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "storage/float_convert.h"
#include "storage/safetensors.h"
#include "storage/shard_listing.h"
#include "storage/shard_spill.h"
#include "tests/storage/shard_test_util.h"
#include "tests/storage/shard_writer_checks.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

using writer_test::CheckListedShards;
using writer_test::ChunksOf;
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

// Writes 12 documents of 9 tokens in 68 x 20 byte shards to `dir` (4 shards).
void WriteTwelveDocuments(const std::string& dir) {
  ShardWriterOptions options = Options(dir);
  options.shard_bytes = 68 * 20;
  auto writer = OpenOrDie(options);
  for (int64_t doc = 0; doc < 12; ++doc)
    ASSERT_TRUE(AddWhole(*writer, MakeDocument(doc, 9, kWriterSites)));
  ASSERT_TRUE(writer->Finish().has_value());
}

// A process whose /proc is an empty mount (a container without /proc), so that
// /proc/self/fd cannot name an O_TMPFILE file: the writer then spills every tensor and
// copies it into the shard, to the same bytes as in place. Exits 0 when it wrote
// `dir`, 2 when no such process could be made, 3 when the spill stayed in place.
[[noreturn]] void WriteWithoutProcSelfFd(const std::string& dir) {
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/proc", "tmpfs", 0, nullptr) != 0) {
    std::fprintf(stderr, "no mount namespace without /proc: %s\n", std::strerror(errno));
    std::_Exit(2);
  }
  auto spill = ShardSpill::CreateInPlace(dir, 0, 1, 0, 16, nullptr);
  if (!spill || spill->in_place()) std::_Exit(3);
  WriteTwelveDocuments(dir);
  std::_Exit(testing::Test::HasFailure() ? 1 : 0);
}

TEST(ShardWriterDeathTest, WithoutProcSelfFdTheShardsAreCopiedToTheSameBytes) {
  if (::geteuid() != 0) GTEST_SKIP() << "a mount namespace needs root (CI runs as root)";
  TempDir in_place, copied;
  WriteTwelveDocuments(in_place.path());
  EXPECT_EXIT(WriteWithoutProcSelfFd(copied.path()), testing::ExitedWithCode(0), "");
  const nlohmann::json metadata = ReadMetadata(copied.path());
  ASSERT_EQ(metadata["shards"].size(), 4u);
  EXPECT_EQ(metadata["shards"], ReadMetadata(in_place.path())["shards"]) << "sizes and CRCs";
  for (const auto& shard : metadata["shards"]) {
    const std::string name = shard["file"];
    EXPECT_EQ(ReadBytes(copied.File(name)), ReadBytes(in_place.File(name))) << name;
  }
  EXPECT_EQ(CheckListedShards(copied.path()).size(), 12u);
}

TEST(ShardWriter, RejectsInconsistentDocuments) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(10, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(5, 2, kWriterSites).View()));
  auto same_id = writer->Add(MakeDocument(5, 2, kWriterSites).View());
  ASSERT_FALSE(same_id.has_value());
  EXPECT_THAT(same_id.error(), HasSubstr("doc ids must increase strictly"));

  OwnedDocument document = MakeDocument(6, 3, kWriterSites);
  document.positions.pop_back();
  auto positions = writer->Add(document.View());
  ASSERT_FALSE(positions.has_value());
  EXPECT_THAT(positions.error(), HasSubstr("3 token ids but 2 positions"));

  document = MakeDocument(6, 3, kWriterSites);
  document.sites[1].pop_back();
  auto width = writer->Add(document.View());
  ASSERT_FALSE(width.has_value());
  EXPECT_THAT(width.error(), HasSubstr("site \"blocks.1.hook_mlp_out\" has 14 values"));

  document = MakeDocument(6, 3, kWriterSites);
  document.sites.pop_back();
  EXPECT_FALSE(writer->Add(document.View()).has_value());

  auto empty = writer->Add(MakeDocument(6, 0, kWriterSites).View());
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error(), HasSubstr("document 6: has no tokens"));

  // A refused document changes nothing: the writer goes on.
  ASSERT_TRUE(writer->Add(MakeDocument(6, 3, kWriterSites).View()));
  ASSERT_TRUE(writer->EndChunk(0, 10));
  ASSERT_TRUE(writer->Finish().has_value());
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{5, 6}));
}

TEST(ShardWriter, ClosesAShardOnlyWhereAChunkEnds) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.path());
  options.chunks = *ChunkRule::Of(3);
  options.shard_bytes = 68 * 2;  // reached by the first document
  auto writer = OpenOrDie(options);
  ASSERT_TRUE(writer->Add(MakeDocument(0, 2, kWriterSites).View()));
  ASSERT_TRUE(writer->Add(MakeDocument(1, 2, kWriterSites).View()));
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 0u);  // chunk 0 is still open
  ASSERT_TRUE(writer->EndChunk(0, 3));                       // document 2 was rejected
  nlohmann::json metadata = ReadMetadata(dir.path());
  ASSERT_EQ(metadata["shards"].size(), 1u);
  EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[0, 3]]"));
  EXPECT_EQ(metadata["shards"][0]["docs"], 2);
  ASSERT_TRUE(
      writer->Add(MakeDocument(9, 1, kWriterSites).View()));  // chunk 3: 1 and 2 went elsewhere
  ASSERT_TRUE(writer->EndChunk(3, 3));
  ASSERT_TRUE(writer->Finish());
  metadata = ReadMetadata(dir.path());
  EXPECT_EQ(metadata["shards"][1]["chunks"], nlohmann::json::parse("[[3, 3]]"));
  EXPECT_EQ(metadata["chunks_without_documents"], nlohmann::json::array());
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{0, 1, 9}));
  EXPECT_EQ(writer->listed_chunks(), (std::set<int64_t>{0, 3}));
}

// In a leased job a lost host's chunk can come to a writer after higher chunks: it goes
// to a shard of its own, so each shard's doc ids still increase.
TEST(ShardWriter, StartsAShardForAChunkLowerThanTheOpenShards) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(2, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(6, 2, kWriterSites).View()));  // chunk 3
  ASSERT_TRUE(writer->EndChunk(3, 1));
  ASSERT_TRUE(writer->Add(MakeDocument(2, 2, kWriterSites).View()));  // chunk 1, given back
  ASSERT_TRUE(writer->Add(MakeDocument(3, 1, kWriterSites).View()));
  ASSERT_TRUE(writer->EndChunk(1, 2));
  ASSERT_TRUE(writer->Add(MakeDocument(8, 1, kWriterSites).View()));  // chunk 4: same shard as 1
  ASSERT_TRUE(writer->EndChunk(4, 1));
  ASSERT_TRUE(writer->Finish());
  const nlohmann::json metadata = ReadMetadata(dir.path());
  ASSERT_EQ(metadata["shards"].size(), 2u);
  EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[3, 1]]"));
  EXPECT_EQ(metadata["shards"][1]["chunks"], nlohmann::json::parse("[[1, 2], [4, 1]]"));
  EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{6, 2, 3, 8}));
  EXPECT_EQ(writer->listed_chunks(), (std::set<int64_t>{1, 3, 4}));
}

TEST(ShardWriter, FinishDropsTheChunkThatNeverEnded) {
  for (bool gzip : {false, true}) {
    TempDir dir;
    ShardWriterOptions options = Options(dir.path());
    options.chunks = *ChunkRule::Of(2);
    options.gzip = gzip;
    auto writer = OpenOrDie(options);
    ASSERT_TRUE(writer->Add(MakeDocument(0, 3, kWriterSites).View()));
    ASSERT_TRUE(writer->Add(MakeDocument(1, 2, kWriterSites).View()));
    ASSERT_TRUE(writer->EndChunk(0, 2));
    ASSERT_TRUE(writer->Add(MakeDocument(2, 4, kWriterSites).View()));  // chunk 1 never ends
    ASSERT_TRUE(writer->Finish(/*complete=*/false));
    const nlohmann::json metadata = ReadMetadata(dir.path());
    EXPECT_EQ(metadata["complete"], false);
    ASSERT_EQ(metadata["shards"].size(), 1u);
    EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[0, 2]]"));
    EXPECT_EQ(metadata["totals"]["tokens"], 5);
    // The statistics count the rows written, not those of the dropped document.
    EXPECT_EQ(metadata["statistics"]["blocks.0.hook_resid_post"]["count"], 5);
    EXPECT_EQ(CheckListedShards(dir.path()), (std::vector<int64_t>{0, 1}));
    const std::string first = gzip ? "shard_000001.safetensors.gz" : "shard_000001.safetensors";
    EXPECT_EQ(DirectoryEntries(dir.path()), (std::set<std::string>{first, "metadata.json"}));
  }
  // An input said to be complete must have ended every chunk.
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(2, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(0, 1, kWriterSites).View()));
  auto finished = writer->Finish(/*complete=*/true);
  ASSERT_FALSE(finished);
  EXPECT_THAT(finished.error(), HasSubstr("ended inside chunk 0, which was not listed"));
  EXPECT_EQ(ReadMetadata(dir.path())["complete"], false);
  EXPECT_EQ(ReadMetadata(dir.path())["shards"].size(), 0u);
}

// stats().chunk_docs counts the listed chunks' documents, the rejected ones too: what
// a lost host still answers for (a monitor's count of it).
TEST(ShardWriter, ListsChunksWhoseDocumentsWereAllRejected) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(2, dir.path()));
  ASSERT_TRUE(writer->EndChunk(0, 2));  // no shard open: it rides with the next one
  ASSERT_TRUE(writer->Add(MakeDocument(2, 1, kWriterSites).View()));
  ASSERT_TRUE(writer->EndChunk(1, 2));
  EXPECT_EQ(writer->stats().chunk_docs, 0) << "nothing listed yet";
  ASSERT_TRUE(writer->Finish());
  EXPECT_EQ(writer->stats().docs, 1);
  EXPECT_EQ(writer->stats().chunk_docs, 4);
  nlohmann::json metadata = ReadMetadata(dir.path());
  EXPECT_EQ(metadata["shards"][0]["chunks"], nlohmann::json::parse("[[0, 2], [1, 2]]"));
  ShardWriterOptions resumed = ChunksOf(2, dir.path());
  resumed.continue_from = metadata;
  EXPECT_EQ(OpenOrDie(resumed)->stats().chunk_docs, 4) << "an earlier run's chunks count";

  TempDir only_rejects;
  writer = OpenOrDie(Options(only_rejects.path()));
  ASSERT_TRUE(writer->EndChunk(5, 1));
  ASSERT_TRUE(writer->Finish());
  EXPECT_EQ(writer->stats().chunk_docs, 1);
  metadata = ReadMetadata(only_rejects.path());
  EXPECT_EQ(metadata["shards"].size(), 0u);
  EXPECT_EQ(metadata["chunks_without_documents"], nlohmann::json::parse("[[5, 1]]"));
  EXPECT_EQ(ListedChunks(metadata), (std::map<int64_t, int64_t>{{5, 1}}));
}

TEST(ShardWriter, RefusesAChunkTwiceAndAnotherChunkWhileOneIsOpen) {
  TempDir dir;
  auto writer = OpenOrDie(ChunksOf(4, dir.path()));
  ASSERT_TRUE(writer->Add(MakeDocument(4, 1, kWriterSites).View()));
  auto other = writer->Add(MakeDocument(8, 1, kWriterSites).View());
  ASSERT_FALSE(other);
  EXPECT_THAT(other.error(), HasSubstr("document 8 belongs to chunk 2, but chunk 1 has not ended"));
  auto wrong_end = writer->EndChunk(2, 4);
  ASSERT_FALSE(wrong_end);
  EXPECT_THAT(wrong_end.error(), HasSubstr("chunk 2 ended while chunk 1 is open"));
  auto too_many = writer->EndChunk(1, 5);
  ASSERT_FALSE(too_many);
  EXPECT_THAT(too_many.error(), HasSubstr("5 documents, not 1 to the chunk size 4"));
  ASSERT_TRUE(writer->EndChunk(1, 4));
  auto again = writer->Add(MakeDocument(5, 1, kWriterSites).View());
  ASSERT_FALSE(again);
  EXPECT_THAT(again.error(), HasSubstr("its chunk 1 was listed or ended already"));
  ASSERT_FALSE(writer->EndChunk(1, 4));
  ASSERT_TRUE(writer->Finish());

  // A resumed run refuses what the earlier one listed.
  ShardWriterOptions resumed = ChunksOf(4, dir.path());
  resumed.continue_from = ReadMetadata(dir.path());
  writer = OpenOrDie(resumed);
  auto listed = writer->Add(MakeDocument(6, 1, kWriterSites).View());
  ASSERT_FALSE(listed);
  EXPECT_THAT(listed.error(), HasSubstr("its chunk 1 was listed or ended already"));
  ASSERT_TRUE(writer->Add(MakeDocument(0, 1, kWriterSites).View()));  // chunk 0 was never seen
}

TEST(ShardWriter, RejectsBadOptionsAndEarlierRun) {
  TempDir dir;
  ShardWriterOptions options = Options(dir.File("out"));
  options.sites.push_back({"token_ids", 3});
  EXPECT_FALSE(ShardWriter::Open(options).has_value());
  options = Options(dir.File("out"));
  options.sites.push_back(kWriterSites[0]);
  EXPECT_FALSE(ShardWriter::Open(options).has_value());
  options = Options(dir.File("out"));
  options.sites[0].width = 0;
  EXPECT_FALSE(ShardWriter::Open(options).has_value());
  options = Options(dir.File("out"));
  options.shard_bytes = 0;
  EXPECT_FALSE(ShardWriter::Open(options).has_value());

  ASSERT_NE(OpenOrDie(Options(dir.File("out/host_00"))), nullptr);  // creates the directories
  auto again = ShardWriter::Open(Options(dir.File("out/host_00")));
  ASSERT_FALSE(again.has_value());
  EXPECT_THAT(again.error(), HasSubstr(dir.File("out/host_00/metadata.json") + " already exists"));
}

// Runs the same documents with a write failure injected after every `step` bytes,
// and after each failure checks what a reader would see.
TEST(ShardWriter, WriteErrorLeavesListedShardsValid) {
  std::set<std::string> failed_files;
  int failures = 0;
  for (bool gzip : {false, true}) {
    for (int64_t fail_after = 0;; fail_after += 331) {
      TempDir dir;
      ShardWriterOptions options = Options(dir.path());
      options.shard_bytes = 68 * 12;
      options.gzip = gzip;
      options.dtype = OutputDtype::kF16;
      options.fail_after_bytes = fail_after;
      std::string error;
      auto writer = ShardWriter::Open(options);
      if (!writer.has_value()) {
        error = writer.error();
      } else {
        for (int64_t doc = 0; doc < 10 && error.empty(); ++doc) {
          if (auto added = AddWhole(**writer, MakeDocument(doc, 5, kWriterSites)); !added) {
            error = added.error();
          }
        }
        if (auto finished = (*writer)->Finish(); error.empty() && !finished) {
          error = finished.error();
        }
      }
      if (error.empty()) break;  // the budget was enough for the whole run
      ++failures;
      EXPECT_THAT(error, HasSubstr("No space left on device"));
      EXPECT_THAT(error, HasSubstr(dir.path() + "/"));
      failed_files.insert(
          error.substr(error.rfind('/') + 1, error.rfind(':') - error.rfind('/') - 1));
      if (writer.has_value()) {
        auto after = (*writer)->Add(MakeDocument(100, 1, kWriterSites).View());
        ASSERT_FALSE(after.has_value());
        EXPECT_THAT(after.error(), HasSubstr("earlier error"));
        writer->reset();  // what a failing pipeline does next
      }
      for (const auto& name : DirectoryEntries(dir.path())) {
        EXPECT_FALSE(name.ends_with(".tmp")) << name << " left behind";
        EXPECT_THAT(name, ::testing::Not(HasSubstr("spill"))) << name << " left behind";
      }
      if (!std::filesystem::exists(dir.File("metadata.json"))) {
        EXPECT_FALSE(writer.has_value()) << "metadata.json vanished after Open";
        continue;
      }
      const std::vector<int64_t> docs = CheckListedShards(dir.path());
      for (size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(docs[i], static_cast<int64_t>(i));
      EXPECT_EQ(ReadMetadata(dir.path())["complete"], false);
    }
  }
  EXPECT_GT(failures, 20);
  std::printf("injected %d write failures\n", failures);
  // Failures were met while spilling, while assembling a shard and in metadata.json.
  EXPECT_THAT(failed_files, ::testing::Contains(HasSubstr(".spill.")));
  EXPECT_THAT(failed_files, ::testing::Contains(HasSubstr(".safetensors.tmp")));
  EXPECT_THAT(failed_files, ::testing::Contains(HasSubstr(".safetensors.gz.tmp")));
  EXPECT_THAT(failed_files, ::testing::Contains("metadata.json.tmp"));
}

TEST(ParseByteSize, ParsesBinaryUnitsCaseInsensitively) {
  EXPECT_EQ(ParseByteSize("1GB"), int64_t{1} << 30);
  EXPECT_EQ(ParseByteSize("512MB"), int64_t{512} << 20);
  EXPECT_EQ(ParseByteSize("64KB"), int64_t{64} << 10);
  EXPECT_EQ(ParseByteSize("10B"), 10);
  EXPECT_EQ(ParseByteSize("1000"), 1000);
  EXPECT_EQ(ParseByteSize("2gb"), int64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("3 MiB"), int64_t{3} << 20);
  EXPECT_EQ(ParseByteSize("4k"), 4096);
  EXPECT_EQ(ParseByteSize("1TB"), int64_t{1} << 40);
}

TEST(ParseByteSize, RejectsGarbageZeroNegativeAndOverflow) {
  for (const char* text : {"", "GB", "abc", "1.5GB", "-1GB", "1XB", "1 GB extra", "0", "0MB",
                           "99999999999999999999", "9999999999TB"}) {
    auto parsed = ParseByteSize(text);
    EXPECT_FALSE(parsed.has_value()) << text;
    if (!parsed.has_value()) {
      EXPECT_THAT(parsed.error(), HasSubstr(text)) << text;
    }
  }
}

}  // namespace
}  // namespace actex
