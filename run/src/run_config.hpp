// What `ufq run` tells the preload library, through the environment (the
// only channel that survives exec): docs/run.md lists the variables.
//   UFQ_RUN_FQ            tc fq options ("limit 1000 maxrate 10mbit ...")
//   UFQ_RUN_STATS         file that receives one JSON line per report
//   UFQ_RUN_STATS_SIGNAL  signal number that prints a report while running
//   UFQ_RUN_DRAIN         longest drain at exit and before exec, in ns
//   UFQ_RUN_QUIET         "1": no report block on stderr at exit
//   UFQ_RUN_NICE          the pacer thread's nice value (-20..19; below 0 needs CAP_SYS_NICE)
// `ufq run` has checked them before exec; a bad value found here (the
// variables set by hand) is said once on stderr and the default is used.
#pragma once

#include <string>

#include "ufq/config.hpp"
#include "ufq/time.hpp"

namespace ufq::run {

struct RunConfig {
  FqConfig fq;
  std::string fq_words;     // as given, for the report
  std::string stats_path;   // empty: no JSON
  int stats_signal = 0;     // 0: none
  Time drain_ns = 2 * kNsecPerSec;
  bool quiet = false;
  int nice = 0;
};

// Read once from the environment (on first use).
const RunConfig& run_config();

}  // namespace ufq::run
