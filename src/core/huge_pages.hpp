// Huge pages for the fast scheduler's big arrays (flow records, flow-table
// groups, the throttled set's lane and heap): with a million flows those span
// tens of MiB, far beyond what the TLB maps with 4 KiB pages, so nearly every
// random access to them is also a TLB miss and a page walk that itself misses
// (docs/architecture.md#huge-pages). Linux maps transparent huge pages (2 MiB)
// where a program asks for them with madvise(MADV_HUGEPAGE) when
// /sys/kernel/mm/transparent_hugepage/enabled is `madvise` (the common
// default), and everywhere when it is `always`.
//
// HugePageAllocator, for std::vector: an allocation of at least
// kHugePageMinBytes is 2 MiB-aligned, rounded up to whole huge pages and
// advised MADV_HUGEPAGE; smaller ones are operator new with the element's
// alignment, as std::allocator would do (the same bytes as before). Both go through
// the global operator new (so allocation counters and malloc statistics see
// them); nothing else changes: the vector grows, and allocates, exactly when
// it did.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <vector>

namespace ufq::detail {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// Below this an array fits in few enough 4 KiB pages that the TLB keeps them.
inline constexpr std::size_t kHugePageMinBytes = kHugePageBytes;

// The bytes an allocation of `bytes` really takes: rounded up to whole huge
// pages from kHugePageMinBytes on (what memory_bytes() reports: once touched,
// a huge page is resident whole).
constexpr std::size_t allocated_bytes(std::size_t bytes) {
  if (bytes < kHugePageMinBytes) return bytes;
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

// Throws std::bad_alloc. A huge-page allocation whose advice the kernel
// refuses (no THP support) is kept with 4 KiB pages. `align`: the element's
// alignment (a power of two, at most kHugePageBytes).
void* allocate_maybe_huge(std::size_t bytes, std::size_t align);
// Pre: `p` came from allocate_maybe_huge(bytes, align), the same arguments.
void deallocate_maybe_huge(void* p, std::size_t bytes, std::size_t align) noexcept;

// Whether allocations from now on are advised MADV_HUGEPAGE (default true).
// Process-wide, for the benchmarks' A/B runs (the alignment and rounding stay,
// so only the page size differs). Arrays already allocated keep their pages.
bool huge_pages_enabled();
void set_huge_pages_enabled(bool on);

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  constexpr HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_maybe_huge(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { deallocate_maybe_huge(p, n * sizeof(T), alignof(T)); }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

// A vector's heap bytes, as allocated (capacity, rounded as above).
template <class T>
std::size_t allocated_bytes(const HugeVector<T>& v) {
  return allocated_bytes(v.capacity() * sizeof(T));
}

}  // namespace ufq::detail
