#ifndef ACTEX_BENCH_THROUGHPUT_SETUP_H_
#define ACTEX_BENCH_THROUGHPUT_SETUP_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "bench/bench_corpora.h"
#include "model/kernels/gemm.h"
#include "model/model_config.h"

namespace actex {

// `actex make-model --preset PRESET --dtype bfloat16 --out DIR [--tokenizer FILE]`, unless
// DIR already holds a model this function completed (it leaves a `.bench-complete`
// marker, so an interrupted write is redone). Returns the model's config.
std::expected<ModelConfig, std::string> EnsureRandomModel(const std::string& actex_binary,
                                                          const std::string& preset,
                                                          const std::string& dir,
                                                          const std::string& tokenizer_file,
                                                          const std::string& log_path);

// FLOPs per token of the forward pass over `layers_computed` layers for documents of
// `document_tokens` tokens (see bench/README.md): the q, k, v, o, gate, up and down
// products (GPT-2: no gate; 2 FLOPs per weight; a mixture-of-experts layer's router, the
// top_k experts a token runs and its shared expert, never the experts it skips) plus causal
// attention (Q·Kᵀ and P·V, 2 FLOPs per head dimension each, over the (L+1)/2 keys an average token
// of an L-token document sees).
struct FlopsPerToken {
  double matmul = 0, attention = 0;
  double total() const { return matmul + attention; }
};
FlopsPerToken ForwardFlopsPerToken(const ModelConfig& config, int layers_computed,
                                   int document_tokens);

// Bare float32 products by `backend` on `threads` cores (see Product in the .cc): Y[tokens,
// out] = X[tokens, in] · W[out, in]ᵀ, as the forward pass calls it, for the MLP's two
// shapes (in, out) = (hidden, intermediate) and (intermediate, hidden). Each shape is
// timed `repeats` times after a warm-up; the figures are medians.
struct SgemmReference {
  double up_gflops = 0;    // [tokens × hidden] · [hidden × intermediate]
  double down_gflops = 0;  // [tokens × intermediate] · [intermediate × hidden]
  // Both shapes' FLOPs over both median times: the figure the forward pass is held to.
  double combined_gflops = 0;
};
SgemmReference MeasureSgemm(GemmBackend backend, int64_t tokens, int64_t hidden,
                            int64_t intermediate, int threads, int repeats);

// The median of `values` (the mean of the middle two of an even count); `values` not empty.
double Median(std::vector<double> values);

}  // namespace actex

#endif  // ACTEX_BENCH_THROUGHPUT_SETUP_H_
