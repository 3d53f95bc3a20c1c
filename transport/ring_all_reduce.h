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
//
// Chunk c of a buffer of n floats on a ring of `size` members holds n / size floats,
// plus one when c < n % size (so chunks may be empty). Each chunk travels in pieces
// of at most kRingPieceFloats, so a member forwards the first piece of a step while
// later ones are still arriving. Every member adds in the same order, so the result
// is bitwise identical on all members. On error the contents of `data` are
// unspecified. A ring of size 1 returns at once.
inline constexpr size_t kRingPieceFloats = size_t{1} << 18;  // 1 MiB of float32

std::expected<void, std::string> RingAllReduce(RingLinks& links, std::span<float> data);

}  // namespace actex

#endif  // ACTEX_TRANSPORT_RING_ALL_REDUCE_H_
