// VerifyOutput on host folders written by ShardWriter, clean and then damaged one
// way at a time: every fault must be found, named by its file, and nothing else.
#include "storage/output_verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>

#include "storage/crc32.h"
#include "storage/host_folder_files.h"
#include "storage/rejects_log.h"
#include "storage/safetensors.h"
#include "storage/shard_writer.h"
#include "storage/upload_ledger.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<StoredSite> kSites = {{"blocks.0.hook_resid_post", 4}};

std::string HostName(int host) { return "host_0" + std::to_string(host); }

// Like a mesh of one machine with `num_hosts` replicas: host h holds the documents
// with doc_id % num_hosts == h.
std::expected<FolderRole, std::string> ReplicaRole(const nlohmann::json& config) {
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
std::expected<FolderRole, std::string> MachineRole(const nlohmann::json& config) {
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

std::string WriteCorpus(const TempDir& dir, int lines, bool gzip = false) {
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
void WriteHost(const std::string& dir, const HostSpec& spec) {
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

VerifyOptions Options(const std::string& out_dir, std::vector<std::string> data = {},
                      FolderRoleRule role = nullptr) {
  VerifyOptions options;
  options.out_dir = out_dir;
  options.data = std::move(data);
  options.role = std::move(role);
  return options;
}

nlohmann::json Config(const std::string& corpus, int host, int hosts) {
  return {{"data", {corpus}}, {"max_docs", -1}, {"host_id", host}, {"num_hosts", hosts}};
}

// Corpus of 10 documents; host_00 writes the even ones (4 rejected), host_01 the
// odd ones gzip'd (7 rejected): 8 shards.
class TwoHosts : public testing::Test {
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

TEST_F(TwoHosts, CleanOutputVerifiesWithItsSummary) {
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  EXPECT_THAT(report.warnings, IsEmpty());
  const int64_t bytes = ReadJson(Host(0) + "/metadata.json")["totals"]["bytes"].get<int64_t>() +
                        ReadJson(Host(1) + "/metadata.json")["totals"]["bytes"].get<int64_t>();
  EXPECT_EQ(report.Summary(),
            "verified 10 documents: 8 written, 2 rejected, 0 missing, "
            "0 duplicated; 8 shards, " +
                std::to_string(bytes) + " bytes");
  ASSERT_EQ(report.folders.size(), 2u);
  EXPECT_EQ(report.folders[1].label, "host_01");
  EXPECT_EQ(report.folders[1].rejected, 1);
}

// host_00 lists chunk 4 (one document, rejected): without its reject line the chunk
// is listed but not whole.
TEST_F(TwoHosts, AListedChunkMissingADocumentIsNotWhole) {
  WriteBytes(Host(0) + "/rejects.jsonl", "");
  EXPECT_THAT(Faults(Verify()),
              ElementsAre("host_00/metadata.json: 1 listed chunks are not whole (chunk 4 lists 1 "
                          "documents, the shards and rejects.jsonl hold 0)",
                          HasSubstr("1 documents missing")));
}

// A run that stopped after logging a reject but before listing its chunk: the line
// is a leftover, warned about and not counted (a resume removes it).
TEST_F(TwoHosts, ARejectOfAnUnlistedChunkIsALeftoverNotADocument) {
  nlohmann::json metadata = ReadJson(Host(0) + "/metadata.json");
  for (auto& shard : metadata["shards"]) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& chunk : shard["chunks"]) {
      if (chunk[0] != 4) kept.push_back(chunk);
    }
    shard["chunks"] = kept;
  }
  WriteJson(Host(0) + "/metadata.json", metadata);
  VerifyReport report = Verify(/*allow_incomplete=*/true);
  EXPECT_THAT(Faults(report), ElementsAre(HasSubstr("1 documents missing")));
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].file, "host_00/rejects.jsonl");
  EXPECT_THAT(report.warnings[0].problem, HasSubstr("1 rejects of chunks no shard lists"));
  EXPECT_EQ(report.folders[0].rejected, 0);
}

TEST_F(TwoHosts, AShardHoldingADocumentOfAChunkItDoesNotListIsAFault) {
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  metadata["shards"][0]["chunks"] = nlohmann::json::parse("[[3, 1]]");  // it holds document 1
  WriteJson(Host(1) + "/metadata.json", metadata);
  EXPECT_THAT(Faults(Verify()),
              testing::Contains("host_01/shard_000001.safetensors.gz: holds document 1 of chunk "
                                "1, which its listing does not name"));
}

TEST_F(TwoHosts, FlippedActivationByteIsACrcFaultOfThatShardOnly) {
  const std::string shard = Host(0) + "/shard_000002.safetensors";
  std::string bytes = ReadBytes(shard);
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  bytes[8 + header + 1] ^= 0x40;  // inside the first site tensor
  WriteBytes(shard, bytes);
  EXPECT_THAT(Faults(Verify()),
              ElementsAre(AllOf(HasSubstr("host_00/shard_000002.safetensors: crc32 is "),
                                HasSubstr("metadata.json lists"))));
}

TEST_F(TwoHosts, FlippedByteOfAGzipShardIsFound) {
  const std::string shard = Host(1) + "/shard_000003.safetensors.gz";
  std::string bytes = ReadBytes(shard);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteBytes(shard, bytes);
  EXPECT_THAT(Faults(Verify()),
              testing::Contains(HasSubstr("host_01/shard_000003.safetensors.gz: crc32 is ")));
}

TEST_F(TwoHosts, TruncatedShardIsASizeFault) {
  for (const std::string& shard :
       {Host(0) + "/shard_000001.safetensors", Host(1) + "/shard_000001.safetensors.gz"}) {
    fs::resize_file(shard, fs::file_size(shard) / 2);
  }
  auto faults = Faults(Verify());
  EXPECT_THAT(faults, testing::Contains(AllOf(HasSubstr("host_00/shard_000001.safetensors: is "),
                                              HasSubstr("(truncated or overwritten)"))));
  EXPECT_THAT(faults, testing::Contains(HasSubstr("host_01/shard_000001.safetensors.gz: is ")));
  EXPECT_THAT(
      faults,
      testing::Contains(HasSubstr("host_01/shard_000001.safetensors.gz: gzip stream ends early")));
}

TEST_F(TwoHosts, DeletedShardIsReportedAndItsDocumentMissing) {
  fs::remove(Host(0) + "/shard_000003.safetensors");  // document 6
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre("host_00/shard_000003.safetensors: listed in metadata.json but missing",
                          HasSubstr("1 documents missing (neither written nor in a "
                                    "rejects.jsonl): 6")));
  EXPECT_EQ(report.coverage.missing, 1);
}

