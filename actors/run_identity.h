#ifndef ACTEX_ACTORS_RUN_IDENTITY_H_
#define ACTEX_ACTORS_RUN_IDENTITY_H_

#include <expected>
#include <nlohmann/json.hpp>
#include <string>

namespace actex {

// On resume, whether the inputs an earlier output recorded in its metadata.json
// config are this run's, compared as what the files are, not how their paths were
// spelled:
//  - the model: the same files (config.json, the weights' headers and the tokenizer,
//    recorded as "model_fingerprint") wherever the folder now is; an output written
//    before that record existed, by its folder ("m/", "./m" and "/abs/m" are one
//    folder, and so are two paths std::filesystem::equivalent calls the same);
//  - the corpus: --data entry by entry the same path once made absolute, or the same
//    file (equivalent), and then the same sizes ("corpus_size");
//  - the SAEs (--sae, "saes"): the same sites, K and file digests, wherever their
//    folders now are.
// Relative paths an older output recorded are taken from the current directory.
// A refusal names --model or --data, says which folder or files differ and how to go
// on ("--data: OUT was written from /a/c.jsonl, this run reads /a/d.jsonl ...").
std::expected<void, std::string> CheckSameInputs(const std::string& dir,
                                                 const nlohmann::json& earlier,
                                                 const nlohmann::json& now);

// The config keys CheckSameInputs answers for, which a plain comparison of recorded
// values must leave to it.
bool IsInputKey(const std::string& key);

}  // namespace actex

#endif  // ACTEX_ACTORS_RUN_IDENTITY_H_
