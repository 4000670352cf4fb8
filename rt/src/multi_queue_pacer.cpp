#include "ufq/rt/multi_queue_pacer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include "ufq/rt/multi_queue_totals.hpp"

namespace ufq::rt {

std::uint32_t MultiQueuePacer::hash_queue(std::uint64_t key, std::uint32_t queues) {
  // splitmix64's finalizer: consecutive ids spread evenly.
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ULL;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebULL;
  key ^= key >> 31;
  return static_cast<std::uint32_t>(((key >> 32) * queues) >> 32);
}

std::uint32_t MultiQueuePacer::steer_by_owner_hash(const FlowOwner* owner, std::uint32_t packet_hash,
                                                   std::uint32_t queues) {
  // Without an owner fq classifies by the packet hash; so does the steering.
  return hash_queue(owner ? owner->id : (std::uint64_t{1} << 63) | packet_hash, queues);
}

MultiQueuePacer::MultiQueuePacer(MultiQueueConfig cfg, std::span<Egress* const> egress, MultiQueueDone done)
    : cfg_(std::move(cfg)), done_(std::move(done)) {
  const std::uint32_t n = cfg_.queues;
  if (n == 0 || n > kMaxQueues)
    throw std::invalid_argument("MultiQueuePacer: queues " + std::to_string(n) + " is outside 1.." +
                                std::to_string(kMaxQueues));
  if (egress.size() != n)
    throw std::invalid_argument("MultiQueuePacer: " + std::to_string(egress.size()) + " egresses for " +
                                std::to_string(n) + " queues (one per queue)");
  for (std::size_t q = 0; q < n; ++q) {
    if (!egress[q]) throw std::invalid_argument("MultiQueuePacer: egress " + std::to_string(q) + " is null");
    for (std::size_t r = 0; r < q; ++r)
      if (egress[r] == egress[q])
        throw std::invalid_argument("MultiQueuePacer: queues " + std::to_string(r) + " and " +
                                    std::to_string(q) + " share an egress (one per queue)");
  }
  if (!cfg_.cpus.empty() && cfg_.cpus.size() != n)
    throw std::invalid_argument("MultiQueuePacer: " + std::to_string(cfg_.cpus.size()) + " cpus for " +
                                std::to_string(n) + " queues (none, or one per queue)");
  if (auto err = validate(cfg_.pacer.fq)) throw *err;
  queues_.resize(n);
  for (std::uint32_t q = 0; q < n; ++q) {
    PacerConfig pc = cfg_.pacer;
    if (!cfg_.cpus.empty()) pc.cpu = cfg_.cpus[q];
    auto build = [&, q] {
      PacketDone d = [this, q](Packet& p, PacketFate f, Time when) {
        if (done_) done_(q, p, f, when);
      };
      queues_[q] = std::make_unique<Queue>(std::move(pc), *egress[q], std::move(d));
    };
    if (cfg_.place)
      cfg_.place(q, build);
    else
      build();
    if (!queues_[q])
      throw std::invalid_argument("MultiQueuePacer: the placement did not build queue " + std::to_string(q));
  }
}

MultiQueuePacer::~MultiQueuePacer() { stop(); }

void MultiQueuePacer::start() {
  for (auto& q : queues_) q->pacer.start();
}

std::uint32_t MultiQueuePacer::queue_of(const FlowOwner* owner, std::uint32_t packet_hash) const {
  const std::uint32_t n = queues();
  if (!cfg_.steer) return steer_by_owner_hash(owner, packet_hash, n);
  const std::uint32_t q = cfg_.steer(owner, packet_hash);
  if (q >= n)
    throw std::out_of_range("MultiQueuePacer: the steering function chose queue " + std::to_string(q) +
                            " (owner id " + (owner ? std::to_string(owner->id) : std::string("none")) +
                            "); queues are 0.." + std::to_string(n - 1));
  return q;
}

bool MultiQueuePacer::submit(Packet& p, bool notify) {
  return queues_[queue_of(p)]->pacer.submit(p, notify);
}

void MultiQueuePacer::notify(std::uint32_t queue, Time earliest_due) {
  queues_.at(queue)->pacer.notify(earliest_due);
}

bool MultiQueuePacer::set_rate(FlowOwner& owner, Rate pacing_rate, Rate max_pacing_rate) {
  return queues_[queue_of(&owner, 0)]->pacer.set_rate(owner, pacing_rate, max_pacing_rate);
}

std::size_t MultiQueuePacer::change(const FqConfig& cfg) {
  if (auto err = validate(cfg)) throw *err;  // before any queue changes
  std::size_t trimmed = 0;
  for (auto& q : queues_) trimmed += q->pacer.change(cfg);
  return trimmed;
}

std::size_t MultiQueuePacer::change(std::uint32_t queue, const FqConfig& cfg) {
  if (queue >= queues())
    throw std::out_of_range("MultiQueuePacer::change: queue " + std::to_string(queue) + "; queues are 0.." +
                            std::to_string(queues() - 1));
  return queues_[queue]->pacer.change(cfg);
}

MultiQueueStats MultiQueuePacer::stats() {
  MultiQueueStats s;
  s.queues.reserve(queues_.size());
  for (auto& q : queues_) {
    s.queues.push_back(q->pacer.stats());
    add_to(s.total, s.queues.back());
  }
  s.total.config = s.queues.front().config;
  return s;
}

MultiQueueCounters MultiQueuePacer::counters() const {
  MultiQueueCounters c;
  c.queues.reserve(queues_.size());
  for (const auto& q : queues_) {
    c.queues.push_back(q->pacer.counters());
    add_to(c.total, c.queues.back());
  }
  return c;
}

void MultiQueuePacer::stop(Time drain_ns) {
  if (finished_) return;
  if (drain_ns > 0 && queues_.size() > 1) {
    // Each queue drains on its own: stopping them one after the other would
    // give the last ones up to N x drain_ns.
    std::vector<std::thread> stoppers;
    stoppers.reserve(queues_.size());
    for (auto& q : queues_) stoppers.emplace_back([&q, drain_ns] { q->pacer.stop(drain_ns); });
    for (auto& t : stoppers) t.join();
  } else {
    for (auto& q : queues_) q->pacer.stop(drain_ns);
  }
  finished_ = true;
  result_ = MultiQueueResult{};
  result_.queues.reserve(queues_.size());
  for (auto& q : queues_) {
    result_.queues.push_back(q->pacer.result());
    add_to(result_.total, result_.queues.back());
  }
}

}  // namespace ufq::rt
