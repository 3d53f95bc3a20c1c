#ifndef ACTEX_ACTORS_LEASED_LOADER_H_
#define ACTEX_ACTORS_LEASED_LOADER_H_

#include <expected>
#include <string>

#include "actors/loader_config.h"
#include "transport/actor.h"

namespace actex {

// Documents queued towards a tokenizer: enough to keep it busy, small enough that
// memory does not depend on the corpus.
inline constexpr int kLoaderDocumentQueue = 256;

// The loader's body in a job of work leases (LoaderConfig::leasing): reads the
// chunks granted to each pipeline's holder, every pipeline with its own reader, and
// feeds whichever pipeline has room, so one replica's full queue never starves
// another's on the same host.
std::expected<void, std::string> RunLeasedLoader(ActorContext& actor, const LoaderConfig& config);

}  // namespace actex

#endif  // ACTEX_ACTORS_LEASED_LOADER_H_
