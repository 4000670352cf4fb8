// The `ufq` command. Each subcommand lives in tools/ufq/cmd_<name>.cpp and
// defines `void ufq::cli::add_<name>_command(Commands&)`; to add one, add a
// line `X(<name>) \` to the list below.
#include "command.hpp"

// `pace` needs the real-time runtime, which a build may leave out (UFQ_BUILD_RT=OFF).
#if UFQ_HAVE_RT
#define UFQ_RT_SUBCOMMANDS(X) X(pace) UFQ_RUN_SUBCOMMANDS(X)
#else
#define UFQ_RT_SUBCOMMANDS(X)
#endif

// `run` needs the preload library (UFQ_BUILD_RUN=OFF leaves it out).
#if UFQ_HAVE_RUN
#define UFQ_RUN_SUBCOMMANDS(X) X(run)
#else
#define UFQ_RUN_SUBCOMMANDS(X)
#endif

// `sim` needs the simulator, which a build may leave out (UFQ_BUILD_SIM=OFF).
#if UFQ_HAVE_SIM
#define UFQ_SIM_SUBCOMMANDS(X) X(sim)
#else
#define UFQ_SIM_SUBCOMMANDS(X)
#endif

// `gaps` needs libpcap, which a build may lack.
#if UFQ_HAVE_GAPS
#define UFQ_GAPS_SUBCOMMANDS(X) X(gaps)
#else
#define UFQ_GAPS_SUBCOMMANDS(X)
#endif

#define UFQ_SUBCOMMANDS(X) \
  X(show)                  \
  UFQ_GAPS_SUBCOMMANDS(X)  \
  UFQ_SIM_SUBCOMMANDS(X)   \
  UFQ_RT_SUBCOMMANDS(X)    \
  /* one X(name) line per subcommand, above this comment */

#define UFQ_DECLARE_COMMAND(name) void add_##name##_command(Commands&);
#define UFQ_ADD_COMMAND(name) ufq::cli::add_##name##_command(commands);

namespace ufq::cli {
UFQ_SUBCOMMANDS(UFQ_DECLARE_COMMAND)
}  // namespace ufq::cli

int main(int argc, char** argv) {
  CLI::App app{"ufq: Linux's sch_fq packet scheduler in user space"};
  app.set_version_flag("--version", "ufq " UFQ_VERSION);  // the CMake project's version
  ufq::cli::Commands commands(app);
  UFQ_SUBCOMMANDS(UFQ_ADD_COMMAND)
  return commands.run(argc, argv);
}
