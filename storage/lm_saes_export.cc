#include "storage/lm_saes_export.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/whole_file.h"
#include "storage/command_error.h"
#include "storage/crc32.h"
#include "storage/destination_folder.h"
#include "storage/file_io.h"
#include "storage/json_field.h"
#include "storage/safetensors.h"
#include "storage/shuffle_rows.h"
#include "storage/shuffled_output.h"
#include "storage/stored_site.h"

namespace actex {
namespace {

namespace fs = std::filesystem;

// The source's files in order, with the crc32 each is listed with, and its sites.
struct SourceFiles {
  std::vector<std::string> paths;
  std::vector<std::string> crc32s;  // 8 hex digits
  std::vector<StoredSite> sites;
};

std::expected<SourceFiles, std::string> ListSource(const std::string& dir) {
  SourceFiles files;
  if (IsShuffledOutput(dir)) {
    auto text = ReadWholeFile(dir + "/metadata.json");
    if (!text) return std::unexpected(text.error());
    const auto metadata = nlohmann::json::parse(*text, nullptr, false);
    const JsonPlace top{dir + "/metadata.json", ""};
    auto complete = JsonBoolField(metadata, top, "complete");
    if (!complete) return std::unexpected(complete.error());
    if (!*complete) {
      return std::unexpected(dir + ": the shuffle has not finished; run it again to complete it");
    }
    auto listed = JsonArrayField(metadata, top, "files");
    if (!listed) return std::unexpected(listed.error());
    for (size_t i = 0; i < listed->get().size(); ++i) {
      auto name = JsonStringField(listed->get()[i], top.Member("files").Element(i), "file");
      if (!name) return std::unexpected(name.error());
      // A listed name is a file of the folder, never a path that leads out of it.
      if (name->empty() || name->find('/') != std::string::npos || *name == "." || *name == "..") {
        return std::unexpected(top.Member("files").Element(i).Describe() + ".file \"" + *name +
                               "\" is not a file name");
      }
      auto crc32 = JsonStringField(listed->get()[i], top.Member("files").Element(i), "crc32");
      if (!crc32) return std::unexpected(crc32.error());
      files.paths.push_back(dir + "/" + *name);
      files.crc32s.push_back(*crc32);
    }
    auto parameters = JsonObjectField(metadata, top, "parameters");
    if (!parameters) return std::unexpected(parameters.error());
    const JsonPlace at = top.Member("parameters");
    auto sites = JsonArrayField(parameters->get(), at, "sites");
    if (!sites) return std::unexpected(sites.error());
    for (size_t i = 0; i < sites->get().size(); ++i) {
      auto site = ReadStoredSite(sites->get()[i], at.Member("sites").Element(i));
      if (!site) return std::unexpected(site.error());
      files.sites.push_back(std::move(*site));
    }
    return files;
  }
  auto source = ReadSourceOutput(dir);
  if (!source) return std::unexpected(source.error());
  for (const SourceShard& shard : source->shards) {
    if (shard.gzip) {
      return std::unexpected(shard.path +
                             " is gzip'd: export from `actex shuffle`'s output "
                             "(which reads gzip'd shards) or gunzip the shards first");
    }
    files.paths.push_back(shard.path);
    files.crc32s.push_back(FormatCrc32(shard.crc32));
  }
  files.sites = std::move(source->sites);
  return files;
}

// The sites to export: `asked` (empty: every float site of `source`, the integer
// ones left out into `left_out`). An asked site that is not in the source, or is an
// integer site, is refused naming it: lm_saes trains on float activations.
std::expected<std::vector<std::string>, std::string> ChooseSites(
    const std::vector<std::string>& asked, const SourceFiles& source, const std::string& dir,
    std::vector<std::string>* left_out) {
  std::vector<std::string> chosen;
  for (const StoredSite& site : source.sites) {
    if (!asked.empty()) continue;
    (site.integer ? *left_out : chosen).push_back(site.name);
  }
  for (const std::string& name : asked) {
    auto site = std::find_if(source.sites.begin(), source.sites.end(),
                             [&](const StoredSite& stored) { return stored.name == name; });
    if (site == source.sites.end()) return std::unexpected("site " + name + " is not in " + dir);
    if (site->integer) {
      return std::unexpected("site " + name +
                             " is an integer site (I32 expert ids), not activations lm_saes can "
                             "train on: leave it out of --sites, and read it from the shards "
                             "themselves (scripts/read_activations.py)");
    }
    chosen.push_back(name);
  }
  return chosen;
}

std::string ChunkName(int64_t index) {
  char name[48];
  std::snprintf(name, sizeof(name), "chunk-%08lld.safetensors", static_cast<long long>(index));
  return name;
}

// A chunk's metadata: the file it was exported from, and that file's listed crc32,
// which tells a chunk of this source (kept when an export continues) from another's.
constexpr const char* kSourceKey = "source";
constexpr const char* kSourceCrcKey = "source_crc32";

// Refuses chunks already in options.out_dir that this export would keep but another
// source's export wrote, and chunks past this source's count: either would pass for
// this source's rows. Checked before anything is written.
std::expected<void, std::string> CheckChunksThere(const LmSaesExportOptions& options,
                                                  const SourceFiles& source,
                                                  const std::vector<std::string>& sites) {
  std::set<std::string> written;
  for (size_t index = 0; index < source.paths.size(); ++index) {
    written.insert(ChunkName(static_cast<int64_t>(index)));
  }
  for (const std::string& site : sites) {
    auto left = FirstSafetensorsNotWritten(options.out_dir + "/" + site, written);
    if (!left) return std::unexpected(left.error());
    if (*left) {
      return std::unexpected("--to " + options.out_dir + " holds " + site + "/" + **left +
                             ", which this export does not write (the source has " +
                             std::to_string(source.paths.size()) +
                             (source.paths.size() == 1 ? " file" : " files") +
                             "): lm_saes reads every chunk of the folder, so its rows "
                             "would be read too; remove it, or export into a new or empty "
                             "folder");
    }
  }
  for (size_t index = 0; index < source.paths.size(); ++index) {
    for (const std::string& site : sites) {
      const std::string chunk = site + "/" + ChunkName(static_cast<int64_t>(index));
      const std::string path = options.out_dir + "/" + chunk;
      std::error_code error;
      if (!fs::exists(path, error)) continue;
      auto file = SafetensorsFile::Open(path);
      std::string found;  // what the chunk there is, for the message
      if (!file) {
        found = "which cannot be read (" + file.error() + ")";
      } else {
        const std::map<std::string, std::string>& metadata = (*file)->metadata();
        const auto crc32 = metadata.find(kSourceCrcKey);
        if (crc32 != metadata.end() && crc32->second == source.crc32s[index]) continue;
        const auto from = metadata.find(kSourceKey);
        found =
            (from == metadata.end() ? "of an unnamed source" : "exported from " + from->second) +
            (crc32 == metadata.end() ? "" : " (crc32 " + crc32->second + ")");
      }
      return std::unexpected("--to " + options.out_dir + " already holds " + chunk + ", " + found +
                             ", not from " + source.paths[index] + " (crc32 " +
                             source.crc32s[index] +
                             "), whose rows it would pass for: export into a new or empty "
                             "folder, or remove " +
                             options.out_dir + " to export afresh");
    }
  }
  return {};
}

}  // namespace

std::expected<LmSaesExportResult, CommandError> ExportForLmSaes(
    const LmSaesExportOptions& options) {
  if (auto destination = CheckDestinationFolder("--to", options.out_dir, options.source_dir);
      !destination) {
    return CommandError::Refused(destination.error());
  }
  auto source = ListSource(options.source_dir);
  if (!source) return CommandError::Refused(source.error());
  LmSaesExportResult result;
  auto chosen =
      ChooseSites(options.sites, *source, options.source_dir, &result.integer_sites_left_out);
  if (!chosen) return CommandError::Refused(chosen.error());
  const std::vector<std::string>& sites = *chosen;
  if (sites.empty()) {
    return CommandError::Refused(options.source_dir +
                                 " holds integer sites only: nothing lm_saes can train on");
  }
  if (auto there = CheckChunksThere(options, *source, sites); !there) {
    return CommandError::Refused(there.error());
  }
  for (const std::string& site : sites) {
    if (auto made = MakeDirectories(options.out_dir + "/" + site); !made) {
      return CommandError::Stopped(made.error());
    }
  }
  for (size_t index = 0; index < source->paths.size(); ++index) {
    const std::string name = ChunkName(static_cast<int64_t>(index));
    auto file = SafetensorsFile::Open(source->paths[index]);
    if (!file) return CommandError::Stopped(file.error());
    const auto& tensors = (*file)->tensors();
    auto ids = tensors.find("token_ids");
    if (ids == tensors.end() || ids->second.dtype != "I32" || ids->second.shape.size() != 1) {
      return CommandError::Stopped(source->paths[index] + " has no token_ids I32 tensor");
    }
    const int64_t rows = ids->second.shape[0];
    const std::span<const uint8_t> token_bytes = ids->second.bytes;
    bool all_there = true;
    for (const std::string& site : sites) {
      all_there = all_there && fs::exists(options.out_dir + "/" + site + "/" + name);
    }
    if (all_there) {  // written by an earlier export that stopped later
      ++result.kept;
    }
    for (const std::string& site : sites) {
      const std::string path = options.out_dir + "/" + site + "/" + name;
      auto tensor = tensors.find(site);
      if (tensor == tensors.end() || tensor->second.shape.size() != 2 ||
          tensor->second.shape[0] != rows) {
        return CommandError::Stopped(source->paths[index] + " has no tensor " + site + " [" +
                                     std::to_string(rows) + ", width]");
      }
      if (all_there) continue;
      const SafetensorsTensor& activation = tensor->second;
      auto written =
          WriteSafetensors(path,
                           {{"activation", activation.dtype, activation.shape,
                             [&](std::span<uint8_t> out) {
                               std::memcpy(out.data(), activation.bytes.data(), out.size());
                             }},
                            {"tokens",
                             "I64",
                             {rows},
                             [&](std::span<uint8_t> out) {
                               for (int64_t r = 0; r < rows; ++r) {
                                 int32_t token;
                                 std::memcpy(&token, token_bytes.data() + 4 * r, 4);
                                 const int64_t wide = token;
                                 std::memcpy(out.data() + 8 * r, &wide, 8);
                               }
                             }}},
                           {{"format", "pt"},
                            {kSourceKey, source->paths[index]},
                            {kSourceCrcKey, source->crc32s[index]}});
      if (!written) return CommandError::Stopped(written.error());
      result.bytes += static_cast<int64_t>(activation.bytes.size()) + 8 * rows;
    }
    ++result.chunks;
    result.rows += rows;
  }
  return result;
}

}  // namespace actex
