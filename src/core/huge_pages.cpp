#include "huge_pages.hpp"

#include <atomic>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ufq::detail {

namespace {
std::atomic<bool> g_huge_pages{true};
}  // namespace

bool huge_pages_enabled() { return g_huge_pages.load(std::memory_order_relaxed); }
void set_huge_pages_enabled(bool on) { g_huge_pages.store(on, std::memory_order_relaxed); }

namespace {
bool over_aligned(std::size_t align) { return align > __STDCPP_DEFAULT_NEW_ALIGNMENT__; }
}  // namespace

void* allocate_maybe_huge(std::size_t bytes, std::size_t align) {
  if (bytes < kHugePageMinBytes)
    return over_aligned(align) ? ::operator new(bytes, std::align_val_t{align}) : ::operator new(bytes);
  const std::size_t rounded = allocated_bytes(bytes);
  void* p = ::operator new(rounded, std::align_val_t{kHugePageBytes});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Before the first touch, so the pages are huge from their first fault.
  // Failure (a kernel without THP) leaves 4 KiB pages: nothing to undo.
  if (huge_pages_enabled()) (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void deallocate_maybe_huge(void* p, std::size_t bytes, std::size_t align) noexcept {
  if (bytes >= kHugePageMinBytes)
    ::operator delete(p, std::align_val_t{kHugePageBytes});
  else if (over_aligned(align))
    ::operator delete(p, std::align_val_t{align});
  else
    ::operator delete(p);
}

}  // namespace ufq::detail
