#include "sae/sae_model.h"

namespace actex {

const char* SaeFormatName(SaeFormat format) {
  return format == SaeFormat::kSparsify ? "sparsify" : "SAELens";
}

const char* SaeActivationName(SaeActivation activation) {
  // In the order of SaeActivation's members.
  static constexpr const char* kNames[] = {"relu", "jumprelu", "topk"};
  return kNames[static_cast<int>(activation)];
}

}  // namespace actex
