#include "transport/ring_all_gather.h"

#include <utility>

#include "transport/wire.h"

namespace actex {

std::expected<void, std::string> RingAllGather(RingLinks& links, std::span<const float> local,
                                               std::vector<std::vector<float>>* gathered) {
  if (gathered == nullptr) return std::unexpected("all-gather: no output vector given");
  const int size = links.size();
  const int rank = links.rank();
  gathered->assign(size, {});
  (*gathered)[rank].assign(local.begin(), local.end());
  if (size == 1) return {};
  const uint64_t op_id = links.NextOperation();
  // In step t a member sends the contribution of rank (rank - t) and receives that of
  // rank (rank - t - 1) mod size, which it forwards unchanged in step t+1. The
  // "chunk" field is the rank whose contribution the frame holds, so lengths need
  // not be known in advance.
  auto sent = links.SendToNext(op_id, 0, rank, local);
  if (!sent) return std::unexpected("all-gather: " + sent.error());
  for (int step = 0; step < size - 1; ++step) {
    const int owner = ((rank - step - 1) % size + size) % size;
    auto frame = links.ReceiveFrameFromPrevious(op_id, step, owner);
    if (!frame) return std::unexpected("all-gather: " + frame.error());
    auto values = FloatsFromFrame(*frame);
    if (!values) return std::unexpected("all-gather: " + values.error());
    (*gathered)[owner] = std::move(*values);
    if (step + 1 == size - 1) break;
    sent = links.SendFrameToNext(op_id, step + 1, owner, std::move(*frame));
    if (!sent) return std::unexpected("all-gather: " + sent.error());
  }
  return {};
}

}  // namespace actex
