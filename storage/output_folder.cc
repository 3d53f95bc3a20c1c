#include "storage/output_folder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/whole_file.h"
#include "storage/host_folder_files.h"
#include "storage/json_field.h"
#include "storage/line_reader.h"
#include "storage/shard_listing.h"
#include "storage/site_statistics.h"
#include "storage/unlisted_shards.h"
#include "storage/upload_ledger.h"

namespace actex {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxRejectLineBytes = int64_t{1} << 20;
constexpr int kMaxMalformedRejectsListed = 20;

bool ReadInt(const nlohmann::json& object, const char* key, int64_t minimum, int64_t* out) {
  auto found = object.find(key);
  if (found == object.end() || !found->is_number_integer()) return false;
  if (found->is_number_unsigned() && found->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return false;
  }
  *out = found->get<int64_t>();
  return *out >= minimum;
}

// A string field, or "" when it is absent or not a string (json::value would throw).
std::string StringField(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

std::string SiteDtype(const std::string& dtype) {
  if (dtype == "float32") return "F32";
  if (dtype == "float16") return "F16";
  if (dtype == "bfloat16") return "BF16";
  return "";
}

// One "shards" entry; nullopt (after adding a finding) when it cannot be checked.
std::optional<ShardEntry> ReadShardEntry(const nlohmann::json& entry, size_t index,
                                         const std::string& metadata_file,
                                         std::vector<VerifyFinding>* faults) {
  std::string where = "shards[" + std::to_string(index) + "]";
  auto fault = [&](const std::string& problem) {
    faults->push_back({metadata_file, where + ": " + problem});
    return std::nullopt;
  };
  if (!entry.is_object()) return fault("is not a JSON object");
  auto file = entry.find("file");
  if (file == entry.end() || !file->is_string()) return fault("has no \"file\" name");
  const std::string name = file->get<std::string>();
  where += " (" + name + ")";
  if (!IsShardFileName(name)) {
    return fault("file name is not shard_NNNNNN.safetensors[.gz]");
  }
  ShardEntry shard;
  shard.gzip = name.ends_with(".gz");
  if (!ReadInt(entry, "first_doc_id", 0, &shard.first_doc_id) ||
      !ReadInt(entry, "last_doc_id", shard.first_doc_id, &shard.last_doc_id) ||
      !ReadInt(entry, "docs", 1, &shard.docs) ||
      !ReadInt(entry, "tokens", shard.docs, &shard.tokens) ||
      !ReadInt(entry, "bytes", 0, &shard.bytes)) {
    return fault(
        "first_doc_id <= last_doc_id, docs >= 1, tokens >= docs and bytes must be integers");
  }
  if (shard.docs > shard.last_doc_id - shard.first_doc_id + 1) {
    return fault(std::to_string(shard.docs) + " docs cannot fit doc ids " +
                 std::to_string(shard.first_doc_id) + ".." + std::to_string(shard.last_doc_id));
  }
  auto crc = entry.find("crc32");
  static const std::regex kHex8("[0-9a-f]{8}");
  if (crc == entry.end() || !crc->is_string() ||
      !std::regex_match(crc->get<std::string>(), kHex8)) {
    return fault("crc32 is not 8 lowercase hex digits");
  }
  shard.crc32 = static_cast<uint32_t>(std::stoul(crc->get<std::string>(), nullptr, 16));
  for (const auto& chunk : entry.value("chunks", nlohmann::json::array())) {
    shard.chunks.push_back(chunk.is_array() && !chunk.empty() && chunk[0].is_number_integer()
                               ? chunk[0].get<int64_t>()
                               : -1);  // ListedChunks names the malformed entry
  }
  return shard;
}

}  // namespace

std::optional<OutputFolder> ReadOutputFolder(const std::string& path, const std::string& label,
                                             std::vector<VerifyFinding>* faults) {
  const std::string metadata_file = label + "/metadata.json";
  auto fault = [&](const std::string& problem) { faults->push_back({metadata_file, problem}); };
  auto text = ReadWholeFile(path + "/metadata.json");
  if (!text) {
    fault("cannot be read (" + text.error() + ")");
    return std::nullopt;
  }
  nlohmann::json metadata;
  try {
    metadata = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& error) {
    fault(std::string("is not valid JSON: ") + error.what());
    return std::nullopt;
  }
  if (!metadata.is_object() || StringField(metadata, "format") != "actex-activations") {
    fault("is not an actex metadata file (\"format\" is not \"actex-activations\")");
    return std::nullopt;
  }
  if (!metadata.contains("version") || metadata["version"] != 1) {
    fault("has version " + metadata.value("version", nlohmann::json()).dump() +
          "; this actex reads version 1");
    return std::nullopt;
  }
  OutputFolder folder;
  folder.path = path;
  folder.label = label;
  if (!metadata.contains("complete") || !metadata["complete"].is_boolean()) {
    fault("\"complete\" is not true or false");
  } else {
    folder.complete = metadata["complete"].get<bool>();
  }
  if (metadata.contains("config") && metadata["config"].is_object()) {
    folder.config = metadata["config"];
  } else {
    fault("has no \"config\" object");
    folder.config = nlohmann::json::object();
  }
  const std::string dtype = StringField(metadata, "dtype");
  const std::string site_dtype = SiteDtype(dtype);
  if (site_dtype.empty()) fault("dtype \"" + dtype + "\" is not float32, float16 or bfloat16");
  std::vector<std::pair<std::string, int>> sites;
  const JsonPlace top{"", ""};  // places inside the file: fault() names the file
  auto site_list = JsonArrayField(metadata, top, "sites");
  if (!site_list) fault(site_list.error());
  for (size_t i = 0; site_list && i < site_list->get().size(); ++i) {
    const nlohmann::json& site = site_list->get()[i];
    const JsonPlace place = top.Member("sites").Element(i);
    auto name = JsonStringField(site, place, "name");
    auto width = JsonIntField(site, place, "width", 1);
    if (!name || !width || *width > INT32_MAX) {
      fault("sites entry " + site.dump() + " is not {\"name\": string, \"width\": positive}");
      continue;
    }
    sites.emplace_back(*name, static_cast<int>(*width));
  }
  if (sites.empty()) fault("lists no site");
  // Statistics are null when a run resumed an output written without them; otherwise
  // a resume continues them, so damage here is a fault.
  if (auto statistics = metadata.find("statistics");
      statistics != metadata.end() && !statistics->is_null()) {
    if (!statistics->is_object()) {
      fault(JsonTypeError(top.Member("statistics"), &*statistics, "an object or null"));
    }
    for (const auto& [name, width] : statistics->is_object() ? sites : decltype(sites)()) {
      auto site = statistics->find(name);
      auto parsed = site == statistics->end() ? std::unexpected("no statistics for site " + name)
                                              : SiteStatistics::FromJson(*site);
      if (!parsed) {
        fault("statistics[\"" + name + "\"]: " + parsed.error());
      } else if (parsed->width() != width) {
        fault("statistics[\"" + name + "\"] are of width " + std::to_string(parsed->width()) +
              ", the site's is " + std::to_string(width));
      }
    }
  }
  const nlohmann::json shards = metadata.value("shards", nlohmann::json());
  if (!shards.is_array()) fault("has no \"shards\" list");
  std::set<std::string> names;
  folder.lists_chunks =
      shards.is_array() && !shards.empty() && shards[0].is_object() && shards[0].contains("chunks");
  folder.lists_chunks = folder.lists_chunks || metadata.contains("chunks_without_documents");
  int64_t previous_last = -1;
  for (size_t i = 0; shards.is_array() && i < shards.size(); ++i) {
    auto shard = ReadShardEntry(shards[i], i, metadata_file, faults);
    if (!shard) continue;
    const std::string name = shards[i]["file"].get<std::string>();
    if (!names.insert(name).second) {
      fault("lists " + name + " twice");
      continue;
    }
    // Shards that list whole chunks may hold them in any order (a leased job gets
    // chunks as they are granted); the chunks themselves are checked against the
    // documents. Before chunks, shards rose by doc id.
    if (!folder.lists_chunks && shard->first_doc_id <= previous_last) {
      fault(name + " starts at doc " + std::to_string(shard->first_doc_id) +
            ", not after the previous shard's last doc " + std::to_string(previous_last) +
            " (a document split or repeated across shards)");
    }
    previous_last = std::max(previous_last, shard->last_doc_id);
    shard->path = path + "/" + name;
    shard->sites = sites;
    shard->site_dtype = site_dtype;
    folder.docs += shard->docs;
    folder.tokens += shard->tokens;
    folder.bytes += shard->bytes;
    folder.shard_files.push_back(name);
    folder.shards.push_back(std::move(*shard));
  }
  nlohmann::json totals = metadata.value("totals", nlohmann::json::object());
  if (!totals.is_object()) totals = nlohmann::json::object();
  const nlohmann::json sums = {{"docs", folder.docs},
                               {"tokens", folder.tokens},
                               {"shards", static_cast<int64_t>(folder.shards.size())},
                               {"bytes", folder.bytes}};
  for (const auto& [key, sum] : sums.items()) {
    if (!totals.contains(key) || totals[key] != sum) {
      fault("totals." + key + " is " + totals.value(key, nlohmann::json()).dump() +
            " but the listed shards add up to " + sum.dump());
    }
  }
  const nlohmann::json chunk_docs = folder.config.value("chunk_docs", nlohmann::json(1));
  auto rule = ChunkRule::Of(chunk_docs.is_number_integer() ? chunk_docs.get<int64_t>() : 0);
  if (!rule) {
    fault("config.chunk_docs is " + chunk_docs.dump() + ", not a positive integer");
  } else {
    folder.chunk_rule = *rule;
  }
  if (folder.lists_chunks) {
    auto chunks = ListedChunks(metadata);
    if (!chunks) {
      fault(chunks.error());
    } else {
      folder.chunks = std::move(*chunks);
      folder.chunk_digests = ListedChunkDigests(metadata);
    }
  }
  return folder;
}

std::vector<VerifyFinding> FindUnlistedFiles(const OutputFolder& folder) {
  std::set<std::string> known(folder.shard_files.begin(), folder.shard_files.end());
  known.insert(kHostFolderFiles.begin(), kHostFolderFiles.end());
  std::vector<VerifyFinding> warnings;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder.path, error)) {
    const std::string name = entry.path().filename().string();
    if (known.contains(name)) continue;
    std::string problem;
    if (name.ends_with(".tmp")) {
      problem = "temporary file of an interrupted write; not part of the output, safe to delete";
    } else if (IsShardFileName(name)) {
      problem = "shard not listed in metadata.json, " + DescribeShardFile(entry.path().string()) +
                ": its documents are not counted. A run that stopped after writing it and "
                "before listing it leaves one; so does a metadata.json entry lost or edited "
                "away, and then this file is their only copy: restore its entry to keep it. "
                "A resume moves it into " +
                std::string(kUnlistedFolder) + "/ and computes its chunks again";
    } else if (name == kUnlistedFolder && entry.is_directory()) {
      problem =
          "shards a resume set aside because metadata.json did not list them; not part of the "
          "output (their chunks were computed again): delete them once the output verifies, "
          "unless metadata.json lost their entries by mistake";
    } else if (entry.is_directory()) {
      problem = "directory not written by actex";
    } else {
      problem = "file not written by actex";
    }
    warnings.push_back({folder.label + "/" + name, problem});
  }
  if (error) {
    warnings.push_back({folder.label, "cannot list the folder: " + error.message()});
  }
  std::sort(warnings.begin(), warnings.end(),
            [](const auto& a, const auto& b) { return a.file < b.file; });
  return warnings;
}

