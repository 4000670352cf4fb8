// Simulator speed: simulated packets per CPU second on the main job as the
// user runs it: the `ufq` command built beside this bench, `ufq sim` with no
// arguments (1000 EDT flows, 1 Mpps, 20 s simulated, the default fq of 5.7,
// 8 queues), and the same at timer_slack 0. The figure is the child process's
// CPU time (user + system, from wait4), so it counts everything the command
// does (parsing, the run, the report) and depends on other load less than
// wall-clock time; instruction counts (callgrind) are steadier still
// (docs/simulator.md, "Speed").
//
// UFQ_SIM_TOOL=/path/to/ufq runs another build of the command instead (e.g.
// an older one, for a before/after comparison in one session).
#include <benchmark/benchmark.h>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct ToolRun {
  double cpu_s = 0;
  std::uint64_t packets = 0;  // "packets: sent N" of the report
};

const char* tool_path() {
  const char* env = std::getenv("UFQ_SIM_TOOL");
  return env && *env ? env : UFQ_TOOL_PATH;
}

// Runs `ufq sim ARGS...` with its report on a pipe; returns its CPU time and the packets it sent.
ToolRun run_tool(const std::vector<std::string>& args) {
  std::vector<std::string> words{tool_path(), "sim"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (err != 0) {
    close(out[0]);
    throw std::runtime_error(std::string("cannot start ") + argv[0]);
  }
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(std::string(argv[0]) + " sim failed");

  ToolRun r;
  r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  const std::string key = "packets: sent ";
  const std::size_t at = report.find(key);
  if (at == std::string::npos) throw std::runtime_error("no \"packets: sent\" in the report");
  r.packets = std::stoull(report.substr(at + key.size()));
  return r;
}

void BM_MainJob(benchmark::State& state, std::vector<std::string> args) {
  std::uint64_t packets = 0;
  double cpu = 0;
  for (auto _ : state) {
    const ToolRun r = run_tool(args);
    state.SetIterationTime(r.cpu_s);
    packets += r.packets;
    cpu += r.cpu_s;
  }
  state.counters["sim_packets_per_cpu_s"] = static_cast<double>(packets) / cpu;
  state.counters["cpu_s"] = cpu / static_cast<double>(state.iterations());
}

}  // namespace

// The main job (timer_slack 10us, the default) and the same at slack 0 (more timer events per packet).
BENCHMARK_CAPTURE(BM_MainJob, slack_10us, std::vector<std::string>{})
    ->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_MainJob, slack_0, std::vector<std::string>{"fq", "timer_slack", "0"})
    ->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_MAIN();
