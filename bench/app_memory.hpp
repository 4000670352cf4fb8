// The application's memory in the benchmark harnesses: the owners (one per
// connection) and the packet ring, which the scheduler reads but does not
// own. With a million flows in shuffled order every packet reaches a random
// owner and a random packet; on 4 KiB pages each such access is also a TLB
// miss whose page walk misses too, a cost of the application's memory layout
// that the kernel's fq never pays (sockets and skbs live in the kernel's
// direct map, which is mapped with huge pages). By default the harness
// therefore asks for transparent huge pages for these arrays, as an
// application with many connections should (docs/embedding.md#huge-pages);
// UFQ_APP_HUGE_PAGES=0 keeps them on 4 KiB pages, so bench/ab_runs.py can
// show both in alternating processes of one binary (docs/results.md).
// Independent of UFQ_HUGE_PAGES, which sets the scheduler's own arrays.
#pragma once

#include <cstdlib>
#include <cstring>
#include <vector>

#include "huge_pages.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ufq::bench {

inline const bool kAppHugePages = [] {
  const char* v = std::getenv("UFQ_APP_HUGE_PAGES");
  return !(v && std::strcmp(v, "0") == 0);
}();

// std::allocator's bytes below 2 MiB; from 2 MiB on, 2 MiB-aligned, rounded up
// to whole huge pages and advised MADV_HUGEPAGE when kAppHugePages.
template <class T>
struct AppAllocator {
  using value_type = T;
  AppAllocator() = default;
  template <class U>
  constexpr AppAllocator(const AppAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < detail::kHugePageBytes) return std::allocator<T>{}.allocate(n);
    const std::size_t rounded = detail::allocated_bytes(bytes);
    void* p = ::operator new(rounded, std::align_val_t{detail::kHugePageBytes});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (kAppHugePages) (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < detail::kHugePageBytes)
      std::allocator<T>{}.deallocate(p, n);
    else
      ::operator delete(p, std::align_val_t{detail::kHugePageBytes});
  }
  template <class U>
  bool operator==(const AppAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using AppVector = std::vector<T, AppAllocator<T>>;

}  // namespace ufq::bench
