// actex: extract a language model's activations from a text corpus.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <map>
#include <string>

#include "actors/cli/commands.h"
#include "model/family_configs.h"

int main(int argc, char** argv) {
  CLI::App app{
      "actex: run a text corpus through a HuggingFace transformer and write its "
      "activations (model families: " +
      actex::SupportedFamilies() + ")"};
  app.require_subcommand(1);
  // Logs go to stderr: stdout carries results (tokenize prints JSON lines).
  spdlog::set_default_logger(spdlog::stderr_color_mt("actex"));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  std::map<CLI::App*, actex::CommandRunner> runners;
  auto add = [&](const char* name, const char* help, auto add_command) {
    CLI::App* command = app.add_subcommand(name, help);
    runners[command] = add_command(*command);
  };
  add("extract", "extract activations on this machine", actex::AddExtractCommand);
  add("tokenize", "print the token ids of text, one JSON line per input",
      actex::AddTokenizeCommand);
  add("inspect", "summarize what an extraction wrote", actex::AddInspectCommand);
  add("make-model", "write a random model folder of a supported family (presets of real models)",
      actex::AddMakeModelCommand);
  add("node", "run this host's part of a job of several hosts", actex::AddNodeCommand);
  add("simulate", "run a job of several hosts as local processes on 127.0.0.1",
      actex::AddSimulateCommand);
  add("monitor", "watch a running job's events", actex::AddMonitorCommand);
  add("make-job-key", "write a new job key for --job-key-file", actex::AddMakeJobKeyCommand);
  add("verify", "check an extraction's shards, checksums and document coverage",
      actex::AddVerifyCommand);
  add("shuffle", "write an extraction's rows in a random order for training",
      actex::AddShuffleCommand);
  add("export", "write an output in another tool's layout (lm_saes, delphi)",
      actex::AddExportCommand);
  add("latents", "print an SAE latent's strongest examples as text", actex::AddLatentsCommand);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help ends well (0); every other parse error (unknown flag, missing or invalid
    // value) is a usage error and exits with 2 like the commands' own usage errors,
    // not with CLI11's private codes.
    return app.exit(error) == 0 ? 0 : 2;
  }
  for (auto& [command, run] : runners) {
    if (command->parsed()) return run();
  }
  return 2;
}
