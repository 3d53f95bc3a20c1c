#ifndef ACTEX_STORAGE_CORPUS_READ_NOTE_H_
#define ACTEX_STORAGE_CORPUS_READ_NOTE_H_

#include <expected>
#include <string>
#include <utility>
#include <vector>

namespace actex {

// Where `actex verify` reads the corpus from, said in a line for the user, and the
// inputs to read. `recorded`: `inputs` come from an output's metadata.json (named by
// `named_by`), whose relative paths (outputs written before actex recorded absolute
// ones) are taken from the current directory, and the line says so; otherwise they
// are the user's --data, read as given. Returns {"corpus: FILES (as NAMED_BY names
// it)", the inputs as absolute paths}, or ExpandCorpusInputs' refusal.
std::expected<std::pair<std::string, std::vector<std::string>>, std::string> DescribeCorpusRead(
    const std::vector<std::string>& inputs, const std::string& named_by, bool recorded);

}  // namespace actex

#endif  // ACTEX_STORAGE_CORPUS_READ_NOTE_H_
