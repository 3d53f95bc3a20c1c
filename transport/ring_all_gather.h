#ifndef ACTEX_TRANSPORT_RING_ALL_GATHER_H_
#define ACTEX_TRANSPORT_RING_ALL_GATHER_H_

#include <expected>
#include <span>
#include <string>
#include <vector>

#include "transport/ring_links.h"

namespace actex {

// Every member contributes `local` (lengths may differ between members); each ends
// with all contributions in rank order, passed around the ring in size-1 steps.
// Each contribution travels as one frame, so it is limited to kMaxPayloadFrameBytes
// (transport/wire.h). On error `gathered` holds an unspecified partial result.
std::expected<void, std::string> RingAllGather(RingLinks& links, std::span<const float> local,
                                               std::vector<std::vector<float>>* gathered);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_RING_ALL_GATHER_H_
