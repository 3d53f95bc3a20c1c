// VerifyShuffled reads as its list of checks: the metadata's format, the source the
// shuffle read, every source row once (storage/source_row_tally.h), every shuffled
// file against its listing and its rows against the source, then what no file held.

#include "storage/shuffled_verifier.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "base/whole_file.h"
#include "storage/crc32.h"
#include "storage/json_field.h"
#include "storage/safetensors.h"
#include "storage/shuffle_rows.h"
#include "storage/shuffled_output.h"
#include "storage/source_row_tally.h"

namespace actex {
namespace {

using nlohmann::json;

// The source output as the shuffle read it, and the records the shuffle made of it.
struct ShuffleSource {
  SourceOutput output;
  RecordLayout layout;
};

// One shuffled file whose listing, size and tensors were checked: its tensors in
// record order, each [rows] or [rows, width].
struct ShuffledFile {
  std::string name;
  int64_t rows = 0, bytes = 0;
  std::unique_ptr<SafetensorsFile> file;
  std::vector<const SafetensorsTensor*> parts;
};

// True when metadata.json is a version 1 actex shuffle's: nothing else is checked otherwise.
bool IsVersionOneShuffle(const json& metadata) {
  return JsonStringField(metadata, {}, "format").value_or("") == kShuffledFormat &&
         JsonIntField(metadata, {}, "version").value_or(0) == 1;
}

// The source the shuffle read (`source_dir`, or the folder metadata.json names) and the
// layout of its records in the shuffle's sites and dtype. Fails naming the source when
// it cannot be read or lists other shards than the shuffle read (it changed since).
// A field missing from metadata.json throws json::exception.
std::expected<ShuffleSource, std::string> OpenShuffleSource(const json& metadata,
                                                            const std::string& source_dir) {
  const json& parameters = metadata.at("parameters");
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
  return ShuffleSource{std::move(*source), std::move(*layout)};
}

// Checks files[`index`] of metadata.json against the file in `dir`: its name, size and
// crc32 as listed, the tensors of `layout` with the listed rows, and that only the last
// file holds fewer than `rows_per_file`. Returns the file when its rows can be read, else
// nothing; every fault found goes to `faults`. A field missing from metadata.json
// throws json::exception.
std::optional<ShuffledFile> OpenShuffledFile(const json& metadata, size_t index,
                                             int64_t rows_per_file, const std::string& dir,
                                             const RecordLayout& layout,
                                             std::vector<std::string>* faults) {
  const json& listing = metadata.at("files")[index];
  ShuffledFile shuffled;
  shuffled.name = listing.at("file");
  shuffled.rows = listing.at("rows");
  const std::string& name = shuffled.name;
  const std::string expected_name = ShuffledFileName(static_cast<int64_t>(index));
  if (name != expected_name || listing.at("index") != index) {
    faults->push_back("metadata.json: files[" + std::to_string(index) + "] is " + name +
                      ", expected " + expected_name);
  }
  const std::string path = dir + "/" + name;
  auto crc = FileCrc32(path);
  if (!crc) {
    faults->push_back(name + ": " + crc.error());
    return std::nullopt;
  }
  shuffled.bytes = crc->first;
  if (crc->first != listing.at("bytes").get<int64_t>() ||
      FormatCrc32(crc->second) != listing.at("crc32").get<std::string>()) {
    faults->push_back(name + ": " + std::to_string(crc->first) + " bytes with crc32 " +
                      FormatCrc32(crc->second) + ", not as metadata.json lists");
  }
  auto file = SafetensorsFile::Open(path);
  if (!file) {
    faults->push_back(file.error());
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> expected;  // (name, dtype), record order
  for (const StoredSite& site : layout.sites) {
    expected.emplace_back(site.name, site.Dtype(layout.dtype));
  }
  expected.insert(expected.end(), {{"token_ids", "I32"}, {"doc_ids", "I64"}, {"positions", "I32"}});
  bool usable = true;
  for (size_t t = 0; t < expected.size(); ++t) {
    auto found = (*file)->tensors().find(expected[t].first);
    std::vector<int64_t> shape = {shuffled.rows};
    if (t < layout.sites.size()) shape.push_back(layout.sites[t].width);
    if (found == (*file)->tensors().end() || found->second.dtype != expected[t].second ||
        found->second.shape != shape) {
      faults->push_back(name + ": tensor " + expected[t].first + " is missing or not " +
                        expected[t].second + " of " + std::to_string(shuffled.rows) + " rows");
      usable = false;
      continue;
    }
    shuffled.parts.push_back(&found->second);
  }
  const int64_t rows_left =
      metadata.at("rows").get<int64_t>() - static_cast<int64_t>(index) * rows_per_file;
  if (shuffled.rows != std::min(rows_per_file, rows_left)) {
    faults->push_back(name + ": " + std::to_string(shuffled.rows) + " rows, not rows_per_file");
  }
  if (!usable) return std::nullopt;
  shuffled.file = std::move(*file);
  return shuffled;
}

// Hands every row of `file` to `tally` as a record of `layout`.
void MatchRows(const ShuffledFile& file, const RecordLayout& layout, SourceRowTally* tally) {
  std::vector<uint8_t> record(static_cast<size_t>(layout.record_bytes));
  for (int64_t r = 0; r < file.rows; ++r) {
    int64_t at = 0;
    for (const SafetensorsTensor* tensor : file.parts) {
      const int64_t bytes = static_cast<int64_t>(tensor->bytes.size()) / file.rows;
      std::memcpy(record.data() + at, tensor->bytes.data() + r * bytes, static_cast<size_t>(bytes));
      at += bytes;
    }
    tally->Match(record.data(), file.name);
  }
}

}  // namespace

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
  if (!IsVersionOneShuffle(metadata)) {
    faults.push_back("metadata.json is not a version 1 actex shuffle's");
    return check;
  }
  try {
    if (!metadata.at("complete").get<bool>()) {
      faults.push_back("metadata.json: the shuffle has not finished (\"complete\": false)");
    }
    auto source = OpenShuffleSource(metadata, source_dir);
    if (!source) return std::unexpected(source.error());
    const auto skip_ids = metadata.at("parameters").at("skip_token_ids").get<std::set<int32_t>>();
    auto tally = SourceRowTally::Read(source->output, source->layout, skip_ids,
                                      dir + "/.verify_inflated.tmp");
    if (!tally) return std::unexpected(tally.error());
    check.source_rows = tally->rows();
    check.skipped = tally->skipped();

    const int64_t rows_per_file = metadata.at("parameters").at("rows_per_file").get<int64_t>();
    const json& files = metadata.at("files");
    for (size_t f = 0; f < files.size(); ++f) {
      auto file = OpenShuffledFile(metadata, f, rows_per_file, dir, source->layout, &faults);
      if (!file) continue;
      ++check.files;
      check.bytes += file->bytes;
      check.rows += file->rows;
      MatchRows(*file, source->layout, &*tally);
    }
    tally->ReportFaults(&faults);
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
