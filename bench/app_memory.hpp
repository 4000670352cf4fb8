// The application's memory in the benchmark harnesses: the owners (one per
// connection) and the packet ring, which the scheduler reads but does not
// own. With a million flows in shuffled order every packet reaches a random
// owner and a random packet; on 4 KiB pages each such access is also a TLB
// miss whose page walk misses too, a cost of the application's memory layout
// that the kernel's fq never pays (sockets and skbs live in the kernel's
// direct map, which is mapped with huge pages). By default the harness
// therefore asks for transparent huge pages for these arrays, as an
// application with many connections should (docs/embedding.md#huge-pages-for-your-connections-and-packets);
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

// The scheduler's huge-page allocation (src/core/huge_pages.hpp: 2 MiB-aligned
// and rounded from 2 MiB on), with the page advice set by kAppHugePages
// instead of UFQ_HUGE_PAGES.
template <class T>
struct AppAllocator {
  using value_type = T;
  AppAllocator() = default;
  template <class U>
  constexpr AppAllocator(const AppAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    void* p = detail::HugePageAllocator<T>{}.allocate(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Before the first touch; overrides whatever the scheduler's flag advised.
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= detail::kHugePageMinBytes)
      (void)::madvise(p, detail::allocated_bytes(bytes), kAppHugePages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { detail::HugePageAllocator<T>{}.deallocate(p, n); }
  template <class U>
  bool operator==(const AppAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using AppVector = std::vector<T, AppAllocator<T>>;

}  // namespace ufq::bench
