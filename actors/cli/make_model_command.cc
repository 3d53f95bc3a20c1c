#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "actors/cli/commands.h"
#include "model/model_presets.h"
#include "model/random_model.h"
#include "storage/shard_writer.h"

namespace actex {
namespace {

struct MakeModelFlags {
  RandomModelOptions options;
  std::string max_file_size = "0";
};

}  // namespace

CommandRunner AddMakeModelCommand(CLI::App& command) {
  auto flags = std::make_shared<MakeModelFlags>();
  RandomModelOptions& options = flags->options;
  command.add_option("--out", options.output_dir, "model folder to write")->required();
  command.add_option("--preset", options.preset, "a real model's shapes (default tiny)")
      ->check(CLI::IsMember(PresetNames()));
  command.add_option("--dtype", options.dtype, "weight dtype")
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
  command.add_option("--vocab", options.vocab_size, "vocabulary size (default: the preset's)")
      ->check(CLI::PositiveNumber);
  command.add_option("--layers", options.layers, "number of layers (default: the preset's)")
      ->check(CLI::PositiveNumber);
  command.add_option("--seed", options.seed, "random seed; the same seed gives the same bytes");
  command.add_option("--tokenizer", options.tokenizer_file,
                     "tokenizer.json or tokenizer.model to copy into the folder")
      ->check(CLI::ExistingFile);
  command.add_option("--max-file-size", flags->max_file_size,
                     "split weights into files of this size with an index (e.g. 5GB); 0: one file");
  return [flags] {
    auto max_file_bytes = flags->max_file_size == "0" ? std::expected<int64_t, std::string>(0)
                                                      : ParseByteSize(flags->max_file_size);
    if (!max_file_bytes) {
      spdlog::error("--max-file-size: {}", max_file_bytes.error());
      return 2;
    }
    flags->options.max_file_bytes = *max_file_bytes;
    auto config = MakeRandomModel(flags->options);
    if (!config) {
      spdlog::error("{}", config.error());
      return 1;
    }
    spdlog::info("wrote a random {} model ({} layers, hidden {}, vocab {}, {}) to {}",
                 flags->options.preset, config->layers, config->hidden, config->vocab_size,
                 flags->options.dtype, flags->options.output_dir);
    return 0;
  };
}

}  // namespace actex
