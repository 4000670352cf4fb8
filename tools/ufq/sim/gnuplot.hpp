// Running gnuplot on a script without a shell: the script is handed over as
// one argv word and gnuplot runs in the plot directory, so directory names
// with spaces, quotes or `$(...)` are never interpreted.
#pragma once

#include <string>

namespace ufq::sim {

// Runs `gnuplot SCRIPT` (found on PATH) with `dir` as its working directory;
// its output goes to this process's stderr. Throws std::runtime_error naming
// the script when gnuplot cannot be started or exits with an error.
void run_gnuplot(const std::string& dir, const std::string& script);

// `s` as a gnuplot single-quoted string (a quote inside is doubled).
std::string gnuplot_quote(const std::string& s);

}  // namespace ufq::sim
