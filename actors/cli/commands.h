#ifndef ACTEX_ACTORS_CLI_COMMANDS_H_
#define ACTEX_ACTORS_CLI_COMMANDS_H_

#include <functional>

#include <CLI/CLI.hpp>

namespace actex {

// Each subcommand registers its flags on `app` and returns the function that runs it
// once parsing succeeded; that function returns the process exit code.
using CommandRunner = std::function<int()>;

CommandRunner AddExtractCommand(CLI::App& app);
CommandRunner AddTokenizeCommand(CLI::App& app);
CommandRunner AddInspectCommand(CLI::App& app);
CommandRunner AddMakeModelCommand(CLI::App& app);
CommandRunner AddNodeCommand(CLI::App& app);
CommandRunner AddSimulateCommand(CLI::App& app);
CommandRunner AddMonitorCommand(CLI::App& app);
CommandRunner AddMakeJobKeyCommand(CLI::App& app);
CommandRunner AddVerifyCommand(CLI::App& app);
CommandRunner AddShuffleCommand(CLI::App& app);
CommandRunner AddExportCommand(CLI::App& app);
CommandRunner AddLatentsCommand(CLI::App& app);

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_COMMANDS_H_
