#include "sae/sae_model.h"

namespace actex {

const char* SaeFormatName(SaeFormat format) {
  return format == SaeFormat::kSparsify ? "sparsify" : "SAELens";
}

const char* SaeActivationName(SaeActivation activation) {
  switch (activation) {
    case SaeActivation::kRelu:
      return "relu";
    case SaeActivation::kJumpRelu:
      return "jumprelu";
    case SaeActivation::kTopK:
      return "topk";
  }
  return "?";
}

}  // namespace actex
