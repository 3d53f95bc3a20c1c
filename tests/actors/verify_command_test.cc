// `actex verify OUT` as a user runs it, on a real extraction (the fixture model,
// a pre-tokenized corpus with one rejected line) and on copies of it damaged one
// way at a time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "actex_process.h"
#include "actors/node.h"
#include "extraction_reader.h"
#include "tests/support/fixture_dirs.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::chrono::seconds kVerifyLimit{60};

class VerifyCommand : public testing::Test {
 protected:
  // One real extraction for the whole suite: documents 0, 1, 3, 4 written one per
  // shard, line 3 (document 2) rejected as not JSON.
  static void SetUpTestSuite() {
    run_ = new TempDir();
    ExtractOptions options;
    options.model_dir = kTinyModelDir;
    options.data = {run_->Write("corpus.jsonl",
                                "{\"input_ids\": [1, 2, 3]}\n{\"input_ids\": [4, 5]}\nnot json\n"
                                "{\"input_ids\": [6, 7, 8, 9]}\n{\"input_ids\": [10]}\n")};
    options.out_dir = run_->path() + "/out";
    options.layers = {0};
    options.sites = {"resid_post"};
    options.dtype = "bfloat16";
    options.shard_bytes = 1;
    options.chunk_docs = 1;  // so that each document closes a shard
    options.blas_threads = 1;
    auto summary = RunExtraction(options);
    ASSERT_TRUE(summary.has_value()) << summary.error();
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }

  // A copy of the clean output to damage.
  void SetUp() override {
    ASSERT_NE(run_, nullptr);
    fs::copy(run_->path() + "/out", Out(), fs::copy_options::recursive);
  }
  std::string Out() const { return dir_.path() + "/out"; }
  std::string Host() const { return Out() + "/host_00"; }

  ActexOutcome Verify(std::vector<std::string> args = {}) const {
    args.insert(args.begin(), {"verify", Out()});
    return RunActex(dir_.path() + "/verify", std::move(args), kVerifyLimit);
  }

  static TempDir* run_;
  TempDir dir_;
};

TempDir* VerifyCommand::run_ = nullptr;

TEST_F(VerifyCommand, CleanRunExitsZeroWithTheSummary) {
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.out << outcome.err;
  const auto bytes = ReadJson(Host() + "/metadata.json")["totals"]["bytes"].get<int64_t>();
  EXPECT_THAT(outcome.out, HasSubstr("verified 5 documents: 4 written, 1 rejected, 0 missing, "
                                     "0 duplicated; 4 shards, " +
                                     std::to_string(bytes) + " bytes\nOK\n"));
  EXPECT_THAT(outcome.out, HasSubstr("host_00: complete, 4 shards, 4 documents, 10 tokens"));
}

TEST_F(VerifyCommand, FlippedByteIsACrcFault) {
  const std::string shard = Host() + "/shard_000002.safetensors";
  std::string bytes = ReadBytes(shard);
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), sizeof(header));
  bytes[8 + header] ^= 0x10;
  WriteBytes(shard, bytes);
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("fault: host_00/shard_000002.safetensors: crc32 is "));
  EXPECT_THAT(outcome.out, HasSubstr("FAILED: 1 faults"));
}

TEST_F(VerifyCommand, TruncatedShardIsASizeFault) {
  const std::string shard = Host() + "/shard_000003.safetensors";
  fs::resize_file(shard, fs::file_size(shard) - 100);
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("fault: host_00/shard_000003.safetensors: is "));
  EXPECT_THAT(outcome.out, HasSubstr("1 documents missing (neither written nor in a "
                                     "rejects.jsonl): 3"));
}

TEST_F(VerifyCommand, DeletedShardIsAFault) {
  fs::remove(Host() + "/shard_000001.safetensors");
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("fault: host_00/shard_000001.safetensors: listed in "
                                     "metadata.json but missing"));
}

TEST_F(VerifyCommand, TamperedHeaderIsAFault) {
  const std::string shard = Host() + "/shard_000004.safetensors";
  std::string bytes = ReadBytes(shard);
  const size_t at = bytes.find("\"I64\"");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 5, "\"U64\"");
  WriteBytes(shard, bytes);
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("fault: host_00/shard_000004.safetensors: tensor "
                                     "\"doc_ids\" is U64, expected I64"));
}

TEST_F(VerifyCommand, ListingWithOtherDocIdsIsAFault) {
  nlohmann::json metadata = ReadJson(Host() + "/metadata.json");
  metadata["shards"][3]["first_doc_id"] = 5;
  metadata["shards"][3]["last_doc_id"] = 5;
  WriteJson(Host() + "/metadata.json", metadata);
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("fault: host_00/shard_000004.safetensors: holds documents "
                                     "4..4, metadata.json lists 5..5"));
}