TEST_F(TwoHosts, TamperedHeaderIsReportedEvenWithAMatchingChecksum) {
  const std::string shard = Host(0) + "/shard_000001.safetensors";
  std::string bytes = ReadBytes(shard);
  const size_t at = bytes.find("hook_resid_post");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 15, "hook_resid_pre_");  // same length: the header still parses
  WriteBytes(shard, bytes);
  nlohmann::json metadata = ReadJson(Host(0) + "/metadata.json");
  char crc[9];
  std::snprintf(crc, sizeof(crc), "%08x", Crc32Of(bytes));
  metadata["shards"][0]["crc32"] = crc;
  WriteJson(Host(0) + "/metadata.json", metadata);
  EXPECT_THAT(Faults(Verify()),
              ElementsAre("host_00/shard_000001.safetensors: has no tensor "
                          "\"blocks.0.hook_resid_post\"",
                          "host_00/shard_000001.safetensors: holds unexpected tensor "
                          "\"blocks.0.hook_resid_pre_\""));
}

TEST_F(TwoHosts, ListingThatDoesNotMatchTheShardsDocIdsIsAFault) {
  nlohmann::json metadata = ReadJson(Host(0) + "/metadata.json");
  metadata["shards"][1]["first_doc_id"] = 3;  // the shard holds document 2
  metadata["shards"][1]["last_doc_id"] = 3;
  WriteJson(Host(0) + "/metadata.json", metadata);
  EXPECT_THAT(Faults(Verify()), ElementsAre("host_00/shard_000002.safetensors: holds documents "
                                            "2..2, metadata.json lists 3..3"));
}

