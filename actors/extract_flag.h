#ifndef ACTEX_ACTORS_EXTRACT_FLAG_H_
#define ACTEX_ACTORS_EXTRACT_FLAG_H_

#include <expected>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/extract_options.h"

namespace actex {

// How a flag's value takes part in a run's identity.
enum class FlagRole {
  kRunOnly,  // how this run goes (--out, --overwrite, --blas-threads, uploads): never compared
  kResumed,  // recorded in metadata.json's config; a rerun over OUT must ask for the same
  kShared,   // recorded, and in the fingerprint every host of a job must share
};

// One flag of `actex extract` (and of node and simulate, which call --shards
// --shards-per-host). The table of them is the one place a flag is described: the
// command line (name, help, default), metadata.json's config (and so the resume
// check), the fingerprint hosts compare at the rendezvous, and the arguments `actex
// simulate` gives its nodes all read it, so a new flag is a new row.
struct ExtractFlag {
  enum class Arity { kSwitch, kOne, kMany };

  std::string name;  // "--max-seq-len"
  std::string help;
  FlagRole role = FlagRole::kRunOnly;
  std::string config_key;  // its key in metadata.json's config (every row has one)
  Arity arity = Arity::kOne;
  bool required = false;
  // Sets the option from what the user wrote (one text for kOne, one or more for kMany,
  // none for kSwitch). Errors say what is wrong with the value; callers add the flag.
  std::function<std::expected<void, std::string>(const std::vector<std::string>& texts,
                                                 ExtractOptions& options)>
      parse;
  // The texts that give the option its value back; none while it has its default.
  std::function<std::vector<std::string>(const ExtractOptions& options)> print;
  // The value as metadata.json's config records it (and, as text, the fingerprint).
  std::function<nlohmann::json(const ExtractOptions& options)> record;
};

}  // namespace actex

#endif  // ACTEX_ACTORS_EXTRACT_FLAG_H_
