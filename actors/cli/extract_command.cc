#include <spdlog/spdlog.h>

#include <memory>

#include "actors/cli/commands.h"
#include "actors/cli/extract_flags.h"
#include "actors/cli/stop_signals.h"
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
    NodeOptions node;  // as RunExtraction makes it: host 0 of one
    node.extract = *options;
    node.stop_signals = &CountStopSignals();
    return RunLocked(node);
  };
}

}  // namespace actex