TEST_F(TwoHosts, DocumentWhoseShardAndListingAreGoneIsMissing) {
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  const nlohmann::json entry = metadata["shards"][1];  // document 3
  metadata["shards"].erase(1);
  for (const char* key : {"docs", "tokens", "bytes"}) {
    metadata["totals"][key] = metadata["totals"][key].get<int64_t>() - entry[key].get<int64_t>();
  }
  metadata["totals"]["shards"] = 3;
  WriteJson(Host(1) + "/metadata.json", metadata);
  fs::remove(Host(1) + "/" + entry["file"].get<std::string>());
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), ElementsAre(HasSubstr("1 documents missing")));
  EXPECT_EQ(report.missing_ids.size(), 1u);
  EXPECT_TRUE(report.missing_ids.contains(3));
  EXPECT_THAT(report.Summary(), HasSubstr("verified 10 documents: 7 written, 2 rejected, "
                                          "1 missing, 0 duplicated; 7 shards"));
}

TEST_F(TwoHosts, UnlistedLeftoversAreWarningsNotFaults) {
  fs::copy_file(Host(0) + "/shard_000004.safetensors", Host(0) + "/shard_000005.safetensors");
  WriteBytes(Host(0) + "/shard_000006.safetensors.tmp", "partial");
  WriteBytes(Host(1) + "/metadata.json.tmp", "{");
  WriteBytes(Host(1) + "/" + SpillFileName(7, 1), "rows");  // a killed writer's
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 4u);
  EXPECT_EQ(report.warnings[0].file, "host_00/shard_000005.safetensors");
  EXPECT_THAT(report.warnings[0].problem, HasSubstr("not listed in metadata.json"));
  EXPECT_EQ(report.warnings[1].file, "host_00/shard_000006.safetensors.tmp");
  EXPECT_EQ(report.warnings[2].file, "host_01/.shard_7.spill.1");
  EXPECT_THAT(report.warnings[2].problem, HasSubstr("temporary file of an interrupted write"));
  EXPECT_EQ(report.warnings[3].file, "host_01/metadata.json.tmp");
}

// A leased job with a standby leaves host 0's lease log and the standby's copy of it
// beside the shards: actex's own files, unlike a stranger's.
TEST_F(TwoHosts, TheLeaseLogAndTheStandbysCopyAreActexsOwnFiles) {
  WriteBytes(Host(0) + "/" + kLeaseLogFile, "actex-leases 1 chunk_docs 2\n");
  WriteBytes(Host(1) + "/" + kStandbyLeaseLogFile, "actex-leases 1 chunk_docs 2\n");
  WriteBytes(Host(1) + "/notes.txt", "mine");
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].file, "host_01/notes.txt");
  EXPECT_EQ(report.warnings[0].problem, "file not written by actex");
}

TEST_F(TwoHosts, MissingHostFolderIsReported) {
  fs::remove_all(Host(1));
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre(HasSubstr("host_01: is missing"), HasSubstr("5 documents missing")));
  EXPECT_EQ(report.missing_ids.size(), 5u);
  EXPECT_TRUE(report.missing_ids.contains(7));
}

TEST_F(TwoHosts, DocumentInAnotherHostsShareIsUnexpected) {
  fs::remove_all(Host(1));
  // host_01 holding what host_00 wrote: both claim the even documents.
  fs::copy(Host(0), Host(1), fs::copy_options::recursive);
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  metadata["config"]["host_id"] = 1;
  WriteJson(Host(1) + "/metadata.json", metadata);
  VerifyReport report = Verify();
  EXPECT_EQ(report.coverage.duplicated, 5);  // 0 2 4 6 8, each in both folders
  EXPECT_EQ(report.coverage.missing, 5);     // 1 3 5 7 9: host_01's own share
  EXPECT_EQ(report.unexpected, 5);
  EXPECT_THAT(report.unexpected_ids.at(2),
              ElementsAre("host_01/shard_000002.safetensors: not this folder's share of the "
                          "corpus"));
}

