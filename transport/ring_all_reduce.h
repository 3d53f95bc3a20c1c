#ifndef ACTEX_TRANSPORT_RING_ALL_REDUCE_H_
#define ACTEX_TRANSPORT_RING_ALL_REDUCE_H_

#include <expected>
#include <span>
#include <string>

#include "transport/ring_links.h"

namespace actex {

// Sums `data` element-wise over every member of the ring, in place: a reduce-scatter
// (size-1 steps, each member ending with the full sum of one chunk) followed by an
// all-gather of the summed chunks (size-1 steps). Each member sends 2(size-1)/size of
// the buffer, whatever the ring size. Every member must call it with the same length.
std::expected<void, std::string> RingAllReduce(RingLinks& links, std::span<float> data);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_RING_ALL_REDUCE_H_
