#include "model/kernels/linear_shares.h"

#include <algorithm>
#include <cstring>

namespace actex {

void FillWithBias(const float* bias, int64_t tokens, int64_t out, float* y, int64_t ldy) {
  for (int64_t t = 0; t < tokens; ++t) {
    if (bias != nullptr) {
      std::memcpy(y + t * ldy, bias, static_cast<size_t>(out) * sizeof(float));
    } else {
      std::fill(y + t * ldy, y + t * ldy + out, 0.0f);
    }
  }
}

FeatureShares CutOutputFeatures(int64_t out, int members) {
  constexpr int64_t kRowAlignment = 32;
  const int64_t even_share = (out + members - 1) / members;
  FeatureShares shares;
  shares.size = std::min(out, (even_share + kRowAlignment - 1) / kRowAlignment * kRowAlignment);
  shares.count = shares.size > 0 ? (out + shares.size - 1) / shares.size : 0;
  return shares;
}

void ForEachShare(ThreadTeam* team, int64_t count,
                  const std::function<void(int64_t index, int member)>& share) {
  if (team != nullptr && count > 1) {
    team->Run(count, share);
  } else {
    for (int64_t index = 0; index < count; ++index) share(index, 0);
  }
}

}  // namespace actex
