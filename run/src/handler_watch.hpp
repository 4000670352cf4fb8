// Noticing that a signal handler of the program ran on this thread, so that
// a send waiting for room in fq returns EINTR as a blocked UDP send does
// (docs/run.md, "Backpressure"). sigaction() and signal() are wrapped: the
// program's handler is installed behind a trampoline that counts, per
// thread, the handlers that ran without SA_RESTART, then calls it. What the
// program reads back (the old action) is its own handler and flags.
#pragma once

#include <signal.h>

#include <cstdint>

namespace ufq::run {

// Handlers without SA_RESTART that ran on the calling thread so far.
std::uint64_t interrupting_handlers();

// The wrapped calls (interpose.cpp exports them).
int watched_sigaction(int sig, const struct sigaction* act, struct sigaction* old);
sighandler_t watched_signal(int sig, sighandler_t handler);

}  // namespace ufq::run
