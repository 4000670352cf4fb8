#include "run_config.hpp"

#include <cstdlib>

#include "notices.hpp"
#include "ufq/tc/fq_options.hpp"

namespace ufq::run {
namespace {

RunConfig load() {
  RunConfig c;
  if (const char* fq = std::getenv("UFQ_RUN_FQ")) {
    c.fq_words = fq;
    const auto cfg = tc::parse_fq_line(fq);
    if (cfg)
      c.fq = *cfg;
    else
      say("UFQ_RUN_FQ: " + cfg.error().message + "; using fq's defaults");
  }
  if (const char* s = std::getenv("UFQ_RUN_STATS")) c.stats_path = s;
  if (const char* s = std::getenv("UFQ_RUN_STATS_SIGNAL")) {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end != s && *end == '\0' && v > 0 && v < 65)
      c.stats_signal = static_cast<int>(v);
    else
      say(std::string("UFQ_RUN_STATS_SIGNAL: \"") + s + "\" is not a signal number in 1..64; ignored");
  }
  if (const char* s = std::getenv("UFQ_RUN_DRAIN")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s, &end, 10);
    if (end != s && *end == '\0' && v <= 3600ULL * kNsecPerSec)
      c.drain_ns = static_cast<Time>(v);
    else
      say(std::string("UFQ_RUN_DRAIN: \"") + s + "\" is not nanoseconds in 0..3600000000000; using 2 s");
  }
  if (const char* s = std::getenv("UFQ_RUN_QUIET")) c.quiet = std::string(s) == "1";
  if (const char* s = std::getenv("UFQ_RUN_NICE")) {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end != s && *end == '\0' && v >= -20 && v <= 19)
      c.nice = static_cast<int>(v);
    else
      say(std::string("UFQ_RUN_NICE: \"") + s + "\" is not a nice value in -20..19; ignored");
  }
  return c;
}

}  // namespace

const RunConfig& run_config() {
  static const RunConfig c = load();
  return c;
}

}  // namespace ufq::run
