// Counts heap allocations made through the global operator new (every form:
// plain, array, aligned, nothrow), so tests can check that a steady state
// allocates nothing. Link alloc_counter.cpp into the test executable: it
// replaces the global operators for the whole program.
#pragma once

#include <cstdint>

namespace ufq::test {

// Allocations since the program started.
std::uint64_t allocation_count();

}  // namespace ufq::test
