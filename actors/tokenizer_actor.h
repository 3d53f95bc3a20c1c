#ifndef ACTEX_ACTORS_TOKENIZER_ACTOR_H_
#define ACTEX_ACTORS_TOKENIZER_ACTOR_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actors/sequence_packer.h"
#include "model/tokenizer/tokenizer.h"
#include "transport/actor.h"

namespace actex {

struct TokenizerActorConfig {
  // One per tokenizing thread (--tokenizer-threads), loaded from the same file; empty
  // when the model folder has none.
  std::vector<std::unique_ptr<Tokenizer>> tokenizers;
  std::string model_dir;  // for the error when text arrives without one
  int vocab_size = 0;
  int32_t bos_token_id = -1;         // prepended to text documents when >= 0
  bool bos_on_pretokenized = false;  // and to pre-tokenized ones
  PackerOptions packing;
  std::string documents_endpoint;            // binds a PULL
  std::vector<std::string> shard_endpoints;  // connects one PUSH per device shard
  // Connects a PUSH to the writer; empty when the replica is written on another host
  // (whose own tokenizer lists the same rejects).
  std::string rejects_endpoint;
};

// Tokenizes documents and packs them into batches, sending every batch to every
// device shard of the replica (each shard computes its slice of the same batch).
// Runs ahead of the model, bounded by the shards' queues. The documents queued at
// once are encoded together, on one thread per tokenizer, and packed in their order. A chunk's end
// flushes its last batch and goes on to the shards. A drain request ends the streams after the
// chunk in progress (at once between chunks), marked drained.
std::expected<std::unique_ptr<Actor>, std::string> StartTokenizerActor(zmq::context_t& context,
                                                                       TokenizerActorConfig config);

}  // namespace actex

#endif  // ACTEX_ACTORS_TOKENIZER_ACTOR_H_
