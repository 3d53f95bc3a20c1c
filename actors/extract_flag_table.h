#ifndef ACTEX_ACTORS_EXTRACT_FLAG_TABLE_H_
#define ACTEX_ACTORS_EXTRACT_FLAG_TABLE_H_

#include <expected>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/extract_flag.h"
#include "actors/extract_options.h"

namespace actex {

// Every flag, in the order `--help` lists them.
const std::vector<ExtractFlag>& ExtractFlagTable();

// The value of a recorded config entry as a person reads it: strings as they are,
// lists joined by commas ("20,21,22,23"), anything else as JSON.
std::string ConfigValueText(const nlohmann::json& value);

// The flag behind a key of metadata.json's config ("shard_bytes" -> "--shard-size";
// "bos_token_id", which --bos resolves to, -> "--bos").
std::string FlagOfConfigKey(const std::string& key);

// What metadata.json's config records for `key` when its flag is not given: what a run
// made before the flag existed meant (null for a key no flag records).
nlohmann::json DefaultRecordOfConfigKey(const std::string& key);

// The flags that give `options` back (the shard count as --shards-per-host), for
// the nodes `actex simulate` starts; flags at their defaults are left out.
std::vector<std::string> ExtractOptionsToArgs(const ExtractOptions& options);

// The options as recorded in metadata.json (and compared on resume): every recorded
// flag of the table, the model's name and the BOS id --bos gave.
nlohmann::json ExtractOptionsToJson(const ExtractOptions& options, const ExtractPlan& plan);

}  // namespace actex

#endif  // ACTEX_ACTORS_EXTRACT_FLAG_TABLE_H_
