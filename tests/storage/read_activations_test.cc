// Runs scripts/read_activations.py on shards written by ShardWriter: the reader
// researchers use must see exactly what the writer meant to store.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "storage/shard_examples.h"
#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using ::testing::HasSubstr;

const std::vector<StoredSite> kSites = {{"blocks.0.hook_resid_post", 6},
                                        {"blocks.1.hook_attn_out", 3}};

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult RunCommand(const std::string& command);

CommandResult RunReader(const std::string& arguments) {
  return RunCommand(std::string("/usr/bin/python3 ") + ACTEX_SOURCE_DIR +
                    "/scripts/read_activations.py " + arguments + " 2>&1");
}

// Runs `code` in python3 with read_activations imported as `ra`.
CommandResult RunWithReader(const std::string& code) {
  return RunCommand(std::string("/usr/bin/python3 -c 'import sys; sys.path.insert(0, \"") +
                    ACTEX_SOURCE_DIR + "/scripts\"); import read_activations as ra; " + code +
                    "' 2>&1");
}

CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

nlohmann::json Dump(const std::string& shard, const std::string& tensor) {
  CommandResult result = RunReader(shard + " --dump " + tensor);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  try {
    return nlohmann::json::parse(result.output);
  } catch (const nlohmann::json::exception& error) {
    ADD_FAILURE() << error.what() << "\n" << result.output;
    return {};
  }
}

std::vector<OwnedDocument> WriteDocuments(const std::string& dir, OutputDtype dtype, bool gzip,
                                          int64_t shard_bytes) {
  ShardWriterOptions options;
  options.dir = dir;
  options.sites = kSites;
  options.dtype = dtype;
  options.gzip = gzip;
  options.shard_bytes = shard_bytes;
  auto writer = ShardWriter::Open(options);
  EXPECT_TRUE(writer.has_value()) << writer.error();
  std::vector<OwnedDocument> documents = {MakeDocument(10, 4, kSites), MakeDocument(11, 2, kSites),
                                          MakeDocument(14, 5, kSites)};
  documents[0].sites[0][0] = 3e38f;        // infinity in float16, finite in bfloat16
  documents[0].sites[0][1] = -1e-6f;       // a float16 subnormal
  documents[0].sites[0][2] = 1.00390625f;  // a bfloat16 tie
  if (!writer.has_value()) return documents;
  for (const auto& document : documents) {
    EXPECT_TRUE(AddWhole(**writer, document).has_value());
  }
  EXPECT_TRUE((*writer)->Finish().has_value());
  return documents;
}

void ExpectSiteValues(const nlohmann::json& dump, const std::vector<OwnedDocument>& documents,
                      size_t site, OutputDtype dtype) {
  std::vector<double> expected;
  for (const auto& document : documents) {
    for (float value : document.sites[site])
      expected.push_back(AsStored(value, dtype));  // the stored value widened
  }
  const auto& values = dump["values"];
  ASSERT_EQ(values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isinf(expected[i])) {
      EXPECT_EQ(values[i], expected[i] > 0 ? "Infinity" : "-Infinity") << i;
    } else {
      EXPECT_EQ(values[i].get<double>(), expected[i]) << i;
    }
  }
}

TEST(ReadActivationsScript, ReadsFloat32ShardExactly) {
  TempDir dir;
  auto documents = WriteDocuments(dir.path(), OutputDtype::kF32, false, int64_t{1} << 30);
  const std::string shard = dir.File("shard_000001.safetensors");
  nlohmann::json dump = Dump(shard, "blocks.0.hook_resid_post");
  EXPECT_EQ(dump["stored_dtype"], "F32");
  EXPECT_EQ(dump["shape"], nlohmann::json::parse("[11, 6]"));
  ExpectSiteValues(dump, documents, 0, OutputDtype::kF32);
  EXPECT_EQ(Dump(shard, "doc_ids")["values"],
            nlohmann::json::parse("[10,10,10,10,11,11,14,14,14,14,14]"));
  EXPECT_EQ(Dump(shard, "positions")["values"], nlohmann::json::parse("[0,1,2,3,0,1,0,1,2,3,4]"));
  std::vector<int32_t> token_ids;
  for (const auto& document : documents) {
    token_ids.insert(token_ids.end(), document.token_ids.begin(), document.token_ids.end());
  }
  EXPECT_EQ(Dump(shard, "token_ids")["values"], nlohmann::json(token_ids));
}

TEST(ReadActivationsScript, WidensBfloat16ToTheRoundedValues) {
  TempDir dir;
  auto documents = WriteDocuments(dir.path(), OutputDtype::kBF16, false, int64_t{1} << 30);
  nlohmann::json dump = Dump(dir.File("shard_000001.safetensors"), "blocks.1.hook_attn_out");
  EXPECT_EQ(dump["stored_dtype"], "BF16");
  EXPECT_EQ(dump["dtype"], "float32");
  ExpectSiteValues(dump, documents, 1, OutputDtype::kBF16);
  dump = Dump(dir.File("shard_000001.safetensors"), "blocks.0.hook_resid_post");
  ExpectSiteValues(dump, documents, 0, OutputDtype::kBF16);
  EXPECT_EQ(dump["values"][2], 1.0);  // the tie went to even
}