TEST_F(TwoHosts, IncompleteRunIsAFaultUnlessAllowed) {
  fs::remove_all(Host(1));
  WriteHost(Host(1), {{1, 3}, {}, Config(corpus_, 1, 2), /*gzip=*/false, /*finish=*/false});
  EXPECT_THAT(Faults(Verify()),
              ElementsAre(HasSubstr("host_01: did not finish"), HasSubstr("3 documents missing")));
  VerifyReport allowed = Verify(/*allow_incomplete=*/true);
  EXPECT_THAT(Faults(allowed), IsEmpty());
  EXPECT_EQ(allowed.coverage.pending, 3);
  EXPECT_THAT(allowed.Summary(), HasSubstr("10 documents: 6 written, 1 rejected, 3 not yet "
                                           "written, 0 missing, 0 duplicated"));
}

// A shard written by hand: document 3 in two runs, positions not counting from 0.
TEST_F(TwoHosts, SplitDocumentAndBadPositionsAreFaults) {
  const std::vector<int64_t> doc_ids = {3, 3, 5, 3};
  const std::vector<int32_t> positions = {0, 2, 0, 0};
  auto copy = [](const void* data, size_t size) {
    return [data, size](std::span<uint8_t> out) { std::memcpy(out.data(), data, size); };
  };
  const std::vector<int32_t> token_ids(4, 1);
  std::vector<uint16_t> bf16(16, 0x3f00);
  const std::string shard = Host(1) + "/shard_000005.safetensors";
  ASSERT_TRUE(WriteSafetensors(shard,
                               {{"blocks.0.hook_resid_post", "BF16", {4, 4}, copy(bf16.data(), 32)},
                                {"token_ids", "I32", {4}, copy(token_ids.data(), 16)},
                                {"doc_ids", "I64", {4}, copy(doc_ids.data(), 32)},
                                {"positions", "I32", {4}, copy(positions.data(), 16)}},
                               {{"format", "pt"}})
                  .has_value());
  const std::string bytes = ReadBytes(shard);
  char crc[9];
  std::snprintf(crc, sizeof(crc), "%08x", Crc32Of(bytes));
  nlohmann::json metadata = ReadJson(Host(1) + "/metadata.json");
  const auto size = static_cast<int64_t>(bytes.size());
  metadata["shards"].push_back({{"file", "shard_000005.safetensors"},
                                {"first_doc_id", 11},
                                {"last_doc_id", 13},
                                {"docs", 2},
                                {"tokens", 4},
                                {"bytes", size},
                                {"crc32", crc}});
  for (auto [key, add] : {std::pair{"docs", 2}, {"tokens", 4}, {"shards", 1}}) {
    metadata["totals"][key] = metadata["totals"][key].get<int64_t>() + add;
  }
  metadata["totals"]["bytes"] = metadata["totals"]["bytes"].get<int64_t>() + size;
  WriteJson(Host(1) + "/metadata.json", metadata);
  EXPECT_THAT(
      Faults(Verify()),
      ElementsAre(
          HasSubstr("host_01/shard_000005.safetensors: document 3: token 1 has position 2, "
                    "expected 1"),
          "host_01/shard_000005.safetensors: doc ids go back from 5 to 3 at token 3: documents "
          "must be whole and in increasing order",
          "host_01/shard_000005.safetensors: holds 3 documents, metadata.json lists 2",
          "host_01/shard_000005.safetensors: holds documents 3..3, metadata.json lists 11..13",
          HasSubstr("2 documents duplicated (written or rejected more than once): 3 "
                    "(host_01/shard_000002.safetensors.gz, host_01/shard_000005.safetensors), "
                    "5 (host_01/shard_000003.safetensors.gz, host_01/shard_000005.safetensors)")));
}

TEST(OutputVerifier, DuplicatedDocumentsAreListedWithWhereTheyAre) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 4);
  const nlohmann::json config = {{"data", {corpus}}, {"max_docs", -1}};
  WriteHost(dir.File("out/host_00"), {{0, 1}, {2, 3}, config});
  // A second folder holding a copy of the first one's listing and shards.
  fs::copy(dir.File("out/host_00"), dir.File("out/host_01"), fs::copy_options::recursive);
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_EQ(report->coverage.duplicated, 4);
  EXPECT_THAT(report->duplicated_ids.at(0),
              ElementsAre("host_00/shard_000001.safetensors", "host_01/shard_000001.safetensors"));
  EXPECT_THAT(report->duplicated_ids.at(3),
              ElementsAre("host_00/rejects.jsonl", "host_01/rejects.jsonl"));
  EXPECT_THAT(report->Summary(), HasSubstr("verified 4 documents: 0 written, 0 rejected, "
                                           "0 missing, 4 duplicated"));
}

