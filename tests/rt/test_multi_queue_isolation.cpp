// No queue's hot path writes memory another queue reads.
//
// This executable replaces the global operator new: while a thread has an
// arena selected, allocations come from that arena (page-aligned, bump
// allocated, never freed). The MultiQueuePacer object and what its
// constructor allocates for itself go to a shared arena; each queue's
// objects (its Pacer, scheduler tables, ring, egress, owners, packets and
// the counters its PacketDone writes) to the queue's own arena, through
// MultiQueueConfig::place. Then, for each queue in turn, every other queue's
// arena is made PROT_NONE and the shared arena read-only while a producer
// thread submits that queue's packets and its pacer thread schedules and
// sends them. A write (or a read) by that hot path to another queue's
// memory, or a write to the shared state (a shared counter, a shared free
// list), is a SIGSEGV: the test runs as a death test and must exit 0.
// Checked that it fails: a counter bumped in MultiQueuePacer::submit, or in
// the PacketDone wrapper, kills the child (the handler names the arena).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "ufq/rt/clock.hpp"
#include "ufq/rt/multi_queue_pacer.hpp"
#include "ufq/rt/sink_egress.hpp"

namespace {

struct Arena {
  std::byte* base = nullptr;
  std::size_t size = 0;
  std::size_t used = 0;
};
constexpr int kMaxArenas = 8;
Arena g_arenas[kMaxArenas];
std::atomic<int> g_arena_count{0};
thread_local Arena* t_arena = nullptr;

Arena* new_arena(std::size_t size) {
  const int i = g_arena_count.load();
  if (i >= kMaxArenas) std::abort();
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) std::abort();
  g_arenas[i] = Arena{static_cast<std::byte*>(p), size, 0};
  g_arena_count.store(i + 1);
  return &g_arenas[i];
}

void protect(Arena* a, int prot) {
  if (::mprotect(a->base, a->size, prot) != 0) std::abort();
}

bool in_arena(const void* p) {
  const int n = g_arena_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (p >= g_arenas[i].base && p < g_arenas[i].base + g_arenas[i].size) return true;
  return false;
}

void* arena_alloc(std::size_t n, std::size_t align) {
  Arena* a = t_arena;
  if (!a) return nullptr;
  align = align < 16 ? 16 : align;
  const std::size_t off = (a->used + align - 1) & ~(align - 1);
  if (off + n > a->size) {
    std::fputs("arena full\n", stderr);
    std::abort();
  }
  a->used = off + n;
  return a->base + off;
}

void* alloc(std::size_t n, std::size_t align) {
  if (void* p = arena_alloc(n, align)) return p;
  if (align <= alignof(std::max_align_t)) return std::malloc(n ? n : 1);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}

void release(void* p) {
  if (p && !in_arena(p)) std::free(p);
}

// Which arena a fault address is in (async-signal-safe).
void on_segv(int, siginfo_t* si, void*) {
  char msg[160];
  int which = -1;
  const int n = g_arena_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (si->si_addr >= g_arenas[i].base && si->si_addr < g_arenas[i].base + g_arenas[i].size) which = i;
  const int len = std::snprintf(msg, sizeof msg,
                                "SIGSEGV at %p: arena %d (0 = shared, 1.. = queue 0..) touched by another queue\n",
                                si->si_addr, which);
  if (len > 0) (void)!::write(2, msg, static_cast<std::size_t>(len));
  ::_exit(3);
}

}  // namespace

