// Counts heap allocations made through the global operator new, so tests can
// check that a steady state allocates nothing.
#pragma once

#include <cstdint>

namespace ufq::sim::test {

std::uint64_t allocation_count();

}  // namespace ufq::sim::test