TEST(OutputVerifier, WrittenAndRejectedIsADuplicate) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 3);
  WriteHost(dir.File("out/host_00"), {{0, 1, 2}, {1}, {{"data", {corpus}}, {"max_docs", -1}}});
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_EQ(report->coverage.duplicated, 1);
  EXPECT_THAT(report->duplicated_ids.at(1),
              ElementsAre("host_00/shard_000002.safetensors", "host_00/rejects.jsonl"));
}

TEST(OutputVerifier, GzipCorpusIsCountedAndMaxDocsHonoured) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 10, /*gzip=*/true);
  const nlohmann::json config = {{"data", {corpus}}, {"max_docs", 6}};
  WriteHost(dir.File("out/host_00"), {{0, 1, 2, 3, 5}, {4}, config});
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_TRUE(report->clean()) << report->faults.front().problem;
  EXPECT_THAT(report->Summary(), HasSubstr("verified 6 documents: 5 written, 1 rejected"));
}

TEST(OutputVerifier, DocumentBeyondTheCorpusIsUnexpected) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 2);
  WriteHost(dir.File("out/host_00"), {{0, 1, 7}, {}, {{"data", {corpus}}, {"max_docs", -1}}});
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_EQ(report->unexpected, 1);
  EXPECT_THAT(report->unexpected_ids.at(7),
              ElementsAre("host_00/shard_000003.safetensors: beyond the corpus's 2 documents"));
}

TEST(OutputVerifier, MovedCorpusIsAFaultUntilGivenWithData) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 2);
  WriteHost(dir.File("out/host_00"), {{0, 1}, {}, {{"data", {corpus}}, {"max_docs", -1}}});
  fs::rename(corpus, dir.File("moved.jsonl"));
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  ASSERT_EQ(report->faults.size(), 1u);
  EXPECT_THAT(report->faults[0].problem,
              AllOf(HasSubstr("cannot read the corpus host_00/metadata.json names"),
                    HasSubstr("give its files with --data")));
  EXPECT_THAT(report->Summary(), HasSubstr("document coverage not checked"));
  report = VerifyOutput(Options(dir.File("out"), {dir.File("mov*.jsonl")}));
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_TRUE(report->clean());
  EXPECT_THAT(report->Summary(), HasSubstr("verified 2 documents: 2 written"));
}

TEST(OutputVerifier, EachMachineIsCheckedForItsOwnShareAndOneHostFolderAlone) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 7);
  auto config = [&](int machine) {
    return nlohmann::json{
        {"data", {corpus}}, {"max_docs", -1}, {"machine_id", machine}, {"total_machines", 2}};
  };
  WriteHost(dir.File("out/machine_000_host_00"), {{0, 2, 6}, {4}, config(0)});
  VerifyOptions options = Options(dir.File("out"), {}, MachineRole);
  auto report = VerifyOutput(options);
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_TRUE(report->clean()) << report->faults.front().problem;
  EXPECT_THAT(report->Summary(), HasSubstr("verified 4 documents: 3 written, 1 rejected"));
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_EQ(report->warnings[0].problem,
            "machine 1 has no folder here: its share of the corpus is not checked");

  WriteHost(dir.File("out/machine_001_host_00"), {{1, 3}, {}, config(1)});
  report = VerifyOutput(options);
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_THAT(report->Summary(), HasSubstr("verified 7 documents: 5 written, 1 rejected, "
                                           "1 missing"));
  EXPECT_TRUE(report->missing_ids.contains(5));
  EXPECT_THAT(report->warnings, IsEmpty());

  options.out_dir = dir.File("out/machine_001_host_00");  // a host folder alone
  report = VerifyOutput(options);
  ASSERT_TRUE(report.has_value()) << report.error();
  EXPECT_THAT(report->Summary(), HasSubstr("verified 3 documents: 2 written, 0 rejected, "
                                           "1 missing"));
}