TEST(ReadActivationsScript, ReadsGzipFloat16ShardsAndSplitsDocuments) {
  TempDir dir;
  // Bytes per token: (6 + 3) * 2 + 16 = 34; the limit closes a shard after doc 11.
  auto documents = WriteDocuments(dir.path(), OutputDtype::kF16, true, 34 * 6);
  nlohmann::json first = Dump(dir.File("shard_000001.safetensors.gz"), "blocks.0.hook_resid_post");
  nlohmann::json second = Dump(dir.File("shard_000002.safetensors.gz"), "blocks.0.hook_resid_post");
  EXPECT_EQ(first["stored_dtype"], "F16");
  EXPECT_EQ(first["dtype"], "float16");
  ExpectSiteValues(first, {documents[0], documents[1]}, 0, OutputDtype::kF16);
  ExpectSiteValues(second, {documents[2]}, 0, OutputDtype::kF16);
  EXPECT_EQ(Dump(dir.File("shard_000002.safetensors.gz"), "doc_ids")["values"],
            nlohmann::json::parse("[14,14,14,14,14]"));
}

TEST(ReadActivationsScript, SummarizesTensorsDocsAndTokens) {
  TempDir dir;
  WriteDocuments(dir.path(), OutputDtype::kBF16, false, int64_t{1} << 30);
  CommandResult result = RunReader(dir.File("shard_000001.safetensors"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("docs 3  tokens 11"));
  EXPECT_THAT(result.output, HasSubstr("blocks.1.hook_attn_out: mean"));
  EXPECT_THAT(result.output, HasSubstr("BF16  -> float32  [11, 3]"));
}

TEST(ReadActivationsScript, ChecksShardsAgainstMetadataCrc) {
  TempDir dir;
  WriteDocuments(dir.path(), OutputDtype::kF32, true, 100);
  CommandResult all = RunReader(dir.path() + " --check");
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_THAT(all.output, HasSubstr("OK: 3 shard(s) match metadata.json"));
  CommandResult one = RunReader(dir.File("shard_000002.safetensors.gz") + " --check");
  EXPECT_EQ(one.exit_code, 0) << one.output;

  std::string bytes = ReadBytes(dir.File("shard_000002.safetensors.gz"));
  bytes[bytes.size() / 2] ^= 0x01;
  WriteBytes(dir.File("shard_000002.safetensors.gz"), bytes);
  CommandResult corrupt = RunReader(dir.path() + " --check");
  EXPECT_EQ(corrupt.exit_code, 1) << corrupt.output;
  EXPECT_THAT(corrupt.output, HasSubstr("shard_000002.safetensors.gz: crc32"));
}

TEST(ReadActivationsScript, ReportsUnknownTensor) {
  TempDir dir;
  WriteDocuments(dir.path(), OutputDtype::kF32, false, int64_t{1} << 30);
  CommandResult result = RunReader(dir.File("shard_000001.safetensors") + " --dump nope");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("no tensor 'nope'"));
}

TEST(ReadActivationsScript, KeepsAnIntegerSiteAsInt32) {
  TempDir dir;
  const std::vector<StoredSite> sites = {{"blocks.0.hook_resid_post", 2},
                                         {"blocks.0.mlp.hook_expert_indices", 2, true}};
  ShardWriterOptions options;
  options.dir = dir.path();
  options.sites = sites;
  options.dtype = OutputDtype::kBF16;
  options.run_config = nlohmann::json::object();
  auto writer = ShardWriter::Open(options);
  ASSERT_TRUE(writer.has_value()) << writer.error();
  const OwnedDocument document = MakeDocument(3, 4, sites);
  ASSERT_TRUE(AddWhole(**writer, document).has_value());
  ASSERT_TRUE((*writer)->Finish().has_value());
  nlohmann::json dump = Dump(dir.File("shard_000001.safetensors"), sites[1].name);
  EXPECT_EQ(dump["stored_dtype"], "I32");
  EXPECT_EQ(dump["values"], nlohmann::json(document.integers[1]));
  CommandResult batches =
      RunWithReader("b = next(ra.iter_batches(\"" + dir.path() + "\", \"" + sites[1].name +
                    "\")); print(b.dtype, str(b.ravel().tolist()).replace(\" \", \"\"))");
  ASSERT_EQ(batches.exit_code, 0) << batches.output;
  EXPECT_EQ(batches.output, "int32 " + nlohmann::json(document.integers[1]).dump() + "\n");
}

}  // namespace
}  // namespace actex
