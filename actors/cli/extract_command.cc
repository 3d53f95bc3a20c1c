#include <spdlog/spdlog.h>

#include <memory>

#include "actors/cli/commands.h"
#include "actors/cli/extract_flags.h"
#include "actors/cli/stop_signals.h"
#include "actors/host_output.h"
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
    auto lock = LockHostOutput(node);  // held until the run returns
    if (!lock) {
      spdlog::error("{}", lock.error().message);
      return lock.error().kind == OutputLock::Refusal::kHeld ? 2 : 1;
    }
    return ReportRun(RunExtraction(*options, &CountStopSignals()));
  };
}

}  // namespace actex
