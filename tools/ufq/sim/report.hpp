// How a simulation is shown: vmstat-like lines, a summary, the before/after
// table of --compare, JSON, and gnuplot plots.
#pragma once

#include <string>
#include <vector>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {

// Header of the vmstat-like lines; one line per sample.
std::string vmstat_header();
std::string vmstat_line(const SimResult& r, const Sample& s);
// Totals over the whole run.
std::string summary(const SimResult& r);
// The soak view: one line per sample of fq's flows (held, idle, throttled),
// flows started and collected so far, and whether fq's packet books balance
// (offered = dequeued + drops + purged + qlen); with `rss`, the process's
// resident set too (not deterministic). Then totals: flows created and
// collected, the most fq held, the samples whose books did not balance.
std::string soak_header(bool rss);
std::string soak_line(const Sample& s, bool rss);
std::string soak_summary(const SimResult& r);

// The seed's before/after comparison: one column per run, ratios to the first.
std::string compare_table(const std::vector<std::string>& labels, const std::vector<SimResult>& runs);

// One JSON object per run (keys in docs/simulator.md); `label` is the
// compared value, or empty. The "qdisc" member is tc -j -s's text verbatim.
std::string to_json(const SimResult& r, const std::string& label = {});

// Writes data files and plots (PNG and SVG) into `dir` with gnuplot
// (plots.cpp): interrupts/s over time per run, lateness CDF, batch-size
// histogram, and with several runs the sweep (interrupts/s and p99 lateness
// against the swept value `swept`, on a numeric axis when its values are
// numbers, times or rates). Returns the files written. Throws
// std::runtime_error when gnuplot cannot run or fails.
std::vector<std::string> write_plots(const std::string& dir, const std::string& swept,
                                     const std::vector<std::string>& labels,
                                     const std::vector<SimResult>& runs);

}  // namespace ufq::sim
