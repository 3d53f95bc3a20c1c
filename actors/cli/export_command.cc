// actex export --format lm_saes|delphi OUT --to DIR: an extraction's (or a shuffle's) rows
// in the layout an SAE trainer reads without conversion code, or an extraction's SAE
// latents in the latent cache EleutherAI delphi explains and scores.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "actors/cli/commands.h"
#include "storage/delphi_export.h"
#include "storage/lm_saes_export.h"

namespace actex {
namespace {

// The exit status of an export that did not finish, its error said: 2 when it was
// refused before anything was written (the same command cannot succeed), 1 when it
// stopped part way (the same command continues).
int ExitForError(const CommandError& error) {
  std::cerr << "actex export: " << error.message << '\n';
  return error.kind == CommandError::Kind::kRefused ? 2 : 1;
}

int RunLmSaesExport(const LmSaesExportOptions& options) {
  auto result = ExportForLmSaes(options);
  if (!result) return ExitForError(result.error());
  std::cout << "exported " << result->rows << " rows in " << result->chunks << " chunks per site ("
            << result->kept << " already there), " << result->bytes << " bytes, to "
            << options.out_dir << '\n';
  for (const std::string& site : result->integer_sites_left_out) {
    std::cout << "left out " << site << ": an integer site (I32), not activations to train on\n";
  }
  return 0;
}

int RunDelphiExport(const DelphiExportOptions& options) {
  auto result = ExportForDelphi(options);
  if (!result) return ExitForError(result.error());
  std::cout << "exported " << result->locations << " latent locations over " << result->tokens
            << " tokens (" << result->sequences << " sequences of " << options.ctx_len << ") in "
            << result->files << " files, to " << options.out_dir << '\n';
  return 0;
}

}  // namespace

CommandRunner AddExportCommand(CLI::App& command) {
  auto lm_saes = std::make_shared<LmSaesExportOptions>();
  auto delphi = std::make_shared<DelphiExportOptions>();
  auto format = std::make_shared<std::string>();
  command.add_option("--format", *format, "the layout: lm_saes (activations) or delphi (latents)")
      ->required()
      ->check(CLI::IsMember({"lm_saes", "delphi"}));
  command.add_option("OUT", lm_saes->source_dir, "an extraction's or a shuffle's output folder")
      ->required();
  command.add_option("--to", lm_saes->out_dir, "the folder to write")->required();
  command
      .add_option("--sites", lm_saes->sites,
                  "sites to export (lm_saes default: every float site; integer sites such as "
                  "expert ids are refused. delphi default: every site with SAE latents)")
      ->delimiter(',');
  command.add_option("--ctx-len", delphi->ctx_len, "delphi: tokens per sequence")
      ->capture_default_str();
  command.add_option("--splits", delphi->splits, "delphi: files per site, by latent range")
      ->capture_default_str();
  command
      .add_option("--pad-token", delphi->pad_token,
                  "delphi: the token id that fills the last sequence")
      ->capture_default_str();
  command.add_option("--model-name", delphi->model_name,
                     "delphi: config.json's model_name (default: the model the shards name)");
  command.footer(
      "lm_saes: DIR/<site>/chunk-NNNNNNNN.safetensors with \"activation\" [rows, width] and "
      "\"tokens\" [rows] (int64), one chunk per source file, in order. Export a shuffle's "
      "output to train on shuffled rows. Run again to continue a stopped export.\n"
      "delphi: DIR/<site>/{start}_{end}.safetensors per latent range with \"locations\" [n, 3] "
      "(sequence, position, latent - start), \"activations\" [n] and \"tokens\" [sequences, "
      "ctx_len], and DIR/<site>/config.json; the tokens are every shard's in order, cut into "
      "sequences (docs/sae.md).\n"
      "Exit status: 0 done; 1 stopped part way (what was written stays; run again to "
      "continue); 2 refused before anything was written: a --to that is empty, /, OUT itself, "
      "inside OUT or holding it, or holding files of another export; OUT not an output, or "
      "gzip'd; a site not in it (lm_saes: or an integer site); a delphi --ctx-len, --splits "
      "or --pad-token out of range.");
  return [lm_saes, delphi, format] {
    if (*format == "lm_saes") return RunLmSaesExport(*lm_saes);
    delphi->source_dir = lm_saes->source_dir;
    delphi->out_dir = lm_saes->out_dir;
    delphi->sites = lm_saes->sites;
    return RunDelphiExport(*delphi);
  };
}

}  // namespace actex
