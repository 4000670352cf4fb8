// The huge-page allocator of the fast scheduler's big arrays
// (src/core/huge_pages.hpp): sizes, alignment, that allocations still go
// through the global operator new (the allocation test counts them), and that
// a big array's mapping carries the kernel's MADV_HUGEPAGE mark ("hg" in
// /proc/self/smaps VmFlags) unless the switch is off. The mark, not the
// AnonHugePages count, because whether the kernel finds free huge pages
// depends on the machine; the advice is what the code controls.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "alloc_counter.hpp"
#include "huge_pages.hpp"
#include "ufq/scheduler.hpp"

namespace ufq::detail {
namespace {

// The VmFlags of the mapping that holds `p`, "" when none is found.
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool thp_available() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return !s.empty() && s.find("[never]") == std::string::npos;
}

TEST(HugePages, SizesBelowTheThresholdAreUnchangedAboveRoundedToHugePages) {
  EXPECT_EQ(allocated_bytes(std::size_t{100}), 100U);
  EXPECT_EQ(allocated_bytes(kHugePageMinBytes - 1), kHugePageMinBytes - 1);
  EXPECT_EQ(allocated_bytes(kHugePageMinBytes), kHugePageMinBytes);
  EXPECT_EQ(allocated_bytes(kHugePageMinBytes + 1), kHugePageMinBytes + kHugePageBytes);
  EXPECT_EQ(allocated_bytes(5 * kHugePageBytes - 7), 5 * kHugePageBytes);
}

TEST(HugePages, BigArraysAreAlignedCountedAndAdvised) {
  const std::uint64_t before = test::allocation_count();
  HugeVector<std::uint64_t> v(3 * kHugePageBytes / sizeof(std::uint64_t) + 5);
  EXPECT_EQ(test::allocation_count(), before + 1);  // through the global operator new
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePageBytes, 0U);
  EXPECT_EQ(allocated_bytes(v), 4 * kHugePageBytes);
  for (std::size_t i = 0; i < v.size(); i += 512) v[i] = i;
  if (!thp_available()) GTEST_SKIP() << "transparent huge pages are off on this kernel";
  const std::string flags = vm_flags_of(v.data());
  ASSERT_FALSE(flags.empty()) << "no mapping found in /proc/self/smaps";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
}

TEST(HugePages, TheSwitchLeavesBigArraysWithoutTheAdvice) {
  if (!thp_available()) GTEST_SKIP() << "transparent huge pages are off on this kernel";
  set_huge_pages_enabled(false);
  HugeVector<std::uint64_t> v(3 * kHugePageBytes / sizeof(std::uint64_t));
  set_huge_pages_enabled(true);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePageBytes, 0U);
  const std::string flags = vm_flags_of(v.data());
  ASSERT_FALSE(flags.empty());
  EXPECT_EQ(flags.find(" hg"), std::string::npos) << flags;
}

// With their element's alignment: the flow table's alignas(64) groups must
// not straddle two cache lines.
TEST(HugePages, SmallArraysArePlainAllocationsWithTheirAlignment) {
  struct alignas(64) Line {
    char bytes[64];
  };
  const std::uint64_t before = test::allocation_count();
  HugeVector<std::uint32_t> v(1000);
  EXPECT_EQ(test::allocation_count(), before + 1);
  for (std::size_t i = 1; i < 20; ++i) {
    HugeVector<Line> w(i);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.data()) % 64, 0U) << i;
  }
  EXPECT_EQ(allocated_bytes(v), v.capacity() * sizeof(std::uint32_t));
}

// A scheduler whose flow array crosses the threshold (50,000 flows x 48 bytes)
// reports its arrays as allocated, huge-page rounding included.
TEST(HugePages, SchedulerMemoryIncludesTheRounding) {
  FqConfig cfg;
  cfg.limit = 100000;
  FqScheduler q(cfg);
  std::vector<FlowOwner> owners(50000);
  std::vector<Packet> pk(owners.size());
  for (std::size_t i = 0; i < owners.size(); ++i) {
    owners[i].id = i + 1;
    pk[i].len = 100;
    pk[i].owner = &owners[i];
    pk[i].tstamp = 1'000'000'000;
    ASSERT_EQ(q.enqueue(pk[i], 1000), Verdict::queued);
  }
  const std::size_t flow_array = 65536 * FqScheduler::flow_bytes();  // vector capacity after doubling
  // 3 MiB of records take two huge pages, 4 MiB: more than the records and
  // the other arrays together (under 4 MiB without the rounding).
  EXPECT_EQ(allocated_bytes(flow_array), 2 * kHugePageBytes);
  EXPECT_GE(q.memory_bytes(), allocated_bytes(flow_array));
  q.reset();
}

}  // namespace
}  // namespace ufq::detail