TEST(OutputVerifier, MalformedMetadataAndRejectsAreFaults) {
  TempDir dir;
  const std::string corpus = WriteCorpus(dir, 2);
  WriteHost(dir.File("out/host_00"), {{0}, {1}, {{"data", {corpus}}, {"max_docs", -1}}});
  fs::create_directories(dir.File("out/host_01"));
  WriteBytes(dir.File("out/host_01/metadata.json"), "{\"format\": \"actex-activations\", ");
  std::string rejects = ReadBytes(dir.File("out/host_00/rejects.jsonl"));
  WriteBytes(dir.File("out/host_00/rejects.jsonl"), rejects + "{\"doc_id\": -1}\n");
  auto report = VerifyOutput(Options(dir.File("out")));
  ASSERT_TRUE(report.has_value()) << report.error();
  ASSERT_EQ(report->faults.size(), 2u);
  EXPECT_EQ(report->faults[0].file, "host_01/metadata.json");
  EXPECT_THAT(report->faults[0].problem, HasSubstr("is not valid JSON"));
  EXPECT_EQ(report->faults[1].file, "host_00/rejects.jsonl");
  EXPECT_EQ(report->faults[1].problem,
            "line 2 is not {\"doc_id\", \"file\", \"line\", \"reason\"}");
}

TEST(OutputVerifier, FolderWithoutHostFoldersCannotBeVerified) {
  TempDir dir;
  auto report = VerifyOutput(Options(dir.path()));
  ASSERT_FALSE(report.has_value());
  EXPECT_THAT(report.error(), HasSubstr("holds no host folder with a metadata.json"));
  report = VerifyOutput(Options(dir.File("absent")));
  ASSERT_FALSE(report.has_value());
  EXPECT_THAT(report.error(), HasSubstr("is not a directory"));
}

// host_00 of TwoHosts rewritten as two shards: {0, 2, 6} (doc ids 0..6, around the
// rejected 4) and {8}. Shards of deleted local copies are recorded in uploads.jsonl
// as --delete-after-upload does: uploaded first, then deleted.
class UploadedShards : public TwoHosts {
 protected:
  void SetUp() override {
    TwoHosts::SetUp();
    fs::remove_all(Host(0));
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
      ASSERT_TRUE(fs::remove(Host(host) + "/" + file));
    }
  }
};

TEST_F(UploadedShards, DeletedShardsAreNotesAndTheirDocumentsAreInferred) {
  const std::string metadata = ReadBytes(Host(0) + "/metadata.json");
  auto ledger = UploadLedger::Open(Host(0));
  ASSERT_TRUE(ledger.has_value());
  ASSERT_TRUE((*ledger)
                  ->Append({"metadata.json", static_cast<int64_t>(metadata.size()),
                            Crc32Hex(metadata), false, 1.0})
                  .has_value());
  ledger->reset();
  Upload(0, 0);                     // documents 0, 2, 6 around the rejected 4
  Upload(0, 1, /*deleted=*/false);  // uploaded and kept: checked as usual
  Upload(1, 1);                     // gzip'd, document 3
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_EQ(report.warnings[0].file, "host_00/shard_000001.safetensors");
  EXPECT_THAT(report.warnings[0].problem,
              HasSubstr("uploaded and deleted locally (uploads.jsonl): its contents were not "
                        "re-read here; verify the uploaded copy ("));
  EXPECT_EQ(report.warnings[1].file, "host_01/shard_000002.safetensors.gz");
  ASSERT_EQ(report.folders.size(), 2u);
  EXPECT_EQ(report.folders[0].uploaded_deleted, 1);
  EXPECT_EQ(report.folders[1].uploaded_deleted, 1);
  EXPECT_EQ(report.coverage.written, 8);
  EXPECT_EQ(report.coverage.rejected, 2);
  EXPECT_EQ(report.coverage.missing, 0);
  EXPECT_THAT(report.Summary(),
              AllOf(HasSubstr("verified 10 documents: 8 written, 2 rejected, 0 missing"),
                    HasSubstr("(2 shards uploaded and deleted locally, not re-read)")));
}

