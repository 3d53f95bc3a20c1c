#include <memory>

#include <spdlog/spdlog.h>

#include "actors/cli/commands.h"
#include "actors/cli/extract_flags.h"
#include "actors/node.h"

namespace actex {

CommandRunner AddExtractCommand(CLI::App& command) {
  auto flags = std::make_shared<ExtractFlags>();
  AddExtractFlags(command, *flags);
  return [flags] {
    auto options = ResolveExtractFlags(*flags);
    if (!options) {
      spdlog::error("{}", options.error());
      return 2;
    }
    options->show_progress = true;
    auto summary = RunExtraction(*options);
    if (!summary) {
      spdlog::error("{}", summary.error());
      return 1;
    }
    spdlog::info("wrote {} documents ({} tokens) in {} shard(s) to {}: {:.1f} tokens/s; {} "
                 "line(s) rejected{}",
                 summary->docs, summary->tokens, summary->shards, summary->host_dir,
                 summary->tokens_per_second, summary->rejected,
                 summary->rejected > 0 ? " (see rejects.jsonl)" : "");
    return 0;
  };
}

}  // namespace actex
