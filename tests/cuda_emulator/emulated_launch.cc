// The CUDA emulator's kernel launch (emulated_launch.h): blocks in turn, threads as calls
// or, where the kernel synchronises, as ucontext fibers run until each waits at a sync.

#include "tests/cuda_emulator/emulated_launch.h"

#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "tests/cuda_emulator/cuda_runtime.h"

namespace actex::cuda_emulator {
namespace {

// CUDA's limits on a launch (compute capability 9.0), and the opt-in shared memory.
constexpr unsigned kMaxThreadsPerBlock = 1024, kMaxBlockZ = 64;
constexpr unsigned kMaxGridX = 0x7fffffffu, kMaxGridYZ = 65535;
constexpr size_t kMaxSharedBytes = 227 * 1024;
// A fiber's stack: a kernel's locals (a lane's registers) are at most a few KB.
constexpr size_t kFiberStackBytes = 64 * 1024;

// One CUDA thread of a block that synchronises.
struct Fiber {
  enum class State { kRunnable, kAtWarpSync, kAtBlockSync, kDone };
  ucontext_t context;
  std::unique_ptr<char[]> stack = std::make_unique_for_overwrite<char[]>(kFiberStackBytes);
  uint3 index;
  State state = State::kRunnable;
  unsigned exchanges = 0;  // the shuffles it has made (NextWarpExchangeSlots)
};

// The launch a host thread runs, and where in it the running CUDA thread is.
struct RunningLaunch {
  dim3 grid, block;
  uint3 block_index, thread_index;
  const std::function<void()>* kernel = nullptr;
  std::vector<Fiber> fibers;  // [threads per block]; empty when the kernel never syncs
  int current_fiber = -1;     // the fiber running, -1 in the scheduler or a plain call
  ucontext_t scheduler;
  std::vector<double> warp_slots;        // [warps, 2, 32]: two sets of exchange slots
  std::vector<std::byte> shared_memory;  // [shared_bytes]
};

// CUDA's built-in variables are ambient: kernel code reads threadIdx without a parameter,
// and the kernels are gpu/'s own sources, unchanged. So the running launch is reached
// through this pointer, one per host thread: shards launch from threads of their own at
// the same time, each running a launch of its own.
thread_local RunningLaunch* running = nullptr;

uint3 ThreadOfLinearIndex(const dim3& block, unsigned linear) {
  return {linear % block.x, (linear / block.x) % block.y, linear / (block.x * block.y)};
}

int LinearThreadIndex() {
  const uint3& t = running->thread_index;
  const dim3& b = running->block;
  return static_cast<int>(t.x + b.x * (t.y + b.y * t.z));
}

void RunFiber() {
  RunningLaunch& launch = *running;
  (*launch.kernel)();
  Fiber& fiber = launch.fibers[launch.current_fiber];
  fiber.state = Fiber::State::kDone;
  swapcontext(&fiber.context, &launch.scheduler);
}

// Sets the fibers waiting at `state` in [begin, end) running again when every fiber
// there not done waits at it; returns whether it did.
bool ReleaseWhenAllArrived(std::vector<Fiber>& fibers, size_t begin, size_t end,
                           Fiber::State state) {
  bool any_waiting = false;
  for (size_t i = begin; i < end; ++i) {
    if (fibers[i].state == state) {
      any_waiting = true;
    } else if (fibers[i].state != Fiber::State::kDone) {
      return false;
    }
  }
  if (!any_waiting) return false;
  for (size_t i = begin; i < end; ++i) {
    if (fibers[i].state == state) fibers[i].state = Fiber::State::kRunnable;
  }
  return true;
}

// Runs the block's fibers until each has ended; a fiber left waiting is a barrier that
// not every thread reaches, which ends the process (CUDA would hang or misbehave).
void RunSynchronisingBlock(RunningLaunch& launch) {
  std::vector<Fiber>& fibers = launch.fibers;
  for (size_t t = 0; t < fibers.size(); ++t) {
    Fiber& fiber = fibers[t];
    fiber.index = ThreadOfLinearIndex(launch.block, static_cast<unsigned>(t));
    fiber.state = Fiber::State::kRunnable;
    fiber.exchanges = 0;
    getcontext(&fiber.context);
    fiber.context.uc_stack.ss_sp = fiber.stack.get();
    fiber.context.uc_stack.ss_size = kFiberStackBytes;
    fiber.context.uc_link = nullptr;
    makecontext(&fiber.context, RunFiber, 0);
  }
  bool released = true;
  while (released) {
    for (size_t t = 0; t < fibers.size(); ++t) {
      if (fibers[t].state != Fiber::State::kRunnable) continue;
      launch.current_fiber = static_cast<int>(t);
      launch.thread_index = fibers[t].index;
      swapcontext(&launch.scheduler, &fibers[t].context);
    }
    launch.current_fiber = -1;
    released = false;
    for (size_t warp = 0; warp < fibers.size(); warp += kWarpSize) {
      released |= ReleaseWhenAllArrived(fibers, warp, std::min(fibers.size(), warp + kWarpSize),
                                        Fiber::State::kAtWarpSync);
    }
    released |= ReleaseWhenAllArrived(fibers, 0, fibers.size(), Fiber::State::kAtBlockSync);
  }
  for (const Fiber& fiber : fibers) {
    if (fiber.state == Fiber::State::kDone) continue;
    const uint3& b = launch.block_index;
    std::fprintf(stderr,
                 "cuda emulator: block (%u,%u,%u) deadlocked: thread (%u,%u,%u) waits at a %s "
                 "sync that not every live thread of its %s reaches\n",
                 b.x, b.y, b.z, fiber.index.x, fiber.index.y, fiber.index.z,
                 fiber.state == Fiber::State::kAtWarpSync ? "warp" : "block",
                 fiber.state == Fiber::State::kAtWarpSync ? "warp" : "block");
    std::abort();
  }
}

// The fiber of the CUDA thread running; ends the process where the kernel was launched
// as not synchronising (a plain call cannot wait for the other threads).
Fiber& CurrentFiber() {
  if (running == nullptr || running->current_fiber < 0) {
    std::fprintf(stderr,
                 "cuda emulator: a kernel synchronises but was launched as one that does not "
                 "(translate_launches.py found no shuffle or sync in it)\n");
    std::abort();
  }
  return running->fibers[running->current_fiber];
}

void WaitAt(Fiber::State state) {
  Fiber& fiber = CurrentFiber();
  fiber.state = state;
  swapcontext(&fiber.context, &running->scheduler);
}

}  // namespace

void Launch(dim3 grid, dim3 block, size_t shared_bytes, const void* /*stream*/, bool synchronising,
            const std::function<void()>& kernel) {
  const unsigned threads = block.x * block.y * block.z;
  if (threads == 0 || threads > kMaxThreadsPerBlock || block.z > kMaxBlockZ || grid.x == 0 ||
      grid.y == 0 || grid.z == 0 || grid.x > kMaxGridX || grid.y > kMaxGridYZ ||
      grid.z > kMaxGridYZ || shared_bytes > kMaxSharedBytes) {
    SetLastError(cudaErrorInvalidConfiguration);
    return;
  }
  RunningLaunch launch;
  launch.grid = grid;
  launch.block = block;
  launch.kernel = &kernel;
  if (synchronising) launch.fibers.resize(threads);
  launch.warp_slots.assign((threads + kWarpSize - 1) / kWarpSize * 2 * kWarpSize, 0.0);
  launch.shared_memory.resize(shared_bytes);
  running = &launch;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        launch.block_index = {x, y, z};
        // Every block starts from garbage, as on a GPU (0xff bytes: NaN floats).
        std::ranges::fill(launch.shared_memory, std::byte{0xff});
        if (synchronising) {
          RunSynchronisingBlock(launch);
          continue;
        }
        for (unsigned t = 0; t < threads; ++t) {
          launch.thread_index = ThreadOfLinearIndex(block, t);
          kernel();
        }
      }
    }
  }
  running = nullptr;
}

const uint3& ThreadIndex() { return running->thread_index; }
const uint3& BlockIndex() { return running->block_index; }
const dim3& BlockDim() { return running->block; }
const dim3& GridDim() { return running->grid; }

void WarpSync() { WaitAt(Fiber::State::kAtWarpSync); }
void BlockSync() { WaitAt(Fiber::State::kAtBlockSync); }

int WarpLane() { return LinearThreadIndex() % kWarpSize; }

double* NextWarpExchangeSlots() {
  const unsigned set = CurrentFiber().exchanges++ % 2;
  const int warp = LinearThreadIndex() / kWarpSize;
  return running->warp_slots.data() + (2 * warp + set) * kWarpSize;
}

void* DynamicSharedMemory() { return running->shared_memory.data(); }

}  // namespace actex::cuda_emulator
