#include "storage/shuffled_output.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/json_field.h"
#include "storage/safetensors.h"
#include "storage/shuffle_rows.h"

namespace actex {
namespace {

using nlohmann::json;

constexpr size_t kFaultsPerClass = 10;
constexpr uint8_t kUnseen = 0, kSeen = 1, kSkipped = 2;

// One document's rows in the source numbering.
struct DocumentRows {
  int64_t doc_id = 0, first_row = 0, tokens = 0;
  bool operator<(const DocumentRows& other) const { return doc_id < other.doc_id; }
};

uint64_t RowHash(const uint8_t* record, int64_t bytes) {
  static const unsigned char kKey[crypto_shorthash_KEYBYTES] = {'a', 'c', 't', 'e', 'x'};
  uint64_t hash;
  crypto_shorthash(reinterpret_cast<unsigned char*>(&hash), record,
                   static_cast<unsigned long long>(bytes), kKey);
  return hash;
}

// Faults of one kind: the first few spelled out, the rest counted.
class FaultClass {
 public:
  explicit FaultClass(std::string what) : what_(std::move(what)) {}
  void Add(const std::string& where) {
    if (examples_.size() < kFaultsPerClass) examples_.push_back(where);
    ++count_;
  }
  void Report(std::vector<std::string>* faults) const {
    if (count_ == 0) return;
    std::string line = std::to_string(count_) + " " + what_ + ": ";
    for (size_t i = 0; i < examples_.size(); ++i) line += (i ? ", " : "") + examples_[i];
    if (count_ > static_cast<int64_t>(examples_.size())) line += ", ...";
    faults->push_back(line);
  }

 private:
  std::string what_;
  std::vector<std::string> examples_;
  int64_t count_ = 0;
};

std::string RowName(int64_t doc_id, int64_t position) {
  return "doc " + std::to_string(doc_id) + " position " + std::to_string(position);
}

}  // namespace

std::string ShuffledFileName(int64_t index) {
  char name[48];
  std::snprintf(name, sizeof(name), "shuffled_%06lld.safetensors",
                static_cast<long long>(index + 1));
  return name;
}

std::string DtypeName(const std::string& dtype) {
  if (dtype == "F32") return "float32";
  if (dtype == "F16") return "float16";
  if (dtype == "BF16") return "bfloat16";
  return "";
}

std::string DtypeFromName(const std::string& name) {
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    if (DtypeName(dtype) == name) return dtype;
  }
  return "";
}

