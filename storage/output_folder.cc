#include "storage/output_folder.h"

#include <algorithm>
#include <regex>
#include <set>
#include <utility>

#include "base/whole_file.h"
#include "storage/host_folder_files.h"
#include "storage/json_field.h"
#include "storage/shard_listing.h"
#include "storage/site_statistics.h"
#include "storage/unlisted_shards.h"

namespace actex {

namespace {

namespace fs = std::filesystem;

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
  if (entry.contains("examples")) {
    auto files = ListedFilesOf(entry, {});
    if (!files) return fault("examples: " + files.error());
    const ListedShard& examples = files->back();
    if (examples.file != ExamplesFileName(name) || !std::regex_match(examples.crc32, kHex8)) {
      return fault("examples is not {\"file\": \"" + ExamplesFileName(name) +
                   "\", \"bytes\", \"crc32\": 8 lowercase hex digits}");
    }
    shard.examples = examples;
  }
  for (const auto& chunk : entry.value("chunks", nlohmann::json::array())) {
    shard.chunks.push_back(chunk.is_array() && !chunk.empty() && chunk[0].is_number_integer()
                               ? chunk[0].get<int64_t>()
                               : -1);  // ListedChunks names the malformed entry
  }
  return shard;
}

using Sites = std::vector<StoredSite>;

// The faults of one metadata.json, each named with the file.
struct MetadataFaults {
  std::string file;  // "host_00/metadata.json"
  std::vector<VerifyFinding>* list;
  void operator()(const std::string& problem) const { list->push_back({file, problem}); }
};

// `path`/metadata.json parsed, when it is an actex output's of version 1.
std::optional<nlohmann::json> ReadMetadata(const std::string& path, const MetadataFaults& fault) {
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
  return metadata;
}

// "complete" and the run's "config".
void ReadRunState(const nlohmann::json& metadata, const MetadataFaults& fault,
                  OutputFolder* folder) {
  if (!metadata.contains("complete") || !metadata["complete"].is_boolean()) {
    fault("\"complete\" is not true or false");
  } else {
    folder->complete = metadata["complete"].get<bool>();
  }
  if (metadata.contains("config") && metadata["config"].is_object()) {
    folder->config = metadata["config"];
  } else {
    fault("has no \"config\" object");
    folder->config = nlohmann::json::object();
  }
}

// The sites every shard holds, in tensor order, and (in `site_dtype`) their dtype.
Sites ReadSites(const nlohmann::json& metadata, const MetadataFaults& fault,
                std::string* site_dtype) {
  const std::string dtype = StringField(metadata, "dtype");
  *site_dtype = SiteDtype(dtype);
  if (site_dtype->empty()) fault("dtype \"" + dtype + "\" is not float32, float16 or bfloat16");
  Sites sites;
  const JsonPlace top{"", ""};  // places inside the file: fault() names the file
  auto site_list = JsonArrayField(metadata, top, "sites");
  if (!site_list) fault(site_list.error());
  for (size_t i = 0; site_list && i < site_list->get().size(); ++i) {
    const nlohmann::json& site = site_list->get()[i];
    const JsonPlace place = top.Member("sites").Element(i);
    auto stored = ReadStoredSite(site, place);
    if (!stored) {
      fault("sites entry " + site.dump() +
            " is not {\"name\": string, \"width\": positive[, \"dtype\": \"I32\"]}: " +
            stored.error());
      continue;
    }
    sites.push_back(std::move(*stored));
  }
  if (sites.empty()) fault("lists no site");
  return sites;
}

// Statistics are null when a run resumed an output written without them; otherwise
// a resume continues them, so damage here is a fault.
void CheckStatistics(const nlohmann::json& metadata, const Sites& sites,
                     const MetadataFaults& fault) {
  auto statistics = metadata.find("statistics");
  if (statistics == metadata.end() || statistics->is_null()) return;
  if (!statistics->is_object()) {
    fault(JsonTypeError(JsonPlace{"", ""}.Member("statistics"), &*statistics, "an object or null"));
    return;
  }
  for (const auto& [name, width, integer, statistics_only] : sites) {
    if (integer) continue;  // integer sites have no statistics
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

// Every "shards" entry that can be checked, into folder->shards, summed.
void ReadShards(const nlohmann::json& metadata, const Sites& sites, const std::string& site_dtype,
                const MetadataFaults& fault, OutputFolder* folder) {
  auto saes = ReadSaeRecords(folder->config, JsonPlace{"", "config"});
  if (!saes) fault(saes.error());
  const nlohmann::json shards = metadata.value("shards", nlohmann::json());
  if (!shards.is_array()) fault("has no \"shards\" list");
  std::set<std::string> names;
  folder->lists_chunks =
      shards.is_array() && !shards.empty() && shards[0].is_object() && shards[0].contains("chunks");
  folder->lists_chunks = folder->lists_chunks || metadata.contains("chunks_without_documents");
  int64_t previous_last = -1;
  for (size_t i = 0; shards.is_array() && i < shards.size(); ++i) {
    auto shard = ReadShardEntry(shards[i], i, fault.file, fault.list);
    if (!shard) continue;
    const std::string name = shards[i]["file"].get<std::string>();
    if (!names.insert(name).second) {
      fault("lists " + name + " twice");
      continue;
    }
    // Shards that list whole chunks may hold them in any order (a leased job gets
    // chunks as they are granted); the chunks themselves are checked against the
    // documents. Before chunks, shards rose by doc id.
    if (!folder->lists_chunks && shard->first_doc_id <= previous_last) {
      fault(name + " starts at doc " + std::to_string(shard->first_doc_id) +
            ", not after the previous shard's last doc " + std::to_string(previous_last) +
            " (a document split or repeated across shards)");
    }
    previous_last = std::max(previous_last, shard->last_doc_id);
    shard->path = folder->path + "/" + name;
    shard->sites = sites;
    shard->site_dtype = site_dtype;
    if (saes) shard->saes = *saes;
    folder->docs += shard->docs;
    folder->tokens += shard->tokens;
    folder->bytes += shard->bytes;
    folder->shard_files.push_back(name);
    folder->shards.push_back(std::move(*shard));
  }
}

// "totals" equal to the sums over the listed shards.
void CheckTotals(const nlohmann::json& metadata, const OutputFolder& folder,
                 const MetadataFaults& fault) {
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
}

// The chunk rule of config.chunk_docs and, when the shards list chunks, every chunk.
void ReadChunks(const nlohmann::json& metadata, const MetadataFaults& fault, OutputFolder* folder) {
  const nlohmann::json chunk_docs = folder->config.value("chunk_docs", nlohmann::json(1));
  auto rule = ChunkRule::Of(chunk_docs.is_number_integer() ? chunk_docs.get<int64_t>() : 0);
  if (!rule) {
    fault("config.chunk_docs is " + chunk_docs.dump() + ", not a positive integer");
  } else {
    folder->chunk_rule = *rule;
  }
  if (!folder->lists_chunks) return;
  auto chunks = ListedChunks(metadata);
  if (!chunks) {
    fault(chunks.error());
  } else {
    folder->chunks = std::move(*chunks);
    folder->chunk_digests = ListedChunkDigests(metadata);
  }
}

}  // namespace

std::optional<OutputFolder> ReadOutputFolder(const std::string& path, const std::string& label,
                                             std::vector<VerifyFinding>* faults) {
  const MetadataFaults fault{label + "/metadata.json", faults};
  auto metadata = ReadMetadata(path, fault);
  if (!metadata) return std::nullopt;
  OutputFolder folder;
  folder.path = path;
  folder.label = label;
  ReadRunState(*metadata, fault, &folder);
  std::string site_dtype;
  const Sites sites = ReadSites(*metadata, fault, &site_dtype);
  CheckStatistics(*metadata, sites, fault);
  ReadShards(*metadata, sites, site_dtype, fault, &folder);
  CheckTotals(*metadata, folder, fault);
  ReadChunks(*metadata, fault, &folder);
  return folder;
}

}  // namespace actex
