// Memory for big arrays: what the system can still give, and an allocator for big, long-lived,
// streamed arrays (the keys cost table): 2 MiB-aligned and, on
// Linux with KOMA_HUGE_PAGES=1, advised to use transparent huge pages. A table read column by column touches dozens of
// 4 KiB pages per eight frames; with 2 MiB pages the TLB covers them and a million-frame table
// streams at memory speed. Small arrays go through the ordinary allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace koma {

/// Bytes of memory the system can still give (Linux: MemAvailable of /proc/meminfo), or 0 when
/// unknown. Algorithms that size big buffers check against it to fail with a clear message
/// instead of being killed.
std::uint64_t available_memory_bytes();

/// Whether big arrays ask for transparent huge pages: `KOMA_HUGE_PAGES=1` turns the advice on,
/// anything else (or unset) leaves it off. Off by default: on virtual machines that hand freed
/// memory back to the host (free page reporting, as on koma's build box) a fresh huge page is
/// almost always memory the host must fault in again, and first touch measured 3-5x slower than
/// with 4 KiB pages (docs/perf.md, "Long takes at disk speed"). Read once per process.
bool huge_pages_enabled() noexcept;

/// Advises the kernel to back the 2 MiB-aligned part of [data, data + bytes) with transparent huge
/// pages when huge_pages_enabled() (Linux; ignored elsewhere, and for ranges under 4 MiB). For big
/// arrays that are about to be written for the first time: a million-frame motion page-faults
/// 2 MiB at a time instead of 4 KiB.
void advise_huge_pages(void* data, std::size_t bytes) noexcept;

template <class T>
struct LargePageAllocator {
  using value_type = T;
  static constexpr std::size_t kPage = std::size_t{2} << 20;

  LargePageAllocator() = default;
  template <class U>
  LargePageAllocator(const LargePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kPage) {
      if (void* p = std::malloc(bytes ? bytes : 1)) return static_cast<T*>(p);
      throw std::bad_alloc();
    }
    const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
    void* p = std::aligned_alloc(kPage, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge_pages_enabled()) ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP it is ignored
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  /// resize() leaves trivial values unwritten (the owner writes every entry it reads): a table
  /// of hundreds of megabytes is not zero-filled first.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  bool operator==(const LargePageAllocator<U>&) const noexcept { return true; }
};

}  // namespace koma
