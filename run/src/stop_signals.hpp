// The signals that end or inspect a paced process (docs/run.md, "Processes"):
// SIGTERM, SIGINT and SIGHUP whose action is still the default when the
// pacer starts drain, report and then die of the signal; UFQ_RUN_STATS_SIGNAL
// prints a report while running. The handlers only write the signal number
// to a pipe (async-signal-safe); a thread of ours (all signals blocked) does
// the work. A process without a pacer (a fork child that sent nothing) gets
// the default action at once.
#pragma once

namespace ufq::run {

// With the process's pacer: the reporting thread and the handlers (once).
void start_stop_signals();
// In a fork child: the parent's thread and pipe are not ours.
void stop_signals_after_fork();

}  // namespace ufq::run
