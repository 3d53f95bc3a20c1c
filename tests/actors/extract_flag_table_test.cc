// The flag table: every row reads back what it prints, and what records a run
// (metadata.json's config, the hosts' fingerprint, the nodes' arguments) is read off it.

#include "actors/extract_flag_table.h"

#include <gtest/gtest.h>

#include <set>

#include "actors/run_fingerprint.h"

namespace actex {
namespace {

const ExtractFlag& FlagNamed(const std::string& name) {
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    if (flag.name == name) return flag;
  }
  ADD_FAILURE() << "no row " << name;
  return ExtractFlagTable().front();
}

// Options where every flag differs from its default.
ExtractOptions EveryFlagSet(const std::string& model_dir) {
  ExtractOptions options;
  options.model_dir = model_dir;
  options.data = {"a.jsonl", "b,c.parquet"};
  options.out_dir = "out";
  options.layers = {2, 3, 5};
  options.sites = {"resid_post", "blocks.1.hook_mlp_out"};
  options.shards = 2;
  options.dtype = "float16";
  options.max_seq_len = 512;
  options.overflow = Overflow::kSplit;
  options.batch_tokens = 4096;
  options.shard_bytes = 12345;
  options.gzip = true;
  options.text_field = "content";
  options.bos = "no";
  options.max_docs = 7;
  options.chunk_docs = 16;
  options.overwrite = true;
  options.blas_threads = 3;
  options.tokenizer_threads = 4;
  options.device = "cuda";
  options.gpus = "0,1";
  options.precision = "bf16";
  options.drain_timeout_seconds = 5;
  options.max_reject_fraction = 0.25;
  options.upload = {"cp {path} /r/{name}", true, 2, 0.5, 60};
  options.saes = {"resid_post=/s/a", "blocks.1.hook_mlp_out=/s/b"};
  options.sae_top_k = 16;
  options.sae_examples = 8;
  return options;
}

TEST(ExtractFlagTable, EveryRowParsesBackWhatItPrints) {
  const ExtractOptions set = EveryFlagSet(::testing::TempDir());
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    const std::vector<std::string> texts = flag.print(set);
    ASSERT_FALSE(texts.empty()) << flag.name << " printed nothing for a value off its default";
    ExtractOptions parsed;
    auto status = flag.parse(texts, parsed);
    ASSERT_TRUE(status.has_value()) << flag.name << ": " << status.error();
    EXPECT_EQ(flag.record(parsed), flag.record(set)) << flag.name;
    EXPECT_TRUE(flag.print(ExtractOptions{}).empty() || flag.required)
        << flag.name << " prints its default";
  }
}

TEST(ExtractFlagTable, NamesAndConfigKeysAreUniqueAndKeysLeadBackToTheFlag) {
  std::set<std::string> names, keys;
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    EXPECT_TRUE(names.insert(flag.name).second) << flag.name;
    EXPECT_TRUE(keys.insert(flag.config_key).second) << flag.config_key;
    EXPECT_EQ(FlagOfConfigKey(flag.config_key), flag.name);
    EXPECT_FALSE(flag.help.empty()) << flag.name;
  }
  EXPECT_EQ(FlagOfConfigKey("shard_bytes"), "--shard-size");
  EXPECT_EQ(FlagOfConfigKey("model_dir"), "--model");
  EXPECT_EQ(FlagOfConfigKey("bos_token_id"), "--bos");
}