TEST_F(UploadedShards, MissingShardTheLedgerDoesNotVouchForIsAFault) {
  struct Case {
    const char* what;
    bool deleted;
    std::string crc32;
    std::string problem;
  };
  for (const Case& c :
       {Case{"another crc32", true, "00000000", "records an upload of other contents ("},
        Case{"not deleted", false, "", "records it uploaded but not deleted"}}) {
    SCOPED_TRACE(c.what);
    fs::remove_all(Out());  // a fresh output for each case
    SetUp();
    Upload(0, 0, c.deleted, c.crc32);
    if (!c.deleted) fs::remove(Host(0) + "/shard_000001.safetensors");
    VerifyReport report = Verify();
    EXPECT_THAT(Faults(report),
                ElementsAre(AllOf(HasSubstr("host_00/shard_000001.safetensors: listed in "
                                            "metadata.json but missing; uploads.jsonl "),
                                  HasSubstr(c.problem)),
                            HasSubstr("3 documents missing")));
    EXPECT_EQ(report.folders[0].uploaded_deleted, 0);
  }
  fs::remove_all(Out());
  SetUp();
  Upload(0, 1, /*deleted=*/false);
  fs::remove(Host(0) + "/shard_000001.safetensors");
  EXPECT_THAT(Faults(Verify()),
              ElementsAre("host_00/shard_000001.safetensors: listed in metadata.json but "
                          "missing; uploads.jsonl has no record of uploading it",
                          HasSubstr("3 documents missing")));
}

TEST_F(UploadedShards, InferredDocumentCountOtherThanListedIsAFault) {
  Upload(0, 0);
  WriteBytes(Host(0) + "/rejects.jsonl", "");  // document 4 no longer rejected
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre("host_00/shard_000001.safetensors: uploaded and deleted locally: "
                          "inferred 4 documents from its doc ids 0..6 (its chunks, less "
                          "its rejects.jsonl), metadata.json lists 3; none of them is counted "
                          "as written",
                          HasSubstr("4 documents missing (neither written nor in a "
                                    "rejects.jsonl): 0, 2, 4, 6")));
}

TEST_F(UploadedShards, PresentShardIsCheckedEvenIfTheLedgerSaysDeleted) {
  const std::string shard = Host(0) + "/shard_000002.safetensors";
  const std::string kept = ReadBytes(shard);
  Upload(0, 1);
  std::string damaged = kept;
  uint64_t header = 0;
  std::memcpy(&header, damaged.data(), 8);
  damaged[8 + header + 1] ^= 0x40;  // inside the site tensor
  WriteBytes(shard, damaged);       // a damaged copy back in place of the uploaded one
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre(HasSubstr("host_00/shard_000002.safetensors: crc32 is ")));
  EXPECT_EQ(report.folders[0].uploaded_deleted, 0);
}

TEST_F(UploadedShards, MalformedLedgerLineIsAFaultAndExcusesNothing) {
  Upload(0, 0);
  const std::string ledger = ReadBytes(Host(0) + "/uploads.jsonl");
  WriteBytes(Host(0) + "/uploads.jsonl", "{\"file\": 1}\n" + ledger + "{\"file\":\"sha");
  VerifyReport report = Verify();
  EXPECT_THAT(Faults(report),
              ElementsAre(HasSubstr("host_00/uploads.jsonl: line 1 is not an upload record"),
                          "host_00/shard_000001.safetensors: listed in metadata.json but "
                          "missing; uploads.jsonl, which could tell whether it was uploaded, "
                          "is damaged",
                          HasSubstr("3 documents missing")));
  // Only the torn last line: ignored, as an append cut short by a crash.
  WriteBytes(Host(0) + "/uploads.jsonl", ledger + "{\"file\":\"sha");
  report = Verify();
  EXPECT_THAT(Faults(report), IsEmpty());
  EXPECT_THAT(report.warnings, ElementsAre(testing::Field(&VerifyFinding::file,
                                                          "host_00/shard_000001.safetensors")));
}

}  // namespace
}  // namespace actex