int64_t ReadRejects(const OutputFolder& folder, const std::function<void(int64_t)>& document,
                    std::vector<VerifyFinding>* faults) {
  const std::string path = folder.path + "/rejects.jsonl";
  const std::string file = folder.label + "/rejects.jsonl";
  std::error_code error;
  if (!fs::exists(path, error)) return 0;
  auto reader = LineReader::Open(path, kMaxRejectLineBytes);
  if (!reader) {
    faults->push_back({file, reader.error()});
    return 0;
  }
  int64_t entries = 0, malformed = 0;
  while (true) {
    auto line = (*reader)->Next();
    if (!line) {
      faults->push_back({file, line.error()});
      break;
    }
    if (!line->has_value()) break;
    const auto entry = (*line)->too_long ? nlohmann::json(nullptr)
                                         : nlohmann::json::parse((*line)->text, nullptr, false);
    int64_t doc_id = 0, line_number = 0;
    if (!entry.is_object() || !ReadInt(entry, "doc_id", 0, &doc_id) ||
        !ReadInt(entry, "line", 1, &line_number) || !entry.contains("file") ||
        !entry["file"].is_string() || !entry.contains("reason") || !entry["reason"].is_string()) {
      if (++malformed <= kMaxMalformedRejectsListed) {
        faults->push_back({file, "line " + std::to_string((*reader)->lines()) +
                                     " is not {\"doc_id\", \"file\", \"line\", \"reason\"}"});
      }
      continue;
    }
    ++entries;
    document(doc_id);
  }
  if (malformed > kMaxMalformedRejectsListed) {
    faults->push_back(
        {file, std::to_string(malformed - kMaxMalformedRejectsListed) + " more malformed lines"});
  }
  return entries;
}

}  // namespace actex
