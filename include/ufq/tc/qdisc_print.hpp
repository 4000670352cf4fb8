// A whole fq qdisc as `tc [-s] qdisc show` and `tc -j [-s] qdisc show` print it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ufq/config.hpp"
#include "ufq/stats.hpp"

namespace ufq::tc {

inline constexpr std::uint32_t kRootParent = 0xFFFFFFFF;  // TC_H_ROOT

// What tc prints before the options.
struct QdiscHeader {
  std::uint16_t major = 0x8001;        // handle "8001:" (the first automatic handle)
  std::string dev;                     // "dev <name> " when set (tc omits it under a dev filter)
  std::uint32_t parent = kRootParent;  // "root", or "parent <maj>:<min>" (hex); 0 prints nothing
  std::uint32_t refcnt = 2;            // printed when != 1 (a root fq on one tx queue shows 2)
};

// "qdisc fq 8001: root refcnt 2 <format_fq_options(cfg)>\n".
std::string format_qdisc(const FqConfig& cfg, const QdiscHeader& header = {});

// The same followed by the statistics block (format_fq_stats), as `tc -s`.
std::string format_qdisc(const FqConfig& cfg, const FqStats& stats,
                         const QdiscHeader& header = {});

// One element of `tc -j qdisc show`'s array (tc prints `[` elements `]`):
// {"kind":"fq","handle":"8001:",["dev":..,]"root":true,"refcnt":2,"options":{...}}.
std::string format_qdisc_json(const FqConfig& cfg, const QdiscHeader& header = {});

// The same with the `tc -j -s` statistics members after "options".
std::string format_qdisc_json(const FqConfig& cfg, const FqStats& stats,
                              const QdiscHeader& header = {});

// An `mq` root with one fq child per transmit queue, as `tc -s qdisc show`
// prints it (iproute2 6.1 against Linux 6.1, recorded in
// tests/rt/data/kernel-mq-6.1.txt): the mq line ("qdisc mq 1: root "), its
// Sent/backlog lines, the sums of the children's generic counters (what mq
// itself reports), then each child: "qdisc fq 0: parent 1:<q+1> <options>"
// and its statistics. Children come in queue order (the kernel prints them
// in its hash table's order). Pre: cfgs.size() == stats.size() >= 1.
std::string format_mq_qdisc(std::span<const FqConfig> cfgs, std::span<const FqStats> stats,
                            std::uint16_t mq_major = 1);

// The same as `tc -j -s qdisc show`'s array: the mq object
// {"kind":"mq","handle":"1:","root":true,"options":{},"bytes":..,...,"qlen":..}
// then one format_qdisc_json object per child.
std::string format_mq_qdisc_json(std::span<const FqConfig> cfgs, std::span<const FqStats> stats,
                                 std::uint16_t mq_major = 1);

}  // namespace ufq::tc
