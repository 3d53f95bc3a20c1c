// The CUDA emulator's runtime API (cuda_runtime.h): one GPU whose memory is host memory,
// and streams and events that hold nothing, as every call runs its work at once.

#include <cstdlib>
#include <cstring>

#include "tests/cuda_emulator/cuda_runtime.h"
#include "tests/cuda_emulator/status_text.h"

namespace actex::cuda_emulator {
namespace {

// CUDA keeps the last error per host thread: a shard's thread sees its own launches'.
thread_local cudaError_t last_error = cudaSuccess;

constexpr size_t kAlignment = 256;  // cudaMalloc's
// The emulated GPU's memory, an H100's: an allocation past it fails as on a GPU, before
// the host is asked (whose allocator, or a sanitizer's, would take a huge request
// badly).
constexpr size_t kDeviceMemoryBytes = size_t{80} << 30;

// Each error the emulator returns, named and described as CUDA does.
constexpr StatusText<cudaError_t> kErrorTexts[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
};

StatusText<cudaError_t> TextOfError(cudaError_t error) {
  return TextOf(error, kErrorTexts, {error, "cudaErrorUnknown", "unknown error"});
}

}  // namespace

void SetLastError(cudaError_t error) { last_error = error; }

}  // namespace actex::cuda_emulator

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  *properties = cudaDeviceProp{};
  return cudaSuccess;
}

// Allocations are not counted: each may take the whole GPU, so all of it is free.
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  *free = *total = actex::cuda_emulator::kDeviceMemoryBytes;
  return cudaSuccess;
}

// Device memory is at most kDeviceMemoryBytes an allocation, filled with 0xff bytes (a NaN as
// floats), so that a read of memory the GPU code never wrote shows in its results.
cudaError_t cudaMalloc(void** pointer, size_t bytes) {
  using actex::cuda_emulator::kAlignment;
  if (bytes > actex::cuda_emulator::kDeviceMemoryBytes) return cudaErrorMemoryAllocation;
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  *pointer = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (*pointer == nullptr) return cudaErrorMemoryAllocation;
  std::memset(*pointer, 0xff, rounded);
  return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) {
  std::free(pointer);
  return cudaSuccess;
}

// Pinned host memory is host memory like any other here.
cudaError_t cudaMallocHost(void** pointer, size_t bytes) { return cudaMalloc(pointer, bytes); }

cudaError_t cudaFreeHost(void* pointer) { return cudaFree(pointer); }

cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind /*kind*/) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t /*stream*/) {
  return cudaMemcpy(to, from, bytes, kind);
}

cudaError_t cudaMemcpy2DAsync(void* to, size_t to_pitch, const void* from, size_t from_pitch,
                              size_t width, size_t height, cudaMemcpyKind /*kind*/,
                              cudaStream_t /*stream*/) {
  if (width > to_pitch || width > from_pitch) return cudaErrorInvalidValue;
  for (size_t row = 0; row < height; ++row) {
    std::memcpy(static_cast<char*>(to) + row * to_pitch,
                static_cast<const char*>(from) + row * from_pitch, width);
  }
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* to, int value, size_t bytes, cudaStream_t /*stream*/) {
  std::memset(to, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned /*flags*/) {
  *stream = new EmulatedStream;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t /*stream*/) { return cudaSuccess; }

cudaError_t cudaStreamWaitEvent(cudaStream_t /*stream*/, cudaEvent_t event, unsigned /*flags*/) {
  return event == nullptr ? cudaErrorInvalidValue : cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned /*flags*/) {
  *event = new EmulatedEvent;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t /*stream*/) {
  return event == nullptr ? cudaErrorInvalidValue : cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const cudaError_t error = actex::cuda_emulator::last_error;
  actex::cuda_emulator::last_error = cudaSuccess;
  return error;
}

const char* cudaGetErrorName(cudaError_t error) {
  return actex::cuda_emulator::TextOfError(error).name;
}

const char* cudaGetErrorString(cudaError_t error) {
  return actex::cuda_emulator::TextOfError(error).description;
}
