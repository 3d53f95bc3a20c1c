#ifndef ACTEX_TESTS_CUDA_EMULATOR_EMULATED_LAUNCH_H_
#define ACTEX_TESTS_CUDA_EMULATOR_EMULATED_LAUNCH_H_

// How the CUDA emulator runs a kernel on the CPU. A launch runs its blocks one after
// another on the calling host thread. A kernel that never synchronises runs its threads
// one after another as plain calls; one that does (a warp shuffle, __syncwarp,
// __syncthreads; translate_launches.py tells which) runs each CUDA thread of a block as
// a fiber, switched at each synchronisation until every live thread of the warp (or of
// the block) has arrived there.

#include <cstddef>
#include <functional>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_size = 1, unsigned y_size = 1, unsigned z_size = 1)
      : x(x_size), y(y_size), z(z_size) {}
};

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};

namespace actex::cuda_emulator {

constexpr int kWarpSize = 32;

// Runs `kernel` (a call of the kernel with its arguments) once for every thread of every
// block of `grid` × `block`, with `shared_bytes` of dynamic shared memory per block,
// before it returns whatever the `stream` (every stream is synchronous); `synchronising`:
// the kernel may synchronise, so its threads run as fibers. A launch CUDA would refuse
// (an empty or oversized block or grid, too much shared memory) runs nothing and sets
// the host thread's last error, as CUDA does.
void Launch(dim3 grid, dim3 block, size_t shared_bytes, const void* stream, bool synchronising,
            const std::function<void()>& kernel);

// The running CUDA thread's built-in variables (threadIdx, blockIdx, blockDim, gridDim).
const uint3& ThreadIndex();
const uint3& BlockIndex();
const dim3& BlockDim();
const dim3& GridDim();

// Waits until every live thread of the calling thread's warp (WarpSync) or block
// (BlockSync) has arrived at a sync of the same kind. Aborts, naming the kernel's
// block, when called from a kernel launched as not synchronising, or when some thread
// ends without arriving (a barrier CUDA would hang or misbehave at).
void WarpSync();
void BlockSync();

// The calling thread's lane in its warp.
int WarpLane();
// The 32 slots (one per lane, 8 bytes each) of the calling warp's next exchange, through
// which a shuffle passes values: each lane writes its slot, syncs the warp, reads. The
// exchanges alternate between two sets of slots, so that one warp sync per shuffle is
// enough: a lane writes the set of exchange n + 2 only after every lane has passed the
// sync of exchange n + 1, so after every lane has read exchange n's.
double* NextWarpExchangeSlots();

// The running block's dynamic shared memory (`extern __shared__` arrays): the launch's
// shared_bytes, filled with 0xff bytes (NaN as floats) at each block's start so that a
// read of a slot the block never wrote shows.
void* DynamicSharedMemory();

}  // namespace actex::cuda_emulator

#endif  // ACTEX_TESTS_CUDA_EMULATOR_EMULATED_LAUNCH_H_
