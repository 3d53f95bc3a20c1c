#ifndef ACTEX_TESTS_STORAGE_SHARD_WRITER_CHECKS_H_
#define ACTEX_TESTS_STORAGE_SHARD_WRITER_CHECKS_H_

// What the ShardWriter tests share: the writer they open, documents written with the
// check that every shard metadata.json lists is whole, and a disk that fills up.

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/safetensors.h"
#include "storage/shard_writer.h"
#include "tests/storage/shard_test_util.h"
#include "tests/support/test_files.h"

namespace actex::writer_test {

inline const std::vector<StoredSite> kWriterSites = {{"blocks.0.hook_resid_post", 8},
                                                     {"blocks.1.hook_mlp_out", 5}};

inline ShardWriterOptions Options(const std::string& dir) {
  ShardWriterOptions options;
  options.dir = dir;
  options.sites = kWriterSites;
  options.tensor_metadata = {{"model", "qwen2-tiny"}};
  options.run_config = {{"model", "qwen2-tiny"}, {"seq_len", 64}};
  return options;
}

inline ShardWriterOptions ChunksOf(int64_t chunk_docs, const std::string& dir) {
  ShardWriterOptions options = Options(dir);
  options.chunks = *ChunkRule::Of(chunk_docs);
  return options;
}

inline std::unique_ptr<ShardWriter> OpenOrDie(ShardWriterOptions options) {
  auto writer = ShardWriter::Open(std::move(options));
  EXPECT_TRUE(writer.has_value()) << writer.error();
  return writer.has_value() ? std::move(*writer) : nullptr;
}

template <typename T>
inline std::vector<T> Values(const SafetensorsTensor& tensor) {
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

// Every shard listed in metadata.json exists with the listed size and CRC-32 and
// holds exactly the listed documents, whole; returns the doc ids found, in order.
inline std::vector<int64_t> CheckListedShards(const std::string& dir) {
  const nlohmann::json metadata = ReadMetadata(dir);
  std::vector<int64_t> doc_order;
  for (const auto& shard : metadata["shards"]) {
    const std::string path = dir + "/" + shard["file"].get<std::string>();
    const std::string bytes = ReadBytes(path);
    EXPECT_EQ(static_cast<int64_t>(bytes.size()), shard["bytes"].get<int64_t>()) << path;
    char crc[9];
    std::snprintf(crc, sizeof(crc), "%08x", Crc32Of(bytes));
    EXPECT_EQ(shard["crc32"], crc) << path;
    std::string plain_path = path;
    if (path.ends_with(".gz")) {
      plain_path = path.substr(0, path.size() - 3) + ".check";
      WriteBytes(plain_path, Gunzip(path));
    }
    auto file = SafetensorsFile::Open(plain_path);
    EXPECT_TRUE(file.has_value()) << file.error();
    if (!file.has_value()) continue;
    const auto doc_ids = Values<int64_t>((*file)->tensors().at("doc_ids"));
    const auto positions = Values<int32_t>((*file)->tensors().at("positions"));
    EXPECT_EQ(static_cast<int64_t>(doc_ids.size()), shard["tokens"].get<int64_t>());
    std::vector<int64_t> docs;
    for (size_t i = 0; i < doc_ids.size(); ++i) {
      if (i == 0 || doc_ids[i] != doc_ids[i - 1]) {
        docs.push_back(doc_ids[i]);
        EXPECT_EQ(positions[i], 0) << "a document starts mid-way in " << path;
      } else {
        EXPECT_EQ(positions[i], positions[i - 1] + 1) << path;
      }
    }
    EXPECT_EQ(static_cast<int64_t>(docs.size()), shard["docs"].get<int64_t>());
    if (!docs.empty()) {
      EXPECT_EQ(docs.front(), shard["first_doc_id"].get<int64_t>());
      EXPECT_EQ(docs.back(), shard["last_doc_id"].get<int64_t>());
    }
    doc_order.insert(doc_order.end(), docs.begin(), docs.end());
    if (plain_path != path) std::filesystem::remove(plain_path);
  }
  return doc_order;
}

// Writes documents 0 to `documents` - 1 of `tokens` tokens, one chunk each; after every
// chunk end, what metadata.json lists is whole. Returns the first error ("" if none).
inline std::string WriteDocuments(const ShardWriterOptions& options, int documents,
                                  int tokens = 9) {
  auto writer = ShardWriter::Open(options);
  if (!writer) return writer.error();
  for (int64_t doc = 0; doc < documents; ++doc) {
    if (auto added = AddWhole(**writer, MakeDocument(doc, tokens, options.sites)); !added) {
      return added.error();
    }
    const std::vector<int64_t> listed = CheckListedShards(options.dir);
    for (size_t i = 0; i < listed.size(); ++i) EXPECT_EQ(listed[i], static_cast<int64_t>(i));
  }
  auto finished = (*writer)->Finish();
  return finished ? "" : finished.error();
}

// In a child process of a death test: mounts a tmpfs of `kilobytes` KiB at `dir` in a
// mount namespace of its own, or exits 2 saying why it could not.
inline void MountTmpfsOrExit(const std::string& dir, int kilobytes) {
  const std::string size = "size=" + std::to_string(kilobytes) + "k";
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", dir.c_str(), "tmpfs", 0, size.c_str()) != 0) {
    std::fprintf(stderr, "no tmpfs of %s at %s: %s\n", size.c_str(), dir.c_str(),
                 std::strerror(errno));
    std::_Exit(2);
  }
}

// After a failed write (`reason`: strerror's words) stopped the writer in `dir`: the
// error says so naming a file there, nothing half-written is left behind,
// metadata.json says the output is incomplete, and every shard it lists is whole.
inline void CheckStoppedBy(const std::string& reason, const std::string& dir,
                           const std::string& error) {
  EXPECT_NE(error.find(reason), std::string::npos) << error;
  EXPECT_NE(error.find(dir + "/"), std::string::npos) << error;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    EXPECT_FALSE(name.ends_with(".tmp")) << name << " left behind";
    EXPECT_EQ(name.find("spill"), std::string::npos) << name << " left behind";
  }
  EXPECT_FALSE(ReadMetadata(dir)["complete"].get<bool>());
  CheckListedShards(dir);
}

