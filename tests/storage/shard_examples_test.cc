#include "storage/shard_examples.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/host_folder_files.h"
#include "storage/shard_writer.h"
#include "tests/storage/latent_documents.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

ShardWriterOptions LatentOptions(const std::string& dir) {
  return LatentWriterOptions(dir, 600);  // a few documents a shard
}

TEST(ShardWriterExamples, EachShardListsAnExamplesFileOfExactlyItsTokens) {
  TempDir dir;
  auto writer = ShardWriter::Open(LatentOptions(dir.path()));
  ASSERT_TRUE(writer) << writer.error();
  LatentExamples whole(kSaeLatents, 3);
  for (int64_t doc = 0; doc < 12; ++doc) {
    const OwnedDocument document = MakeLatentDocument(doc, 3 + doc % 4);
    ASSERT_TRUE(AddWhole(**writer, document));
    AddAsStored(whole, document, OutputDtype::kBF16);
  }
  ASSERT_TRUE((*writer)->Finish());
  const nlohmann::json metadata = ReadMetadata(dir.path());
  ASSERT_GT(metadata["shards"].size(), 2u);
  LatentExamplesBySite merged;
  for (const auto& shard : metadata["shards"]) {
    const auto& listed = shard.at("examples");
    const std::string name = listed["file"];
    EXPECT_EQ(name, ExamplesFileName(shard["file"].get<std::string>()));
    const auto bytes = *ReadWholeFile(dir.File(name));
    EXPECT_EQ(listed["bytes"].get<int64_t>(), static_cast<int64_t>(bytes.size()));
    EXPECT_EQ(listed["crc32"].get<std::string>(), FormatCrc32(Crc32Of(bytes)));
    auto loaded = LoadLatentExamples(dir.File(name));
    ASSERT_TRUE(loaded) << loaded.error();
    auto file = SafetensorsFile::Open(dir.File(shard["file"]));
    ASSERT_TRUE(file);
    auto recomputed = RecomputeShardExamples((*file)->tensors(), (*file)->path(), *loaded);
    ASSERT_TRUE(recomputed) << recomputed.error();
    EXPECT_TRUE(recomputed->at(kLatentSite) == loaded->at(kLatentSite)) << name;
    ASSERT_TRUE(MergeLatentExamples(merged, *loaded));
  }
  EXPECT_TRUE(merged.at(kLatentSite) == whole);
}

TEST(ShardWriterExamples, TheChunkThatNeverEndedIsLeftOut) {
  TempDir dir;
  ShardWriterOptions options = LatentOptions(dir.path());
  options.shard_bytes = int64_t{1} << 30;
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer);
  LatentExamples ended(kSaeLatents, 3);
  for (int64_t doc = 0; doc < 3; ++doc) {
    const OwnedDocument document = MakeLatentDocument(doc, 4);
    ASSERT_TRUE(AddWhole(**writer, document));
    AddAsStored(ended, document, OutputDtype::kBF16);
  }
  ASSERT_TRUE((*writer)->Add(MakeLatentDocument(3, 4).View()));  // its chunk never ends
  ASSERT_FALSE((*writer)->Finish());
  auto loaded = LoadLatentExamples(dir.File(ExamplesFileName("shard_000001.safetensors")));
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_TRUE(loaded->at(kLatentSite) == ended);
}

TEST(ShardWriterExamples, ADocumentWithALatentIdOutOfRangeIsRefusedWhole) {
  TempDir dir;
  auto writer = ShardWriter::Open(LatentOptions(dir.path()));
  ASSERT_TRUE(writer);
  OwnedDocument bad = MakeLatentDocument(0, 3);
  bad.integers[0][4] = kSaeLatents;  // token 1's first latent (K = 4), which fires
  auto added = (*writer)->Add(bad.View());
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error(), "document 0: SAE site " + std::string(kLatentSite) +
                               ": document 0 position 1: latent id " + std::to_string(kSaeLatents) +
                               " is not below the SAE's " + std::to_string(kSaeLatents) +
                               " latents");
  const OwnedDocument good = MakeLatentDocument(1, 3);
  ASSERT_TRUE(AddWhole(**writer, good));  // the writer goes on, nothing of the refused kept
  ASSERT_TRUE((*writer)->Finish());
  LatentExamples expected(kSaeLatents, 3);
  AddAsStored(expected, good, OutputDtype::kBF16);
  auto loaded = LoadLatentExamples(dir.File(ExamplesFileName("shard_000001.safetensors")));
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->at(kLatentSite) == expected);
}

TEST(ShardWriterExamples, AnSaeWithoutItsLatentSitesIsRefusedNamingThem) {
  TempDir dir;
  ShardWriterOptions options = LatentOptions(dir.path());
  options.sae_latents = {{"blocks.3.hook_resid_post", 8}};
  auto writer = ShardWriter::Open(options);
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error(),
            "SAE site blocks.3.hook_resid_post: its examples need the stored sites "
            "blocks.3.hook_resid_post.latents.ids (I32) and "
            "blocks.3.hook_resid_post.latents.values of one width, which the writer was not given");
}

TEST(ShardWriterExamples, WithoutAnSaeNoExamplesFileIsWritten) {
  TempDir dir;
  ShardWriterOptions options = LatentOptions(dir.path());
  options.sae_latents.clear();
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer);
  ASSERT_TRUE(AddWhole(**writer, MakeLatentDocument(0, 3)));
  ASSERT_TRUE((*writer)->Finish());
  EXPECT_FALSE(ReadMetadata(dir.path())["shards"][0].contains("examples"));
  EXPECT_EQ((*writer)->listed_files(0).size(), 1u);
}

TEST(FindLatentColumns, FindsAnSaeByItsIdsAndValuesSites) {
  const auto found = FindLatentColumns(LatentSites());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.at(kLatentSite).ids, 0u);
  EXPECT_EQ(found.at(kLatentSite).values, 1u);
  EXPECT_EQ(found.at(kLatentSite).stored, kStoredLatents);
  // Values stored as integers are not an SAE's.
  std::vector<StoredSite> sites = LatentSites();
  sites[1].integer = true;
  EXPECT_TRUE(FindLatentColumns(sites).empty());
}

}  // namespace
}  // namespace actex