TEST_F(VerifyCommand, DocumentWithoutShardOrListingIsMissing) {
  nlohmann::json metadata = ReadJson(Host() + "/metadata.json");
  const nlohmann::json entry = metadata["shards"][1];  // document 1
  metadata["shards"].erase(1);
  for (const char* key : {"docs", "tokens", "bytes"}) {
    metadata["totals"][key] = metadata["totals"][key].get<int64_t>() - entry[key].get<int64_t>();
  }
  metadata["totals"]["shards"] = 3;
  WriteJson(Host() + "/metadata.json", metadata);
  fs::remove(Host() + "/" + entry["file"].get<std::string>());
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("fault: 1 documents missing (neither written nor in a "
                                     "rejects.jsonl): 1\n"));
  EXPECT_THAT(outcome.out, HasSubstr("verified 5 documents: 3 written, 1 rejected, 1 missing, "
                                     "0 duplicated; 3 shards"));
}

TEST_F(VerifyCommand, HostFolderCopiedIntoASecondFolderDuplicatesItsDocuments) {
  fs::copy(Host(), Out() + "/host_01", fs::copy_options::recursive);
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out,
              HasSubstr("fault: 5 documents duplicated (written or rejected more than once): 0 "
                        "(host_00/shard_000001.safetensors, host_01/shard_000001.safetensors)"));
  EXPECT_THAT(outcome.out, HasSubstr("2 (host_00/rejects.jsonl, host_01/rejects.jsonl)"));
  EXPECT_THAT(outcome.out, HasSubstr("warning: host_01: its metadata.json says it is host_00"));
}

TEST_F(VerifyCommand, UnfinishedRunFailsUnlessAllowed) {
  nlohmann::json metadata = ReadJson(Host() + "/metadata.json");
  metadata["complete"] = false;
  WriteJson(Host() + "/metadata.json", metadata);
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("fault: host_00: did not finish (\"complete\": false): "
                                     "resume the run"));
  ActexOutcome allowed = Verify({"--allow-incomplete"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out;
  EXPECT_THAT(allowed.out, HasSubstr("host_00: incomplete, 4 shards"));
}

TEST_F(VerifyCommand, LeftoversOfAnInterruptedRunAreWarningsOnly) {
  fs::copy_file(Host() + "/shard_000004.safetensors", Host() + "/shard_000005.safetensors");
  WriteBytes(Host() + "/shard_000006.safetensors.tmp", "half a shard");
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 0) << outcome.out;
  EXPECT_THAT(outcome.out, HasSubstr("warning: host_00/shard_000005.safetensors: shard not "
                                     "listed in metadata.json"));
  EXPECT_THAT(outcome.out, HasSubstr("warning: host_00/shard_000006.safetensors.tmp: temporary "
                                     "file"));
  EXPECT_THAT(outcome.out, HasSubstr("OK (see the warnings above)"));
}

TEST_F(VerifyCommand, MovedCorpusIsGivenWithData) {
  nlohmann::json metadata = ReadJson(Host() + "/metadata.json");
  const std::string moved = dir_.path() + "/moved.jsonl";
  fs::copy_file(metadata["config"]["data"][0].get<std::string>(), moved);
  metadata["config"]["data"] = {dir_.path() + "/gone.jsonl"};
  WriteJson(Host() + "/metadata.json", metadata);
  ActexOutcome outcome = Verify();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.out, HasSubstr("if it moved, give its files with --data"));
  outcome = Verify({"--data", moved});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.out;
  EXPECT_THAT(outcome.out, HasSubstr("verified 5 documents: 4 written, 1 rejected"));
}

TEST_F(VerifyCommand, UsageErrorsExitTwo) {
  ActexProcess process(dir_.path() + "/usage", {"verify", dir_.path() + "/nothing-here"});
  EXPECT_EQ(process.Wait(kVerifyLimit), 2);
  EXPECT_THAT(process.err(), HasSubstr("is not a directory"));
  EXPECT_THAT(process.out(), Not(HasSubstr("OK")));
  ActexProcess unknown(dir_.path() + "/unknown", {"verify", Out(), "--frobnicate"});
  EXPECT_EQ(unknown.Wait(kVerifyLimit), 2);
  EXPECT_THAT(unknown.err(), HasSubstr("unexpected argument --frobnicate"));
}

}  // namespace
}  // namespace actex
