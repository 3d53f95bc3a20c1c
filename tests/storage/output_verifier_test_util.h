#ifndef ACTEX_TESTS_STORAGE_OUTPUT_VERIFIER_TEST_UTIL_H_
#define ACTEX_TESTS_STORAGE_OUTPUT_VERIFIER_TEST_UTIL_H_

// Host folders for VerifyOutput's tests, written by the real ShardWriter, RejectsLog
// and UploadLedger: TwoHosts (a clean job of two replicas) and UploadedShards (with
// shards uploaded and deleted), which the tests then damage one way at a time.

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <expected>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "storage/output_verifier.h"
#include "storage/rejects_log.h"
#include "storage/shard_writer.h"
#include "storage/upload_ledger.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex::verify_test {

// What every VerifyOutput test writes and verifies with, as static members: each test
// file reaches them through its fixture, so no helper name leaks into the other files
// of a unity batch.
class VerifyTest : public testing::Test {
 protected:
  static inline const std::vector<StoredSite> kSites = {{"blocks.0.hook_resid_post", 4}};

  static std::string HostName(int host) { return "host_0" + std::to_string(host); }

  // Like a mesh of one machine with `num_hosts` replicas: host h holds the documents
  // with doc_id % num_hosts == h.
  static std::expected<FolderRole, std::string> ReplicaRole(const nlohmann::json& config) {
    const int hosts = config.at("num_hosts").get<int>(), host = config.at("host_id").get<int>();
    FolderRole role;
    role.job = "the job";
    role.name = HostName(host);
    for (int h = 0; h < hosts; ++h) role.job_folders.push_back(HostName(h));
    role.owns = [hosts, host](int64_t doc_id) { return doc_id % hosts == host; };
    role.job_owns = [](int64_t) { return true; };
    return role;
  }

  // Independent jobs of one host each: machine m holds doc_id % total_machines == m.
  static std::expected<FolderRole, std::string> MachineRole(const nlohmann::json& config) {
    const int machines = config.at("total_machines").get<int>();
    const int machine = config.at("machine_id").get<int>();
    FolderRole role;
    role.job = "machine " + std::to_string(machine);
    for (int m = 0; m < machines; ++m) role.all_jobs.push_back("machine " + std::to_string(m));
    role.name = "machine_00" + std::to_string(machine) + "_host_00";
    role.job_folders = {role.name};
    role.owns = [machines, machine](int64_t doc_id) { return doc_id % machines == machine; };
    role.job_owns = role.owns;
    return role;
  }

  static std::string WriteCorpus(const TempDir& dir, int lines, bool gzip = false) {
    std::string text;
    for (int i = 0; i < lines; ++i) text += "{\"input_ids\": [" + std::to_string(i + 1) + "]}\n";
    const std::string path = dir.File(gzip ? "corpus.jsonl.gz" : "corpus.jsonl");
    if (!gzip) {
      WriteBytes(path, text);
    } else {
      gzFile out = gzopen(path.c_str(), "wb");
      gzwrite(out, text.data(), static_cast<unsigned>(text.size()));
      gzclose(out);
    }
    return path;
  }

  struct HostSpec {
    std::vector<int64_t> written, rejected;
    nlohmann::json config;
    bool gzip = false;
    bool finish = true;
    int64_t shard_bytes = 1;
  };

  // One document per shard (shard_bytes 1, unless the spec says otherwise), so shards
  // can be damaged one at a time.
  static void WriteHost(const std::string& dir, const HostSpec& spec) {
    ShardWriterOptions options;
    options.dir = dir;
    options.shard_bytes = spec.shard_bytes;
    options.gzip = spec.gzip;
    options.dtype = OutputDtype::kBF16;
    options.sites = kSites;
    options.tensor_metadata = {{"model", "test"}};
    options.run_config = spec.config;
    auto writer = ShardWriter::Open(options);
    ASSERT_TRUE(writer.has_value()) << writer.error();
    // Chunks of one document each, in doc id order as a replica lists them; a rejected
    // document's chunk ends without it.
    std::set<int64_t> rejected(spec.rejected.begin(), spec.rejected.end());
    std::set<int64_t> all(spec.written.begin(), spec.written.end());
    all.insert(rejected.begin(), rejected.end());
    for (int64_t doc_id : all) {
      const bool written =
          std::find(spec.written.begin(), spec.written.end(), doc_id) != spec.written.end();
      auto added = written ? AddWhole(**writer, MakeDocument(doc_id, 2 + doc_id % 3, kSites))
                           : (*writer)->EndChunk(doc_id, 1);
      ASSERT_TRUE(added.has_value()) << added.error();
    }
    if (spec.finish) {
      ASSERT_TRUE((*writer)->Finish().has_value());
    }
    auto rejects = RejectsLog::Open(dir + "/rejects.jsonl");
    ASSERT_TRUE(rejects.has_value()) << rejects.error();
    for (int64_t doc_id : spec.rejected) {
      ASSERT_TRUE((*rejects)->Add(doc_id, "corpus.jsonl", doc_id + 1, "blank line").has_value());
    }
  }