void* operator new(std::size_t n) {
  if (void* p = alloc(n, 16)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return alloc(n, 16); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return alloc(n, 16); }
void* operator new(std::size_t n, std::align_val_t al) {
  if (void* p = alloc(n, static_cast<std::size_t>(al))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) { return operator new(n, al); }
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return alloc(n, static_cast<std::size_t>(al));
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return alloc(n, static_cast<std::size_t>(al));
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }

using namespace ufq;
using namespace ufq::rt;

namespace {

constexpr std::uint32_t kQueues = 3;
constexpr std::size_t kFlowsPerQueue = 16, kPacketsPerFlow = 64;

// Per queue, all in the queue's arena.
struct QueueSide {
  SinkEgress egress;
  FlowOwner owners[kFlowsPerQueue];
  Packet packets[kFlowsPerQueue * kPacketsPerFlow];
  std::atomic<std::uint64_t> back{0};  // written by the queue's pacer thread
};

void wait_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Runs in the death test's child. Exits 0 when no queue touched another's memory.
[[noreturn]] void run_isolated_queues() {
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  ::sigaction(SIGSEGV, &sa, nullptr);

  Arena* shared = new_arena(16 << 20);
  Arena* arena[kQueues];
  for (auto& a : arena) a = new_arena(64 << 20);

  // Each queue's side in its arena; owners chosen so the default hash
  // steers them to that queue.
  QueueSide* side[kQueues];
  std::uint64_t next_id = 1;
  for (std::uint32_t q = 0; q < kQueues; ++q) {
    t_arena = arena[q];
    side[q] = new QueueSide;
    t_arena = nullptr;
    for (std::size_t f = 0; f < kFlowsPerQueue; ++f) {
      while (MultiQueuePacer::hash_queue(next_id, kQueues) != q) ++next_id;
      side[q]->owners[f].id = next_id++;
    }
  }

  t_arena = shared;
  MultiQueueConfig cfg;
  cfg.queues = kQueues;
  cfg.pacer.ring_capacity = 4096;
  cfg.pacer.idle_ns = 60 * kNsecPerSec;  // idle queues sleep through the test
  cfg.pacer.fq.flow_limit = 1000;
  cfg.place = [&arena](std::uint32_t q, const std::function<void()>& build) {
    Arena* outer = t_arena;
    t_arena = arena[q];
    build();
    t_arena = outer;
  };
  std::vector<Egress*> egress;
  for (auto* s : side) egress.push_back(&s->egress);
  // The callback reads the table (shared, read-only) and writes the queue's counter.
  auto* table = new QueueSide*[kQueues];
  for (std::uint32_t q = 0; q < kQueues; ++q) table[q] = side[q];
  auto* mq = new MultiQueuePacer(cfg, egress, [table](std::uint32_t q, Packet&, PacketFate, Time) {
    table[q]->back.fetch_add(1, std::memory_order_relaxed);
  });
  t_arena = nullptr;

  mq->start();
  // Every pacer thread ran once and went to sleep (nothing queued, idle 60 s).
  for (std::uint32_t q = 0; q < kQueues; ++q)
    while (mq->queue(q).counters().runs == 0) wait_ms(1);
  wait_ms(200);

  for (std::uint32_t q = 0; q < kQueues; ++q) {
    QueueSide& s = *side[q];
    const Time now = mono_now();
    for (std::size_t i = 0; i < kFlowsPerQueue * kPacketsPerFlow; ++i) {
      s.packets[i].len = 1242;
      s.packets[i].owner = &s.owners[i % kFlowsPerQueue];
      s.packets[i].tstamp = now + (i / kFlowsPerQueue) * 20 * kNsecPerUsec;
    }
    // Only this queue's memory is accessible; the router's is read-only.
    for (std::uint32_t r = 0; r < kQueues; ++r) protect(arena[r], r == q ? PROT_READ | PROT_WRITE : PROT_NONE);
    protect(shared, PROT_READ);
    std::thread producer([&] {
      for (auto& p : s.packets)
        while (!mq->submit(p)) std::this_thread::yield();
    });
    producer.join();
    const Time give_up = mono_now() + 20 * kNsecPerSec;
    while (s.back.load(std::memory_order_relaxed) < kFlowsPerQueue * kPacketsPerFlow && mono_now() < give_up)
      wait_ms(1);
    const std::uint64_t back = s.back.load();
    wait_ms(200);  // the pacer thread finishes its run and goes back to sleep
    for (std::uint32_t r = 0; r < kQueues; ++r) protect(arena[r], PROT_READ | PROT_WRITE);
    protect(shared, PROT_READ | PROT_WRITE);
    if (back != kFlowsPerQueue * kPacketsPerFlow) {
      std::fprintf(stderr, "queue %u: %llu of %zu packets came back\n", q,
                   static_cast<unsigned long long>(back), kFlowsPerQueue * kPacketsPerFlow);
      std::_Exit(4);
    }
  }
  mq->stop();
  const bool ok = mq->result().total.accounting.balanced() &&
                  mq->result().total.accounting.sent == kQueues * kFlowsPerQueue * kPacketsPerFlow;
  for (std::uint32_t q = 0; q < kQueues; ++q)
    if (mq->result().queues[q].accounting.sent != kFlowsPerQueue * kPacketsPerFlow) std::_Exit(5);
  std::fputs(ok ? "isolated\n" : "unbalanced\n", stderr);
  std::_Exit(ok ? 0 : 6);
}

}  // namespace

TEST(MultiQueueIsolationDeathTest, NoQueueTouchesAnotherQueuesMemoryOrWritesSharedState) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_isolated_queues(), ::testing::ExitedWithCode(0), "isolated");
}