// The shards `dir` lists are those `reference` lists, byte for byte, with the same
// metadata.json; returns how many.
inline size_t ExpectSameShards(const std::string& dir, const std::string& reference) {
  const nlohmann::json metadata = ReadMetadata(dir);
  EXPECT_EQ(metadata, ReadMetadata(reference)) << "sizes, CRCs, chunks, statistics";
  for (const auto& shard : metadata["shards"]) {
    const std::string name = shard["file"];
    EXPECT_EQ(ReadBytes(dir + "/" + name), ReadBytes(reference + "/" + name)) << name;
  }
  return metadata["shards"].size();
}

// Runs fill(dir, kilobytes) in a death test's child for tmpfs sizes from `smallest` to
// `largest` KiB in `step`s, each in a fresh folder; the child must exit 0, or
// `counted` when it met the case under test. Returns how many met it.
template <typename Fill>
int CountFullDisks(Fill fill, int smallest, int largest, int step, int counted) {
  int met = 0;
  for (int kilobytes = smallest; kilobytes <= largest; kilobytes += step) {
    TempDir dir;
    const auto reported = [&met, counted](int status) {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      met += code == counted;
      return code == 0 || code == counted;
    };
    EXPECT_EXIT(fill(dir.path(), kilobytes), reported, "") << kilobytes << " KiB";
  }
  return met;
}

}  // namespace actex::writer_test

#endif  // ACTEX_TESTS_STORAGE_SHARD_WRITER_CHECKS_H_