TEST(ExtractFlagTable, ValuesAreCheckedWithAReasonNamingTheValue) {
  ExtractOptions options;
  auto expect_refused = [&](const std::string& name, const std::string& text,
                            const std::string& reason) {
    auto status = FlagNamed(name).parse({text}, options);
    ASSERT_FALSE(status.has_value()) << name << " " << text;
    EXPECT_NE(status.error().find(reason), std::string::npos) << status.error();
  };
  expect_refused("--max-seq-len", "0", "0 is below 1");
  expect_refused("--max-seq-len", "many", "\"many\" is not a whole number");
  expect_refused("--overflow", "wrap", "\"wrap\" is not one of truncate,split");
  expect_refused("--dtype", "float8", "not one of bfloat16,float16,float32");
  expect_refused("--upload-retries", "-1", "-1 is below 0");
  expect_refused("--max-reject-fraction", "1.5", "1.5 is above 1");
  expect_refused("--max-reject-fraction", "-0.1", "-0.1 is below 0");
  expect_refused("--upload-backoff", "soon", "not a number");
  expect_refused("--layers", "3-1", "\"3-1\" is not a range like 20-23");
  expect_refused("--layers", "1,,2", "\"1,,2\" has an empty entry");
  expect_refused("--layers", "0,x", "\"x\" is not a whole number");
  // Refused before any allocation: 2e9 layers would be a vector of 8 GB.
  expect_refused("--layers", "0-2000000000", "lists more than 65536 indices");
  auto layers = FlagNamed("--layers").parse({"0-"}, options);
  ASSERT_FALSE(layers.has_value());
  EXPECT_EQ(layers.error().find("--layers"), std::string::npos)
      << "the caller names the flag, once: " << layers.error();
  expect_refused("--shard-size", "lots", "lots");
  // Typos that would start 100000 threads, or make a wait overflow into none at all.
  expect_refused("--blas-threads", "100000", "100000 is above 1024");
  expect_refused("--tokenizer-threads", "5000", "5000 is above 1024");
  expect_refused("--upload-timeout", "1e300", "1e300 is above 31536000");
  expect_refused("--drain-timeout", "1e300", "1e300 is above 31536000");
  expect_refused("--upload-backoff", "301", "301 is above 300");
  expect_refused("--model", "/no/such/folder", "/no/such/folder is not a folder");
  ASSERT_TRUE(FlagNamed("--sites").parse({"resid_post,mlp_out", "embed"}, options));
  EXPECT_EQ(options.sites, (std::vector<std::string>{"resid_post", "mlp_out", "embed"}));
  ASSERT_TRUE(FlagNamed("--data").parse({"a,b.jsonl"}, options));
  EXPECT_EQ(options.data, (std::vector<std::string>{"a,b.jsonl"})) << "file names keep commas";
}

TEST(ExtractFlagTable, NodeArgumentsLeaveDefaultsOutAndCallShardsPerHost) {
  ExtractOptions options;
  options.model_dir = "m";
  options.data = {"c.jsonl"};
  options.out_dir = "o";
  options.layers = {0, 1};
  options.shards = 2;
  options.overwrite = true;
  EXPECT_EQ(ExtractOptionsToArgs(options),
            (std::vector<std::string>{"--model", "m", "--data", "c.jsonl", "--out", "o", "--layers",
                                      "0,1", "--shards-per-host", "2", "--overwrite"}));
}

TEST(ExtractFlagTable, RecordedAndSharedFlagsAreWhatMetadataAndFingerprintHold) {
  const ExtractOptions options = EveryFlagSet(::testing::TempDir());
  ExtractPlan plan;
  plan.config.name = "m";
  plan.dtype_name = options.dtype;
  plan.saes = {{{SiteKind::kResidPost, 2}, "/s/a"}, {{SiteKind::kMlpOut, 1}, "/s/b"}};
  const nlohmann::json config = ExtractOptionsToJson(options, plan);
  const auto fingerprint = RunFingerprint(options, plan, MeshPlan{}, "w", "t", {});
  for (const ExtractFlag& flag : ExtractFlagTable()) {
    EXPECT_EQ(config.contains(flag.config_key), flag.role != FlagRole::kRunOnly) << flag.name;
    EXPECT_EQ(fingerprint.count(flag.name) == 1, flag.role == FlagRole::kShared) << flag.name;
  }
  EXPECT_EQ(config["overflow"], "split");
  EXPECT_EQ(config["compress"], "gzip");
  EXPECT_EQ(config["shard_bytes"], 12345);
  EXPECT_EQ(fingerprint.at("--layers"), "2,3,5");
  EXPECT_EQ(fingerprint.at("--max-docs"), "7");
  // SAEs are recorded by hook name and absolute folder, and shared as their files.
  EXPECT_EQ(config["sae"],
            nlohmann::json::array({"blocks.2.hook_resid_post=/s/a", "blocks.1.hook_mlp_out=/s/b"}));
  EXPECT_TRUE(fingerprint.contains("SAE files"));
}

TEST(ExtractFlagTable, AnSaeEntryWithoutAFolderIsRefused) {
  ExtractOptions options;
  auto status = FlagNamed("--sae").parse({"blocks.1.hook_resid_post"}, options);
  ASSERT_FALSE(status.has_value());
  EXPECT_NE(status.error().find("is not SITE=DIR"), std::string::npos) << status.error();
}

}  // namespace
}  // namespace actex
