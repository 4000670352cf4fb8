// A whole fq qdisc as `tc [-s] qdisc show` and `tc -j [-s] qdisc show` print it.
#pragma once

#include <cstdint>
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

}  // namespace ufq::tc
