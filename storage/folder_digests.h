#ifndef ACTEX_STORAGE_FOLDER_DIGESTS_H_
#define ACTEX_STORAGE_FOLDER_DIGESTS_H_

#include <string>
#include <vector>

#include "storage/job_folders.h"

namespace actex {

// Internals of the output verifier (storage/output_verifier.h): whether the corpus
// read now is the one each host folder's chunks were computed from.

// Reads the corpus `inputs` again (one pass per way the folders read it: text field,
// chunk size, max_docs) and returns a fault for every folder whose listed chunk
// digests (storage/chunk_digest.h) differ now, naming its metadata.json, the chunks
// and the file's lines; or one fault when the corpus cannot be read again. Folders
// listing no digests (older actex) are not compared.
std::vector<VerifyFinding> FindChangedFolders(const std::vector<JobFolder>& folders,
                                              const std::vector<std::string>& inputs);

}  // namespace actex

#endif  // ACTEX_STORAGE_FOLDER_DIGESTS_H_
