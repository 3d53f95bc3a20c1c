#ifndef ACTEX_STORAGE_CORPUS_INPUTS_H_
#define ACTEX_STORAGE_CORPUS_INPUTS_H_

#include <expected>
#include <string>
#include <vector>

namespace actex {

// `--data` as given (files or globs, in order) to the corpus files it names: a
// pattern's matches sorted bytewise (so the order does not depend on the locale),
// a literal path as it is. Every file must be a regular file after symlinks are
// followed. Refusals name the input and the cause: a pattern whose folder does not
// exist ("the folder nope does not exist"), a pattern that matches nothing, a
// directory, a dangling or looping symlink (and where it points), and a FIFO or a
// device: actex reads each corpus file more than once (to measure it before the
// run, and again to resume or verify), which a stream cannot give.
std::expected<std::vector<std::string>, std::string> ExpandCorpusInputs(
    const std::vector<std::string>& inputs);

}  // namespace actex

#endif  // ACTEX_STORAGE_CORPUS_INPUTS_H_
