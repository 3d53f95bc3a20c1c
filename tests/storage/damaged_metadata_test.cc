// Every reader of an extraction's metadata.json against every careless edit of it
// (json_mutations.h): verify's (ReadOutputFolder through VerifyOutput), the one
// shuffle and export read their source with (ReadSourceOutput), and a resume's
// (ReadEarlierOutput, then the shard writer continuing from what it accepted).
// None may throw; each refusal names the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "storage/earlier_output.h"
#include "storage/output_verifier.h"
#include "storage/shard_writer.h"
#include "storage/shuffle_rows.h"
#include "storage/site_statistics.h"
#include "tests/storage/json_mutations.h"
#include "tests/storage/synthetic_output.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class DamagedMetadata : public testing::Test {
 protected:
  void SetUp() override {
    SyntheticOutput spec;
    spec.hosts = 1;
    spec.documents = 4;
    spec.shard_bytes = 1 << 20;  // one shard: the readers' time goes to the listing
    spec.sites = {{"blocks.0.hook_resid_post", 8}};
    WriteSyntheticOutput(Out(), spec);
    original_ = ReadJson(Metadata());
  }
  std::string Out() const { return dir_.path() + "/out"; }
  std::string Host() const { return Out() + "/host_00"; }
  std::string Metadata() const { return Host() + "/metadata.json"; }

  // Runs every reader on `metadata` in place of the original.
  void ReadAll(const JsonMutation& mutation) {
    SCOPED_TRACE(mutation.what);
    WriteBytes(Metadata(), mutation.document.dump(1));
    try {
      VerifyOptions options;
      options.out_dir = Out();
      options.data = {"/nonexistent/corpus.jsonl"};  // coverage is not what is tested here
      auto report = VerifyOutput(options);
      if (!report) {
        EXPECT_THAT(report.error(), HasSubstr("metadata.json"));
      }
    } catch (const std::exception& error) {
      ADD_FAILURE() << "VerifyOutput threw " << error.what();
    }
    try {
      auto source = ReadSourceOutput(Out());
      if (!source) {
        EXPECT_THAT(source.error(), HasSubstr("metadata.json"));
      }
    } catch (const std::exception& error) {
      ADD_FAILURE() << "ReadSourceOutput threw " << error.what();
    }
    try {
      auto earlier = ReadEarlierOutput(Host());
      if (!earlier) {
        EXPECT_THAT(earlier.error(), HasSubstr("metadata.json"));
      } else if (earlier->has_value()) {
        ShardWriterOptions options;
        options.dir = Host();
        options.sites = {{"blocks.0.hook_resid_post", 8}};
        options.continue_from = (*earlier)->metadata;
        auto writer = ShardWriter::Open(options);
        if (!writer) {
          EXPECT_THAT(writer.error(), HasSubstr("metadata.json"));
        }
      }
    } catch (const std::exception& error) {
      ADD_FAILURE() << "the resume threw " << error.what();
    }
  }

  TempDir dir_;
  nlohmann::json original_;
};

TEST_F(DamagedMetadata, NoReaderThrowsOnAnyFieldOfAnyType) {
  const std::vector<JsonMutation> mutations = JsonMutations(original_);
  ASSERT_GT(mutations.size(), 200u);
  for (const JsonMutation& mutation : mutations) ReadAll(mutation);
}

TEST_F(DamagedMetadata, AResumeNamesTheFileAndTheField) {
  struct Case {
    const char* pointer;
    nlohmann::json value;
    const char* says;
  };
  for (const Case& c : {Case{"/shards/0", nullptr, "shards[0] is null, expected an object"},
                        Case{"/shards", "x", "shards is a string \"x\", expected an array"},
                        Case{"/complete", "yes", "complete is a string \"yes\", expected true"},
                        Case{"/shards/0/bytes", -1, "shards[0].bytes is the number -1"},
                        Case{"/statistics/blocks.0.hook_resid_post/width", -1,
                             "width is the number -1, expected an integer >= 1"},
                        Case{"/config", 5, "config is the number 5, expected an object"}}) {
    SCOPED_TRACE(c.pointer);
    nlohmann::json damaged = original_;
    damaged[nlohmann::json::json_pointer(c.pointer)] = c.value;
    WriteBytes(Metadata(), damaged.dump());
    auto earlier = ReadEarlierOutput(Host());
    ASSERT_FALSE(earlier.has_value());
    EXPECT_THAT(earlier.error(), HasSubstr(Metadata()));
    EXPECT_THAT(earlier.error(), HasSubstr(c.says));
  }
}

TEST(SiteStatisticsFromJson, RefusesAWidthThatCannotSizeItsSums) {
  for (const nlohmann::json& width : {nlohmann::json(-1), nlohmann::json(0),
                                      nlohmann::json(int64_t{1} << 40), nlohmann::json("8")}) {
    SiteStatistics site(8);
    nlohmann::json json = site.ToJson();
    json["width"] = width;
    auto parsed = SiteStatistics::FromJson(json);
    ASSERT_FALSE(parsed.has_value()) << width;
    EXPECT_THAT(parsed.error(), HasSubstr("width"));
  }
}

}  // namespace
}  // namespace actex