std::expected<std::pair<int64_t, uint32_t>, std::string> FileCrc32(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::unexpected(OsError("cannot open", path, errno));
  std::vector<uint8_t> chunk(size_t{1} << 20);
  int64_t total = 0;
  uint32_t crc = 0;
  for (;;) {
    const ssize_t got = ::read(fd.get(), chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::unexpected(OsError("cannot read", path, errno));
    if (got == 0) return std::make_pair(total, crc);
    crc = Crc32Update(crc, chunk.data(), static_cast<size_t>(got));
    total += got;
  }
}

bool IsShuffledOutput(const std::string& dir) {
  auto text = ReadWholeFile(dir + "/metadata.json");
  if (!text) return false;
  const json metadata = json::parse(*text, nullptr, false);
  return JsonStringField(metadata, {}, "format").value_or("") == kShuffledFormat;
}

std::string ShuffledCheck::Summary() const {
  return "verified " + std::to_string(rows) + " rows in " + std::to_string(files) + " files (" +
         std::to_string(bytes) + " bytes) against " + std::to_string(source_rows) +
         " source rows (" + std::to_string(skipped) + " skipped tokens): " +
         (faults.empty() ? "every kept row exactly once, values equal"
                         : std::to_string(faults.size()) + " faults");
}

std::expected<ShuffledCheck, std::string> VerifyShuffled(const std::string& dir,
                                                         const std::string& source_dir) {
  if (sodium_init() < 0) return std::unexpected(std::string("libsodium cannot start"));
  auto text = ReadWholeFile(dir + "/metadata.json");
  if (!text) return std::unexpected(text.error());
  const json metadata = json::parse(*text, nullptr, false);
  ShuffledCheck check;
  auto& faults = check.faults;
  if (JsonStringField(metadata, {}, "format").value_or("") != kShuffledFormat ||
      JsonIntField(metadata, {}, "version").value_or(0) != 1) {
    faults.push_back("metadata.json is not a version 1 actex shuffle's");
    return check;
  }
  try {
    const json& parameters = metadata.at("parameters");
    if (!metadata.at("complete").get<bool>()) {
      faults.push_back("metadata.json: the shuffle has not finished (\"complete\": false)");
    }
    const std::string source_path =
        source_dir.empty() ? metadata.at("source").get<std::string>() : source_dir;
    auto source = ReadSourceOutput(source_path);
    if (!source) return std::unexpected("the source: " + source.error());
    std::vector<std::string> site_names;
    for (const json& site : parameters.at("sites")) site_names.push_back(site.at("name"));
    auto layout = MakeRecordLayout(*source, site_names,
                                   DtypeFromName(parameters.at("dtype").get<std::string>()));
    if (!layout) return std::unexpected("the source: " + layout.error());
    json listed = json::array();
    for (const SourceShard& shard : source->shards) {
      listed.push_back({{"file", shard.file},
                        {"bytes", shard.bytes},
                        {"crc32", FormatCrc32(shard.crc32)},
                        {"tokens", shard.tokens}});
    }
    if (listed != parameters.at("source_shards")) {
      return std::unexpected(source_path +
                             " lists other shards than the shuffle read: it "
                             "changed since (give the source with --source)");
    }
    const auto skip_ids = parameters.at("skip_token_ids").get<std::set<int32_t>>();

    // The source rows: where each document's rows are, a hash and a state per row.
    std::vector<DocumentRows> documents;
    std::vector<uint64_t> hashes(static_cast<size_t>(source->tokens));
    std::vector<uint8_t> states(static_cast<size_t>(source->tokens), kUnseen);
    std::vector<uint8_t> records;
    int64_t row = 0;
    for (const SourceShard& shard : source->shards) {
      auto rows = SourceShardRows::Open(shard, *source, dir + "/.verify_inflated.tmp");
      if (!rows) return std::unexpected("the source: " + rows.error());
      const int64_t chunk = 4096;
      for (int64_t begin = 0; begin < shard.tokens; begin += chunk) {
        const int64_t count = std::min(chunk, shard.tokens - begin);
        records.resize(static_cast<size_t>(count * layout->record_bytes));
        if (auto read = (*rows)->Read(begin, count, *layout, records.data()); !read) {
          return std::unexpected("the source: " + read.error());
        }
        for (int64_t i = 0; i < count; ++i, ++row) {
          const uint8_t* record = records.data() + i * layout->record_bytes;
          const int64_t doc_id = layout->doc_id(record);
          if (documents.empty() || documents.back().doc_id != doc_id) {
            documents.push_back({doc_id, row, 0});
          }
          ++documents.back().tokens;
          hashes[row] = RowHash(record, layout->record_bytes);
          if (skip_ids.count(layout->token_id(record))) {
            states[row] = kSkipped;
            ++check.skipped;
          }
        }
      }
    }
    check.source_rows = row;
    std::sort(documents.begin(), documents.end());
    for (size_t i = 1; i < documents.size(); ++i) {
      if (documents[i].doc_id == documents[i - 1].doc_id) {
        return std::unexpected("the source holds doc " + std::to_string(documents[i].doc_id) +
                               " twice: run actex verify on it");
      }
    }

    // The shuffled rows, file by file.
    FaultClass foreign("rows that are no source row"), skipped("rows of skipped tokens"),
        duplicated("rows written more than once"),
        differing(
            "rows whose values differ from "
            "their source row"),
        missing("source rows missing");
    std::vector<uint8_t> record(static_cast<size_t>(layout->record_bytes));
    const int64_t rows_per_file = parameters.at("rows_per_file").get<int64_t>();
    const json& files = metadata.at("files");
    for (size_t f = 0; f < files.size(); ++f) {
      const std::string name = files[f].at("file");
      const int64_t listed_rows = files[f].at("rows");
      if (name != ShuffledFileName(static_cast<int64_t>(f)) || files[f].at("index") != f) {
        faults.push_back("metadata.json: files[" + std::to_string(f) + "] is " + name +
                         ", expected " + ShuffledFileName(static_cast<int64_t>(f)));
      }
      const std::string path = dir + "/" + name;
      auto crc = FileCrc32(path);
      if (!crc) {
        faults.push_back(name + ": " + crc.error());
        continue;
      }
      if (crc->first != files[f].at("bytes").get<int64_t>() ||
          FormatCrc32(crc->second) != files[f].at("crc32").get<std::string>()) {
        faults.push_back(name + ": " + std::to_string(crc->first) + " bytes with crc32 " +
                         FormatCrc32(crc->second) + ", not as metadata.json lists");
      }
      auto file = SafetensorsFile::Open(path);
      if (!file) {
        faults.push_back(file.error());
        continue;
      }
      // Each tensor with the record offset its rows go to.
      std::vector<std::pair<const SafetensorsTensor*, int64_t>> parts;
      std::vector<std::pair<std::string, std::string>> expected;  // (name, dtype)
      for (const auto& site : layout->sites) expected.emplace_back(site.first, layout->dtype);
      expected.insert(expected.end(),
                      {{"token_ids", "I32"}, {"doc_ids", "I64"}, {"positions", "I32"}});
      bool usable = true;
      for (size_t t = 0; t < expected.size(); ++t) {
        auto found = (*file)->tensors().find(expected[t].first);
        const int64_t width = t < layout->sites.size() ? layout->sites[t].second : 0;
        std::vector<int64_t> shape = {listed_rows};
        if (t < layout->sites.size()) shape.push_back(width);
        if (found == (*file)->tensors().end() || found->second.dtype != expected[t].second ||
            found->second.shape != shape) {
          faults.push_back(name + ": tensor " + expected[t].first + " is missing or not " +
                           expected[t].second + " of " + std::to_string(listed_rows) + " rows");
          usable = false;
          continue;
        }
        parts.emplace_back(&found->second, 0);
      }
      if (listed_rows != std::min(rows_per_file, metadata.at("rows").get<int64_t>() -
                                                     static_cast<int64_t>(f) * rows_per_file)) {
        faults.push_back(name + ": " + std::to_string(listed_rows) + " rows, not rows_per_file");
      }
      if (!usable) continue;
      ++check.files;
      check.bytes += crc->first;
      check.rows += listed_rows;
      for (int64_t r = 0; r < listed_rows; ++r) {
        int64_t at = 0;
        for (const auto& [tensor, unused] : parts) {
          const int64_t bytes = static_cast<int64_t>(tensor->bytes.size()) / listed_rows;
          std::memcpy(record.data() + at, tensor->bytes.data() + r * bytes,
                      static_cast<size_t>(bytes));
          at += bytes;
        }
        const int64_t doc_id = layout->doc_id(record.data());
        const int64_t position = layout->position(record.data());
        const std::string where = RowName(doc_id, position);
        auto doc = std::lower_bound(documents.begin(), documents.end(), DocumentRows{doc_id});
        if (doc == documents.end() || doc->doc_id != doc_id || position < 0 ||
            position >= doc->tokens) {
          foreign.Add(where + " (" + name + ")");
          continue;
        }
        const int64_t source_row = doc->first_row + position;
        uint8_t& state = states[source_row];
        if (state == kSkipped) {
          skipped.Add(where);
        } else if (state == kSeen) {
          duplicated.Add(where);
        } else {
          state = kSeen;
          if (RowHash(record.data(), layout->record_bytes) != hashes[source_row]) {
            differing.Add(where + " (" + name + ")");
          }
        }
      }
    }
    for (const DocumentRows& doc : documents) {
      for (int64_t p = 0; p < doc.tokens; ++p) {
        if (states[doc.first_row + p] == kUnseen) missing.Add(RowName(doc.doc_id, p));
      }
    }
    for (const FaultClass* kind : {&foreign, &skipped, &duplicated, &differing, &missing}) {
      kind->Report(&faults);
    }
    if (check.rows != metadata.at("rows").get<int64_t>() ||
        check.files != static_cast<int64_t>(files.size())) {
      faults.push_back("metadata.json: lists " + metadata.at("rows").dump() + " rows, " +
                       std::to_string(check.rows) + " found in readable files");
    }
  } catch (const json::exception& error) {
    // The shuffle's own listing is damaged: a fault of the output, not a reason the
    // check cannot run.
    faults.push_back("metadata.json is malformed: " + std::string(error.what()));
  }
  return check;
}

}  // namespace actex
