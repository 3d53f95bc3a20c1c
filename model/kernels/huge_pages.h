#ifndef ACTEX_MODEL_KERNELS_HUGE_PAGES_H_
#define ACTEX_MODEL_KERNELS_HUGE_PAGES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace actex {

// An allocator for a forward's large activation buffers: blocks of 2 MiB and more are
// aligned to 2 MiB and offered to the kernel's transparent huge pages (madvise
// MADV_HUGEPAGE, which Debian's default "madvise" setting honours). The products read
// and write rows thousands of bytes apart ([tokens, 4864] floats: a row every 19 KiB),
// so with 4 KiB pages nearly every row of a tile is its own TLB miss; a 2 MiB page holds
// a hundred such rows. Where the kernel declines, the memory is ordinary pages.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t count) {
    const size_t bytes = count * sizeof(T);
    if (bytes < kHugePage) return std::allocator<T>().allocate(count);
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* block = std::aligned_alloc(kHugePage, rounded);
    if (block == nullptr) throw std::bad_alloc();
    madvise(block, rounded, MADV_HUGEPAGE);  // advice only: its failure changes nothing
    return static_cast<T*>(block);
  }
  void deallocate(T* block, size_t count) {
    if (count * sizeof(T) < kHugePage) {
      std::allocator<T>().deallocate(block, count);
    } else {
      std::free(block);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

// A growable buffer in huge pages where it is large enough.
template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace actex

#endif  // ACTEX_MODEL_KERNELS_HUGE_PAGES_H_
