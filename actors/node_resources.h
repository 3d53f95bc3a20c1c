#ifndef ACTEX_ACTORS_NODE_RESOURCES_H_
#define ACTEX_ACTORS_NODE_RESOURCES_H_

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/extract_options.h"
#include "actors/mesh_plan.h"
#include "actors/node_options.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "storage/corpus_size.h"

namespace actex {

// Everything a node needs before it starts any actor, each part checked: a bad flag,
// model, tokenizer or corpus file ends the run here, before any work or output.
struct NodeResources {
  ModelConfig config;
  ExtractPlan plan;
  MeshPlan mesh;
  std::shared_ptr<const ModelWeights> weights;
  std::string tokenizer_hash = "none (pre-tokenized corpus)";
  std::vector<std::string> corpus_files;
  CorpusSize corpus_size;

  // What every host of the job must agree on (RunFingerprint), for `options`, the
  // extract options these resources were prepared for.
  std::map<std::string, std::string> Fingerprint(const ExtractOptions& options) const;
};

// Plans the mesh and the extraction, loads each --sae's SAE (checked against its site),
// opens the weights and the tokenizer, expands the corpus inputs and reads the Parquet
// footers. Errors name the flag or the file.
std::expected<NodeResources, std::string> PrepareNode(const NodeOptions& options);

}  // namespace actex

#endif  // ACTEX_ACTORS_NODE_RESOURCES_H_
