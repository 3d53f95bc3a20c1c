// actex export --format lm_saes OUT --to DIR: an extraction's (or a shuffle's) rows
// in the layout an SAE trainer reads without conversion code.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "actors/cli/commands.h"
#include "storage/destination_folder.h"
#include "storage/lm_saes_export.h"

namespace actex {

CommandRunner AddExportCommand(CLI::App& command) {
  auto options = std::make_shared<LmSaesExportOptions>();
  auto format = std::make_shared<std::string>();
  command.add_option("--format", *format, "the trainer's layout")
      ->required()
      ->check(CLI::IsMember({"lm_saes"}));
  command.add_option("OUT", options->source_dir, "an extraction's or a shuffle's output folder")
      ->required();
  command.add_option("--to", options->out_dir, "the folder to write")->required();
  command
      .add_option("--sites", options->sites,
                  "sites to export (default: every float site; integer sites such as expert ids "
                  "are refused)")
      ->delimiter(',');
  command.footer(
      "lm_saes: DIR/<site>/chunk-NNNNNNNN.safetensors with \"activation\" [rows, width] and "
      "\"tokens\" [rows] (int64), one chunk per source file, in order. Export a shuffle's "
      "output to train on shuffled rows. Run again to continue a stopped export.\n"
      "Exit status: 0 done; 1 failed (what was written stays; run again to continue); 2 a "
      "--to refused before anything was written: empty, /, OUT itself, inside OUT or holding "
      "it.");
  return [options, format] {
    // Refused here, so that the exit status tells it from a failure part way.
    if (auto destination = CheckDestinationFolder("--to", options->out_dir, options->source_dir);
        !destination) {
      std::cerr << "actex export: " << destination.error() << '\n';
      return 2;
    }
    auto result = ExportForLmSaes(*options);
    if (!result) {
      std::cerr << "actex export: " << result.error() << '\n';
      return 1;
    }
    std::cout << "exported " << result->rows << " rows in " << result->chunks
              << " chunks per site (" << result->kept << " already there), " << result->bytes
              << " bytes, to " << options->out_dir << '\n';
    for (const std::string& site : result->integer_sites_left_out) {
      std::cout << "left out " << site << ": an integer site (I32), not activations to train on\n";
    }
    return 0;
  };
}

}  // namespace actex
