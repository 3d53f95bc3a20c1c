#include "gpu/device_memory.h"

#include <cuda_runtime.h>

#include <utility>

#include "gpu/cuda_status.h"

namespace actex::gpu {

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : kind_(other.kind_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    Release();
    kind_ = other.kind_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceMemory::~DeviceMemory() { Release(); }

void DeviceMemory::Release() {
  if (data_ == nullptr) return;
  // Errors here are a context already lost; the error that lost it was reported.
  if (kind_ == Kind::kDevice) {
    (void)cudaFree(data_);
  } else {
    (void)cudaFreeHost(data_);
  }
  data_ = nullptr;
  bytes_ = 0;
}

std::expected<void, std::string> DeviceMemory::Reserve(size_t bytes) {
  if (bytes <= bytes_) return {};
  Release();
  const bool device = kind_ == Kind::kDevice;
  auto allocated = CudaOk(device ? cudaMalloc(&data_, bytes) : cudaMallocHost(&data_, bytes),
                          std::string(device ? "allocating " : "allocating pinned host ") +
                              std::to_string(bytes) + " bytes");
  if (!allocated) {
    data_ = nullptr;
    return allocated;
  }
  bytes_ = bytes;
  return {};
}

}  // namespace actex::gpu
