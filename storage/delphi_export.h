#ifndef ACTEX_STORAGE_DELPHI_EXPORT_H_
#define ACTEX_STORAGE_DELPHI_EXPORT_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "storage/command_error.h"

namespace actex {

// The latent cache EleutherAI delphi's LatentDataset reads (delphi/latents/loader.py),
// from the SAE latents an extraction stored (`--sae`): per site (hook name),
//   DIR/<site>/config.json                 the cache config delphi reads beside them
//   DIR/<site>/{start}_{end}.safetensors   the latents start..end (inclusive), with
//     locations   [n, 3] I64  (sequence, position in it, latent - start)
//     activations [n]    F32  the latent's value there
//     tokens      [sequences, ctx_len] I64  the whole token stream
// The token stream is every listed shard's tokens in the source's row order (host
// folders by name, shards as listed), cut into sequences of ctx_len tokens, the last
// padded with `pad_token`; a stored latent with a value > 0 is a location. Latent
// ranges are split as delphi splits them (linspace over the SAE's width, d_sae as
// metadata.json's config.saes records it).
struct DelphiExportOptions {
  std::string source_dir;            // an extraction's output with latents sites
  std::string out_dir;               // created; must not be inside source_dir
  std::vector<std::string> sites{};  // empty: every site with latents
  int64_t ctx_len = 256;             // delphi's cache_ctx_len
  int64_t splits = 5;                // delphi's n_splits
  int32_t pad_token = 0;             // fills the last sequence
  std::string model_name{};          // config.json "model_name"; empty: the shards' model
};

struct DelphiExportResult {
  int64_t sequences = 0, tokens = 0, locations = 0, files = 0;
};

// The options' own rules, before any file is read: ctx_len from 1 to kMaxDelphiCtxLen
// (the token stream is a [sequences, ctx_len] tensor: 2e9 would be 16 GB for one
// sequence), splits at least 1, pad_token not negative. Errors name the flag.
inline constexpr int64_t kMaxDelphiCtxLen = int64_t{1} << 20;
std::expected<void, std::string> CheckDelphiExportOptions(const DelphiExportOptions& options);

// Writes every file through a temporary file and rename. kRefused before anything is
// written, naming the cause: CheckDelphiExportOptions, the --to, a site without
// latents (or none at all), gzip'd shards, more splits than latents, range files of
// an earlier export in a site's folder. kStopped part way: a damaged shard, an id at
// or past the SAE's d_sae, an I/O error.
std::expected<DelphiExportResult, CommandError> ExportForDelphi(const DelphiExportOptions& options);

}  // namespace actex

#endif  // ACTEX_STORAGE_DELPHI_EXPORT_H_
