#ifndef ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_
#define ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_

#include <expected>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "actors/extract_options.h"

namespace actex {

// Flags shared by every command that runs an extraction (extract, and later node and
// simulate). The text fields are parsed after CLI11 so errors can name the flag.
struct ExtractFlags {
  ExtractOptions options;
  std::string layers, dtype, overflow = "truncate", shard_size = "1GB", compress = "none";
  std::vector<std::string> sites;
};

// Registers the extraction flags on `command`, writing into `flags`.
void AddExtractFlags(CLI::App& command, ExtractFlags& flags);

// The options the parsed flags describe; errors name the flag.
std::expected<ExtractOptions, std::string> ResolveExtractFlags(const ExtractFlags& flags);

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_EXTRACT_FLAGS_H_