  static VerifyOptions Options(const std::string& out_dir, std::vector<std::string> data = {},
                               FolderRoleRule role = nullptr) {
    VerifyOptions options;
    options.out_dir = out_dir;
    options.data = std::move(data);
    options.role = std::move(role);
    return options;
  }

  static nlohmann::json Config(const std::string& corpus, int host, int hosts) {
    return {{"data", {corpus}}, {"max_docs", -1}, {"host_id", host}, {"num_hosts", hosts}};
  }
};

// Corpus of 10 documents; host_00 writes the even ones (4 rejected), host_01 the
// odd ones gzip'd (7 rejected): 8 shards.
class TwoHosts : public VerifyTest {
 protected:
  void SetUp() override {
    corpus_ = WriteCorpus(dir_, 10);
    WriteHost(Host(0), {{0, 2, 6, 8}, {4}, Config(corpus_, 0, 2)});
    WriteHost(Host(1), {{1, 3, 5, 9}, {7}, Config(corpus_, 1, 2), /*gzip=*/true});
  }
  std::string Out() const { return dir_.File("out"); }
  std::string Host(int host) const { return Out() + "/" + HostName(host); }
  VerifyReport Verify(bool allow_incomplete = false) const {
    VerifyOptions options;
    options.out_dir = Out();
    options.allow_incomplete = allow_incomplete;
    options.role = ReplicaRole;
    auto report = VerifyOutput(options);
    EXPECT_TRUE(report.has_value()) << report.error();
    return report.value_or(VerifyReport{});
  }
  // The file and problem of every fault, for matchers.
  static std::vector<std::string> Faults(const VerifyReport& report) {
    std::vector<std::string> faults;
    for (const auto& fault : report.faults) faults.push_back(fault.file + ": " + fault.problem);
    return faults;
  }

  TempDir dir_;
  std::string corpus_;
};

// host_00 of TwoHosts rewritten as two shards: {0, 2, 6} (doc ids 0..6, around the
// rejected 4) and {8}. Shards of deleted local copies are recorded in uploads.jsonl
// as --delete-after-upload does: uploaded first, then deleted.
class UploadedShards : public TwoHosts {
 protected:
  void SetUp() override {
    TwoHosts::SetUp();
    std::filesystem::remove_all(Host(0));
    // 24 bytes a token (BF16 site of width 4 + token, doc id, position): documents
    // 0, 2, 6 of 2, 4, 2 tokens reach 192 >= 190 bytes and close the first shard.
    WriteHost(Host(0), {{0, 2, 6, 8}, {4}, Config(corpus_, 0, 2), false, true, 190});
    const nlohmann::json shards = ReadJson(Host(0) + "/metadata.json")["shards"];
    ASSERT_EQ(shards.size(), 2u);
    ASSERT_EQ(shards[0]["first_doc_id"], 0);
    ASSERT_EQ(shards[0]["last_doc_id"], 6);
    ASSERT_EQ(shards[0]["docs"], 3);
  }
  // Records listed shard `index` of `host` as uploaded (with `crc32`, or the listed
  // one when empty) and, when `deleted`, deletes it.
  void Upload(int host, size_t index, bool deleted = true, const std::string& crc32 = "") {
    const nlohmann::json shard = ReadJson(Host(host) + "/metadata.json")["shards"][index];
    const std::string file = shard["file"].get<std::string>();
    auto ledger = UploadLedger::Open(Host(host));
    ASSERT_TRUE(ledger.has_value()) << ledger.error();
    const UploadRecord record{file, shard["bytes"].get<int64_t>(),
                              crc32.empty() ? shard["crc32"].get<std::string>() : crc32, deleted,
                              1795000000.0};
    ASSERT_TRUE((*ledger)->Append(record).has_value());
    if (deleted) {
      ASSERT_TRUE(std::filesystem::remove(Host(host) + "/" + file));
    }
  }
};

}  // namespace actex::verify_test

#endif  // ACTEX_TESTS_STORAGE_OUTPUT_VERIFIER_TEST_UTIL_H_
