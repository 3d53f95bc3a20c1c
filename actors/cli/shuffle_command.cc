// actex shuffle OUT --to SHUFFLED: every row of an extraction in a random order
// fixed by a seed, in files of a fixed number of rows, for training.
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "actors/cli/commands.h"
#include "base/whole_file.h"
#include "model/config_reader.h"
#include "model/model_config.h"
#include "storage/activation_shuffle.h"
#include "storage/file_io.h"
#include "storage/json_field.h"
#include "storage/shard_writer.h"
#include "storage/shuffle_rows.h"
#include "storage/shuffled_output.h"

namespace actex {
namespace {

struct ShuffleFlags {
  std::string out_dir, to, memory = "4GB", skip_tokens, dtype;
  int64_t rows_per_file = 65536;
  uint64_t seed = 0;
  std::vector<std::string> sites;
};

// The run's model folder, from the first host folder's config.
std::expected<std::string, std::string> ModelDir(const std::string& out_dir) {
  auto source = ReadSourceOutput(out_dir);
  if (!source) return std::unexpected(source.error());
  const std::string host =
      std::filesystem::path(source->shards.front().path).parent_path().string();
  auto text = ReadWholeFile(host + "/metadata.json");
  if (!text) return std::unexpected(text.error());
  const auto metadata = nlohmann::json::parse(*text, nullptr, false);
  const JsonPlace top{host + "/metadata.json", ""};
  auto config = JsonObjectField(metadata, top, "config");
  if (!config) return std::unexpected(config.error());
  if (!config->get().contains("model_dir")) {
    return std::unexpected(host + "/metadata.json names no model_dir");
  }
  return JsonStringField(config->get(), top.Member("config"), "model_dir");
}

// --skip-tokens: "bos" (config.json's bos_token_id), "special" (tokenizer.json's
// added tokens marked special) and token ids, comma-separated.
std::expected<std::vector<int32_t>, std::string> SkipTokenIds(const std::string& text,
                                                              const std::string& out_dir) {
  std::set<int32_t> ids;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item == "bos" || item == "special") {
      auto model_dir = ModelDir(out_dir);
      if (!model_dir) return std::unexpected(model_dir.error());
      if (item == "bos") {
        auto config = LoadModelConfig(*model_dir);
        if (!config) return std::unexpected(config.error());
        if (!config->bos_token_id) {
          return std::unexpected(*model_dir + "/config.json has no bos_token_id");
        }
        ids.insert(*config->bos_token_id);
        continue;
      }
      auto tokenizer = ReadWholeFile(*model_dir + "/tokenizer.json");
      if (!tokenizer) return std::unexpected(tokenizer.error());
      const auto json = nlohmann::json::parse(*tokenizer, nullptr, false);
      if (json.is_discarded() || !json.contains("added_tokens")) {
        return std::unexpected(*model_dir + "/tokenizer.json has no added_tokens");
      }
      for (const auto& token : json["added_tokens"]) {
        const JsonPlace place{*model_dir + "/tokenizer.json", "added_tokens[]"};
        if (!JsonBoolField(token, place, "special").value_or(false)) continue;
        auto id = JsonIntField(token, place, "id", 0);
        if (!id || *id > INT32_MAX)
          return std::unexpected(id ? "a token id is too large" : id.error());
        ids.insert(static_cast<int32_t>(*id));
      }
      continue;
    }
    try {
      size_t used = 0;
      const long id = std::stol(item, &used);
      if (used != item.size() || id < 0 || id > INT32_MAX) throw std::invalid_argument(item);
      ids.insert(static_cast<int32_t>(id));
    } catch (const std::exception&) {
      return std::unexpected("--skip-tokens: " + item + " is not bos, special or a token id");
    }
  }
  return std::vector<int32_t>(ids.begin(), ids.end());
}

}  // namespace

CommandRunner AddShuffleCommand(CLI::App& command) {
  auto flags = std::make_shared<ShuffleFlags>();
  command.add_option("OUT", flags->out_dir, "an extraction's output folder")->required();
  command.add_option("--to", flags->to, "the folder to write (resumed if a shuffle stopped there)")
      ->required();
  command.add_option("--rows-per-file", flags->rows_per_file, "rows in each output file")
      ->capture_default_str();
  command.add_option("--seed", flags->seed, "fixes the permutation")->capture_default_str();
  command.add_option("--memory", flags->memory, "memory to use, e.g. 1GB")->capture_default_str();
  command.add_option("--sites", flags->sites, "sites to keep (default: all)")->delimiter(',');
  command.add_option("--skip-tokens", flags->skip_tokens,
                     "leave out rows of these tokens: bos, special, token ids (comma-separated)");
  command.add_option("--dtype", flags->dtype,
                     "float32, float16 or bfloat16 (default: the source's)");
  command.footer(
      "Writes SHUFFLED/shuffled_NNNNNN.safetensors in a uniformly random order of all rows, "
      "and SHUFFLED/metadata.json. Check the result with actex verify SHUFFLED (exit status 0 "
      "no fault, 1 faults found, 2 cannot check).\n"
      "Exit status: 0 done; 1 stopped part way (disk full, a damaged shard, an I/O error): what "
      "metadata.json lists stays valid, and once the cause is fixed the same command resumes; "
      "2 refused before anything was written: a bad flag, a --to that is empty, /, the source "
      "itself, inside it or holding it, a folder holding other files or another shuffle, or an "
      "OUT that is not an extraction's output.");
  return [flags] {
    ShuffleOptions options;
    options.source_dir = flags->out_dir;
    options.out_dir = flags->to;
    options.rows_per_file = flags->rows_per_file;
    options.seed = flags->seed;
    options.sites = flags->sites;
    auto memory = ParseByteSize(flags->memory);
    if (!memory) {
      std::cerr << "actex shuffle: --memory: " << memory.error() << '\n';
      return 2;
    }
    options.memory_bytes = *memory;
    if (!flags->dtype.empty()) {
      options.dtype = DtypeFromName(flags->dtype);
      if (options.dtype.empty()) {
        std::cerr << "actex shuffle: --dtype " << flags->dtype
                  << " is not float32, float16 or bfloat16\n";
        return 2;
      }
    }
    if (!flags->skip_tokens.empty()) {
      auto ids = SkipTokenIds(flags->skip_tokens, flags->out_dir);
      if (!ids) {
        std::cerr << "actex shuffle: " << ids.error() << '\n';
        return 2;
      }
      options.skip_token_ids = *ids;
    }
    options.log = [](const std::string& line) { spdlog::info("{}", line); };
    const auto start = std::chrono::steady_clock::now();
    auto result = ShuffleActivations(options);
    if (!result && result.error().kind == CommandError::Kind::kRefused) {
      std::cerr << "actex shuffle: " << result.error().message << '\n';
      return 2;
    }
    if (!result) {
      std::cerr << "actex shuffle: " << result.error().message
                << "\nactex shuffle: stopped part way; what " << flags->to
                << "/metadata.json lists stays valid: once the cause is fixed, run the same "
                   "command again to resume\n";
      return 1;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << (result->resumed ? "resumed; " : "") << "shuffled " << result->rows << " rows ("
              << result->skipped << " skipped) into " << result->files << " files, "
              << result->bytes << " bytes, in " << seconds << " s\n";
    return 0;
  };
}

}  // namespace actex
