#ifndef ACTEX_GPU_DEVICE_MEMORY_H_
#define ACTEX_GPU_DEVICE_MEMORY_H_

#include <cstddef>
#include <expected>
#include <string>

namespace actex::gpu {

// Memory on the current GPU (cudaMalloc), or pinned host memory (cudaMallocHost) that
// copies to and from the GPU run asynchronously with. Owned, movable, grown on demand.
class DeviceMemory {
 public:
  enum class Kind { kDevice, kPinnedHost };
  explicit DeviceMemory(Kind kind = Kind::kDevice) : kind_(kind) {}
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();

  // At least `bytes`: a larger allocation replaces a smaller one (its contents are
  // lost), so call it before the memory is in use. Fails, naming the size, when CUDA
  // cannot allocate.
  std::expected<void, std::string> Reserve(size_t bytes);

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void Release();

  Kind kind_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace actex::gpu

#endif  // ACTEX_GPU_DEVICE_MEMORY_H_
