#ifndef ACTEX_STORAGE_LM_SAES_EXPORT_H_
#define ACTEX_STORAGE_LM_SAES_EXPORT_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "storage/command_error.h"

namespace actex {

// The cached-activation layout OpenMOSS Language-Model-SAEs (lm_saes) reads from
// disk: one folder per hook point, DIR/<site>/chunk-NNNNNNNN.safetensors, each with
// "activation" [rows, width] (the source's dtype) and "tokens" [rows] (I64); every
// site has the same chunks with the same tokens, in the order lm_saes reads them
// (by chunk number). Chunk N holds the rows of the source's N-th file: an
// extraction's listed shards (host folders in name order) or a shuffle's files.
struct LmSaesExportOptions {
  std::string source_dir;  // an extraction's output or `actex shuffle`'s
  std::string out_dir;     // created; chunks already there are kept (resume)
  // Empty: every float site. An integer site (I32 expert ids) is refused: lm_saes
  // trains on float activations.
  std::vector<std::string> sites;
};

struct LmSaesExportResult {
  int64_t chunks = 0, rows = 0, bytes = 0, kept = 0;  // kept: chunks found already written
  std::vector<std::string> integer_sites_left_out;    // by an export of every site
};

// Writes every chunk through a temporary file and rename, so a chunk is there whole
// or not at all and a stopped export continues. Each chunk records its source file and
// that file's listed crc32 (metadata "source", "source_crc32"): a chunk already in
// out_dir that another source's export wrote is refused before anything is written,
// instead of kept as this source's rows. gzip'd shards are refused with the
// way out (`actex shuffle`, which reads them, or gunzip). An out_dir that
// CheckDestinationFolder refuses (empty, /, the source, inside or holding it) is
// refused before anything is written.
// Errors: kRefused before anything is written (the --to, a source that is not an
// output, gzip'd shards, sites not in it or integer, another export's chunks there);
// kStopped part way (a damaged source file, an I/O error), continued by the same call.
std::expected<LmSaesExportResult, CommandError> ExportForLmSaes(const LmSaesExportOptions& options);

}  // namespace actex

#endif  // ACTEX_STORAGE_LM_SAES_EXPORT_H_
