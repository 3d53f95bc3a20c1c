#ifndef ACTEX_TESTS_CUDA_EMULATOR_CUDA_RUNTIME_H_
#define ACTEX_TESTS_CUDA_EMULATOR_CUDA_RUNTIME_H_

// The CUDA emulator's stand-in for CUDA's runtime header: what gpu/ uses of the device
// language (qualifiers, built-in variables, warp shuffles, barriers, rounded float
// operations) and of the runtime API (devices, memory, streams, events, errors), on the
// CPU. One emulated GPU; streams are synchronous (work runs when it is queued), so
// stream races are not detected. See README.md.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tests/cuda_emulator/emulated_launch.h"

// Device code is plain C++ here: the qualifiers say nothing to a CPU.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
// A static __shared__ array is one per block; blocks run one at a time on a host thread,
// and host threads (a shard each) launch at once, hence one per host thread.
#define __shared__ static thread_local

#define threadIdx (::actex::cuda_emulator::ThreadIndex())
#define blockIdx (::actex::cuda_emulator::BlockIndex())
#define blockDim (::actex::cuda_emulator::BlockDim())
#define gridDim (::actex::cuda_emulator::GridDim())

inline void __syncthreads() { actex::cuda_emulator::BlockSync(); }
inline void __syncwarp(unsigned /*mask*/ = 0xffffffffu) { actex::cuda_emulator::WarpSync(); }

namespace actex::cuda_emulator {
// What every shuffle is: each lane of the warp offers `value`, and gets the value that
// lane `source_lane` offered (its own where source_lane is outside the warp).
template <typename T>
T ExchangeInWarp(T value, int source_lane) {
  static_assert(sizeof(T) <= sizeof(double), "a shuffle moves at most 8 bytes");
  double* slots = NextWarpExchangeSlots();
  std::memcpy(&slots[WarpLane()], &value, sizeof(T));
  WarpSync();  // every lane has written its slot
  T result = value;
  if (source_lane >= 0 && source_lane < kWarpSize) {
    std::memcpy(&result, &slots[source_lane], sizeof(T));
  }
  return result;
}
}  // namespace actex::cuda_emulator

// The shuffles gpu/ uses, over the whole warp: every live lane takes part whatever `mask`
// says, and the width is 32.
template <typename T>
T __shfl_sync(unsigned /*mask*/, T value, int source_lane) {
  return actex::cuda_emulator::ExchangeInWarp(value, source_lane & 31);
}
template <typename T>
T __shfl_xor_sync(unsigned /*mask*/, T value, int lane_mask) {
  return actex::cuda_emulator::ExchangeInWarp(value, actex::cuda_emulator::WarpLane() ^ lane_mask);
}
template <typename T>
T __shfl_down_sync(unsigned /*mask*/, T value, unsigned delta) {
  return actex::cuda_emulator::ExchangeInWarp(
      value, actex::cuda_emulator::WarpLane() + static_cast<int>(delta));
}

// Rounded float operations: IEEE single operations, never fused (the emulated kernels
// are compiled with -ffp-contract=off, as these intrinsics forbid nvcc to fuse).
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __uint_as_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}
inline uint32_t __float_as_uint(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
// CUDA's device min and max, which gpu/'s kernels call unqualified.
template <typename T>
T min(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
T max(T a, T b) {
  return a < b ? b : a;
}

// The runtime API gpu/ calls, with CUDA's signatures and contracts, save that every
// call has done its work when it returns (runtime_api.cc).
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevice = 101,
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost,
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice,
  cudaMemcpyDefault,
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
struct EmulatedStream {};
struct EmulatedEvent {};
using cudaStream_t = EmulatedStream*;
using cudaEvent_t = EmulatedEvent*;
constexpr unsigned cudaStreamDefault = 0, cudaStreamNonBlocking = 1;
constexpr unsigned cudaEventDefault = 0, cudaEventDisableTiming = 2;
// The emulated GPU: an H100's figures, for code that reads them.
struct cudaDeviceProp {
  char name[256] = "emulated GPU (CPU)";
  size_t totalGlobalMem = size_t{80} << 30;
  size_t sharedMemPerBlock = 48 * 1024;
  size_t sharedMemPerBlockOptin = 227 * 1024;
  int multiProcessorCount = 132, major = 9, minor = 0;
  int maxThreadsPerBlock = 1024, warpSize = 32;
};

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);
cudaError_t cudaMalloc(void** pointer, size_t bytes);
cudaError_t cudaFree(void* pointer);
cudaError_t cudaMallocHost(void** pointer, size_t bytes);
cudaError_t cudaFreeHost(void* pointer);
cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2DAsync(void* to, size_t to_pitch, const void* from, size_t from_pitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream = nullptr);
cudaError_t cudaMemsetAsync(void* to, int value, size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);

namespace actex::cuda_emulator {
// Makes `error` the calling host thread's last error (what cudaGetLastError returns and
// clears), as CUDA does for a launch it refuses.
void SetLastError(cudaError_t error);
}  // namespace actex::cuda_emulator

template <typename T>
cudaError_t cudaMalloc(T** pointer, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(pointer), bytes);
}
template <typename T>
cudaError_t cudaMallocHost(T** pointer, size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(pointer), bytes);
}
// Every kernel may have the opt-in maximum of shared memory: Launch checks against it.
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel /*kernel*/, cudaFuncAttribute /*attribute*/,
                                 int /*value*/) {
  return cudaSuccess;
}

#endif  // ACTEX_TESTS_CUDA_EMULATOR_CUDA_RUNTIME_H_
