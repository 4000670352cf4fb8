// `ufq sim`: the seed's timer-slack experiment (and others) in the simulator.
//
//   ufq sim [workload and machine options] [--compare KEY=V1,V2,...] [--jobs N]
//           [--json] [--plot DIR] [--tc-stats] [fq OPTIONS...]
//
// With no arguments: 1000 EDT-paced flows, 1,000,000 packets/s, 20 s, the
// default fq of the seed's kernel (timer_slack 10us), vmstat-like lines every
// 2 simulated seconds and a summary.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <tuple>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "process_memory.hpp"
#include "sim_budget.hpp"
#include "sim_sweep.hpp"
#include "sim/report.hpp"
#include "ufq/sim/simulation.hpp"
#include "ufq/sim/simulation_reference.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::cli {
namespace {

struct SimArgs {
  std::string traffic = "edt";
  std::string duration = "20s", interval = "2s", irq_latency = "1us", nic_latency, tx_usecs;
  // The guest model's times (ufq/sim/guest.hpp), as given; the defaults are GuestConfig's.
  std::string guest_send_cost = "16us", guest_epoll_cost = "2us", guest_wake_latency = "5us",
              guest_wake_latency_mean = "10us", guest_lead = "0", guest_send_for = "0", softirq_cost = "7us";
  // The traffic models' own settings (--on, --pcap, --csv, ...), as given.
  std::map<std::string, std::string> model_options;        // bound to the options (every one)
  std::map<std::string, std::string> given_model_options;  // those given
  std::string compat = "5.7";
  std::string scheduler = "fast";
  std::string compare;
  std::string plot_dir;
  std::string nic_rate;
  bool json = false, tc_stats = false, quiet = false, soak = false, rss = false;
  unsigned jobs = 1;  // --jobs, when given (else usable_cpus())
};

// A duration: bare = seconds, or tc's time suffixes (s, ms, us, ns).
bool parse_duration(const std::string& word, Time& out) {
  const auto t = parse_time_arg(word, 1e9);
  if (t) out = *t;
  return t.has_value();
}

// The models that declare the setting `name`, as "--traffic a" or "--traffic a or --traffic b".
std::string models_declaring(const std::string& name) {
  std::string s;
  for (const sim::TrafficModelInfo* m : sim::traffic_models())
    for (const sim::TrafficParam& p : m->params)
      if (p.name == name) s += (s.empty() ? "--traffic " : " or --traffic ") + m->name;
  return s;
}

// An option given that the chosen traffic model would never read: refused,
// so a forgotten or mistyped --traffic does not silently run another
// experiment. Returns the refusal, or "" when every given option is used.
// Both lists come from the models' declarations (ufq/sim/traffic.hpp).
std::string option_unused_by_traffic(const CLI::App& sub, const sim::TrafficModelInfo& model) {
  const auto given = [&](const std::string& option) -> std::string {
    const CLI::Option* o = sub.get_option_no_throw(option);
    return o && o->count() > 0 && !o->results().empty() ? "\"" + o->results().back() + "\"" : std::string();
  };
  for (const sim::TrafficModelInfo* m : sim::traffic_models())
    for (const sim::TrafficParam& p : m->params) {
      const bool mine = std::any_of(model.params.begin(), model.params.end(),
                                    [&](const sim::TrafficParam& q) { return q.name == p.name; });
      if (mine) continue;
      if (const std::string v = given("--" + p.name); !v.empty())
        return "--" + p.name + " " + v + ": only used with " + models_declaring(p.name) + " (got --traffic " +
               model.name + ")";
    }
  for (const sim::IgnoredSetting& i : model.ignores)
    if (const std::string v = given("--" + i.setting); !v.empty())
      return "--" + i.setting + " " + v + ": not used with --traffic " + model.name + " (" + i.why + ")";
  return "";
}

// The model's settings from their options, parsed by their declared type;
// the library checks the values (sim::validate).
std::string read_model_options(const SimArgs& a, const sim::TrafficModelInfo& model, sim::SimConfig& cfg) {
  for (const sim::TrafficParam& p : model.params) {
    const auto given = a.given_model_options.find(p.name);
    if (given == a.given_model_options.end()) continue;
    switch (p.type) {
      case sim::TrafficParam::Type::time: {
        Time t = 0;
        if (!parse_duration(given->second, t))
          return "--" + p.name + " \"" + given->second + "\": expected a time from " + sim::format_time(p.min) +
                 " to " + sim::format_time(p.max) + " (e.g. " + sim::format_time(p.default_time) + ")";
        cfg.traffic_settings[p.name] = t;
        break;
      }
      case sim::TrafficParam::Type::file:
        cfg.traffic_settings[p.name] = given->second;
        break;
      case sim::TrafficParam::Type::count: {
        const std::string& w = given->second;
        char* end = nullptr;
        errno = 0;
        const unsigned long long n = w.empty() || w[0] == '-' ? 0 : std::strtoull(w.c_str(), &end, 10);
        if (w.empty() || w[0] == '-' || !end || *end != '\0' || errno == ERANGE)
          return "--" + p.name + " \"" + w + "\": expected an integer from " + std::to_string(p.min) + " to " +
                 std::to_string(p.max) + " (e.g. " + std::to_string(p.default_time) + ")";
        cfg.traffic_settings[p.name] = static_cast<Time>(n);
        break;
      }
    }
  }
  return "";
}

// A refusal of the library (sim::SimConfigError) in the tool's words: its
// setting is the option of the same name, and a time is shown as it was given.
std::string as_option(const sim::SimConfigError& e, const SimArgs& a, const sim::TrafficModelInfo& model) {
  std::string value = e.value().empty() ? std::string("\"\"") : e.value();
  const auto given = a.given_model_options.find(e.setting());
  const bool time = std::any_of(model.params.begin(), model.params.end(), [&](const sim::TrafficParam& p) {
    return p.name == e.setting() && p.type == sim::TrafficParam::Type::time;
  });
  if (given != a.given_model_options.end() && !given->second.empty() && (time || e.value().empty()))
    value = "\"" + given->second + "\"";
  const auto option = [](const std::string& setting) { return "--" + setting; };
  return "--" + e.setting() + " " + sim::SimConfigError::with_names(value, option) +
         ": expected " + sim::SimConfigError::with_names(e.expected(), option);
}

// A word that is a whole number the option's type can hold; the range is the
// library's (sim::setting_range), checked by sim::validate and quoted here.
CLI::Validator count_word(std::string_view setting, std::uint64_t type_max) {
  const std::string range = sim::setting_range(setting).describe();
  return CLI::Validator(
      [range, type_max](std::string& word) -> std::string {
        const std::string refusal = "\"" + word + "\" is not an integer in " + range;
        if (word.empty() || word.size() > 20 ||
            !std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return refusal;
        errno = 0;
        const unsigned long long v = std::strtoull(word.c_str(), nullptr, 10);
        return errno != 0 || v > type_max ? refusal : std::string();
      },
      range);
}

// A word that is a finite number; the range is the library's, as above.
CLI::Validator number_word(std::string_view setting) {
  const std::string range = sim::setting_range(setting).describe();
  return CLI::Validator(
      [range](std::string& word) -> std::string {
        char* end = nullptr;
        const double v = word.empty() ? NAN : std::strtod(word.c_str(), &end);
        if (word.empty() || *end != '\0' || !std::isfinite(v)) return "\"" + word + "\" is not a number: expected " + range;
        return std::string();
      },
      range);
}

// A time option's word: parsed here, its range checked by sim::validate.
std::string read_time(const char* setting, const std::string& word, Time& out) {
  if (parse_duration(word, out)) return "";
  return std::string("--") + setting + " \"" + word + "\": expected " + sim::setting_range(setting).describe();
}

int run_sim(SimArgs& a, sim::SimConfig& cfg, CLI::App& sub) {
  // The models' options given on the command line.
  a.given_model_options.clear();
  for (const auto& [name, text] : a.model_options)
    if (const CLI::Option* o = sub.get_option_no_throw("--" + name); o && o->count() > 0)
      a.given_model_options[name] = text;
  const sim::TrafficModelInfo* model = sim::find_traffic_model(a.traffic);
  if (!model) return fail("--traffic \"" + a.traffic + "\": expected " + sim::traffic_model_names());
  cfg.traffic = model->name;
  if (const std::string unused = option_unused_by_traffic(sub, *model); !unused.empty()) return fail(unused);
  if (const std::string bad = read_model_options(a, *model, cfg); !bad.empty()) return fail(bad);

  // Workload and machine: times and rates parsed here, every range checked by
  // the library (sim::validate, below).
  for (const auto& [setting, word, out] :
       {std::tuple<const char*, const std::string&, Time&>{"duration", a.duration, cfg.duration},
        {"interval", a.interval, cfg.interval},
        {"irq-latency", a.irq_latency, cfg.irq_latency}})
    if (const std::string bad = read_time(setting, word, out); !bad.empty()) return fail(bad);
  cfg.nic.irq_latency = cfg.irq_latency;
  if (!a.nic_latency.empty())
    if (const std::string bad = read_time("nic-latency", a.nic_latency, cfg.nic.irq_latency); !bad.empty())
      return fail(bad);
  if (!a.tx_usecs.empty())
    if (const std::string bad = read_time("tx-usecs", a.tx_usecs, cfg.nic.tx_usecs); !bad.empty()) return fail(bad);
  for (const auto& [setting, word, out] :
       {std::tuple<const char*, const std::string&, Time&>{"guest-send-cost", a.guest_send_cost, cfg.guest.send_cost},
        {"guest-epoll-cost", a.guest_epoll_cost, cfg.guest.epoll_cost},
        {"guest-wake-latency", a.guest_wake_latency, cfg.guest.wake_latency_min},
        {"guest-wake-latency-mean", a.guest_wake_latency_mean, cfg.guest.wake_latency_mean},
        {"guest-lead", a.guest_lead, cfg.guest.lead},
        {"guest-send-for", a.guest_send_for, cfg.guest.send_for},
        {"softirq-cost", a.softirq_cost, cfg.guest.softirq_cost}})
    if (const std::string bad = read_time(setting, word, out); !bad.empty()) return fail(bad);
  if (!a.nic_rate.empty()) {
    const auto bits = tc::parse_rate_bits(a.nic_rate);
    if (!bits || !(*bits < 1.8e19))
      return fail("--nic-rate \"" + a.nic_rate + "\": expected " + sim::setting_range("nic-rate").describe() +
                  " (e.g. 100gbit)");
    cfg.nic.line_rate_bps = static_cast<std::uint64_t>(*bits);
  }
  if (a.scheduler != "fast" && a.scheduler != "reference")
    return fail("--scheduler \"" + a.scheduler + "\": expected fast or reference");
  cfg.scheduler = a.scheduler == "fast" ? sim::SchedulerKind::fast : sim::SchedulerKind::reference;
  if (a.compat != "5.7" && a.compat != "latest")
    return fail("--compat \"" + a.compat + "\": expected 5.7 or latest");

  // The fq configuration after the word `fq`.
  FqConfig base;
  base.compat = a.compat == "latest" ? Compat::latest : Compat::linux_5_7;
  std::vector<std::string> words = sub.remaining();
  if (!words.empty()) {
    if (words[0] != "fq")
      return fail("unexpected \"" + words[0] + "\": expected `fq [OPTIONS...]` (ufq options go before `fq`)");
    words.erase(words.begin());
  }

  // --compare KEY=V1,V2: one run per value on the same workload.
  std::string key;
  std::vector<std::string> values;
  if (!a.compare.empty()) {
    const auto eq = a.compare.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.compare.size())
      return fail("--compare \"" + a.compare + "\": expected KEY=V1,V2,... (e.g. timer_slack=0,10us)");
    key = a.compare.substr(0, eq);
    values = split_list(a.compare.substr(eq + 1), ',');
  }
  std::vector<std::string> labels;
  std::vector<sim::SimConfig> configs;
  const std::size_t n_runs = values.empty() ? 1 : values.size();
  for (std::size_t i = 0; i < n_runs; ++i) {
    std::vector<std::string> w = words;
    if (!values.empty()) {
      if (values[i].empty()) return fail("--compare \"" + a.compare + "\": empty value");
      // A value may carry more fq words after a space ("1us adaptive_slack 25%").
      w.push_back(key);
      for (std::string& word : tc::split_words(values[i])) w.push_back(std::move(word));
    }
    auto parsed = tc::parse_fq_options(w, base);
    if (!parsed)
      return fail(values.empty() ? parsed.error().message
                                 : "--compare " + key + "=" + values[i] + ": " + parsed.error().message);
    sim::SimConfig c = cfg;
    c.fq = *parsed;
    configs.push_back(c);
    labels.push_back(values.empty() ? std::string("fq") : key + "=" + values[i]);
  }

  // The library's checks, in the tool's words; then refuse what would not fit
  // before allocating any of it.
  for (const sim::SimConfig& c : configs) {
    try {
      sim::validate(c);
    } catch (const sim::SimConfigError& e) {
      return fail(as_option(e, a, *model));
    }
  }
  // --jobs: how many runs at once. The output does not depend on it (each run
  // owns its state; they are printed in sweep order after all have ended), so
  // a plan that does not fit N at once runs fewer at a time rather than fail.
  // --rss (the process's resident set) and --event-trace (one file that each
  // run rewrites) need the runs one at a time.
  const std::size_t runs = configs.size();
  const bool jobs_given = sub.get_option("--jobs")->count() > 0;
  const char* one_at_a_time = a.rss ? "--rss" : !cfg.guest.event_trace.empty() ? "--event-trace" : nullptr;
  if (jobs_given && a.jobs > 1 && runs > 1 && one_at_a_time)
    return fail(std::string("--jobs ") + std::to_string(a.jobs) + " with " + one_at_a_time + ": " +
                (a.rss ? "--rss measures the whole process, so its runs go one at a time"
                       : "--event-trace writes one file, so its runs go one at a time") +
                "; give --jobs 1 or leave --jobs out");
  std::size_t jobs = one_at_a_time ? 1 : jobs_given ? a.jobs : usable_cpus();
  const std::size_t wanted_jobs = std::clamp<std::size_t>(jobs, 1, runs);
  jobs = sim_runs_that_fit(configs, wanted_jobs);
  for (const sim::SimConfig& c : configs)
    if (const std::string refusal = check_sim_plan(c, runs, jobs); !refusal.empty()) return fail(refusal);
  if (jobs < wanted_jobs && jobs_given)
    note("--jobs " + std::to_string(a.jobs) + ": " + std::to_string(jobs) +
         " runs at once fit in memory; running " + std::to_string(jobs) + " at a time");
  // The plot directory is checked now, not after a long run has printed its results.
  if (!a.plot_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.plot_dir, ec);
    if (ec || !std::filesystem::is_directory(a.plot_dir) || ::access(a.plot_dir.c_str(), W_OK) != 0)
      return fail("--plot \"" + a.plot_dir + "\": not a directory it can write to" +
                  (ec ? " (" + ec.message() + ")" : std::string()));
  }

  // The runs, `jobs` at a time; each writes only its own slot. One at a time,
  // the progress line names the run (as before --jobs); overlapping runs share
  // one line (SweepProgress).
  const bool tty = isatty(STDERR_FILENO) && !a.quiet;
  const bool show_progress = tty && cfg.duration >= 2 * kNsecPerSec;
  std::optional<SweepProgress> sweep_progress;
  if (show_progress && jobs > 1) sweep_progress.emplace(runs, stderr);
  std::vector<std::optional<sim::SimResult>> slots(runs);
  const auto run_one = [&](std::size_t i) {
    std::function<void(double)> progress;
    std::function<void(sim::Sample&)> measure_memory;
    if (a.rss) measure_memory = [](sim::Sample& s) { s.rss_kb = current_rss_kb(); };
    if (sweep_progress)
      progress = [&sweep_progress, i](double f) { sweep_progress->update(i, f); };
    else if (show_progress)
      progress = [&labels, i](double f) { std::fprintf(stderr, "\r%s: %3.0f%%", labels[i].c_str(), f * 100); };
    sim::SimResult r = configs[i].scheduler == sim::SchedulerKind::reference
                           ? sim::simulate_reference(configs[i], progress, measure_memory)
                           : sim::simulate(configs[i], progress, measure_memory);
    if (a.rss) {
      // The kernel updates its high-water mark lazily: a sample may be above it.
      r.peak_rss_kb = peak_rss_kb();
      for (const auto& s : r.samples) r.peak_rss_kb = std::max(r.peak_rss_kb, s.rss_kb);
    }
    slots[i] = std::move(r);
    if (sweep_progress)
      sweep_progress->finished(i);
    else if (show_progress)
      std::fprintf(stderr, "\r\033[K");
  };
  const std::vector<std::exception_ptr> errors = run_in_order(runs, static_cast<unsigned>(jobs), run_one);
  if (sweep_progress) sweep_progress->clear();
  // The first failure in sweep order, reported as a sequential sweep reports
  // it (the runs after it never started there; here their results are dropped).
  for (const std::exception_ptr& error : errors) {
    if (!error) continue;
    if (tty) std::fprintf(stderr, "\r\033[K");
    try {
      std::rethrow_exception(error);
    } catch (const sim::SimConfigError& e) {
      return fail(as_option(e, a, *model));
    } catch (const std::invalid_argument& e) {
      return fail(e.what());
    }
  }
  std::vector<sim::SimResult> results;
  results.reserve(runs);
  for (std::optional<sim::SimResult>& r : slots) results.push_back(std::move(*r));

  if (a.json) {
    if (results.size() == 1 && values.empty()) {
      std::cout << sim::to_json(results[0]) << "\n";
    } else {
      std::cout << "[";
      for (std::size_t i = 0; i < results.size(); ++i)
        std::cout << (i ? "," : "") << sim::to_json(results[i], labels[i]);
      std::cout << "]\n";
    }
  } else {
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      const auto& c = r.config;
      std::cout << "ufq sim: " << c.flows << " " << c.traffic << " flows, "
                << static_cast<std::uint64_t>(c.rate_pps) << " pkt/s, " << c.packet_size << " B, "
                << c.queues << " tx queues / " << c.cpus << " cpus, "
                << static_cast<double>(c.duration) / 1e9 << " s, seed " << c.seed << "\n";
      std::cout << "fq (" << to_string(c.fq.compat) << "): " << tc::format_fq_options(c.fq) << "\n";
      std::cout << sim::vmstat_header();
      for (const auto& s : r.samples) std::cout << sim::vmstat_line(r, s);
      std::cout << sim::summary(r);
      if (a.soak || a.rss) {
        std::cout << sim::soak_header(a.rss);
        for (const auto& s : r.samples) std::cout << sim::soak_line(s, a.rss);
        std::cout << sim::soak_summary(r);
      }
      if (a.tc_stats) std::cout << tc::format_qdisc(c.fq, r.qdisc);
      if (i + 1 < results.size()) std::cout << "\n";
    }
    if (results.size() > 1) std::cout << "\n" << sim::compare_table(labels, results);
  }
  if (!a.plot_dir.empty()) {
    try {
      for (const auto& f : sim::write_plots(a.plot_dir, key.empty() ? "run" : key, labels, results))
        note("wrote " + f);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }
  return kExitOk;
}

}  // namespace

void add_sim_command(Commands& commands) {
  auto a = std::make_shared<SimArgs>();
  auto cfg = std::make_shared<sim::SimConfig>();
  CLI::App* sub = commands.add(
      "sim", "simulate fq with Linux hrtimers and a NIC (default: the seed's timer-slack experiment)",
      [a, cfg](CLI::App& app) { return run_sim(*a, *cfg, app); });
  sub->allow_extras();
  sub->prefix_command();
  std::string models;
  for (const sim::TrafficModelInfo* m : sim::traffic_models()) models += (models.empty() ? "" : " | ") + m->name;
  sub->add_option("--traffic", a->traffic, models + " (listed below)")->capture_default_str();
  sub->add_option("--flows", cfg->flows, "number of flows (not with pcap: the capture's 5-tuples)")
      ->check(count_word("flows", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--rate", cfg->rate_pps, "total packets/s over all flows (not with bulk or pcap)")
      ->check(number_word("rate"))
      ->capture_default_str();
  sub->add_option("--packet-size", cfg->packet_size,
                  "bytes fq charges per packet (frame without FCS; not with pcap)")
      ->check(count_word("packet-size", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--duration", a->duration, "simulated time (s, ms, us)")->capture_default_str();
  sub->add_option("--interval", a->interval, "vmstat-like sample period")->capture_default_str();
  sub->add_option("--seed", cfg->seed, "random seed (same seed, same output)")
      ->check(integer_in(0, UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--inflight", cfg->inflight, "packets a flow keeps queued (TCP small queues)")
      ->check(count_word("inflight", UINT32_MAX))
      ->capture_default_str();
  // The traffic models' own settings, one option each, as the models declare them.
  std::string footer = "Traffic models (--traffic):\n";
  for (const sim::TrafficModelInfo* m : sim::traffic_models()) {
    footer += "  " + m->name + std::string(m->name.size() < 9 ? 9 - m->name.size() : 1, ' ') + m->help + "\n";
    for (const sim::TrafficParam& p : m->params) {
      if (sub->get_option_no_throw("--" + p.name)) continue;  // declared by an earlier model too
      std::string help = models_declaring(p.name).substr(10) + ": " + p.help;
      if (p.type == sim::TrafficParam::Type::time)
        help += " (" + sim::format_time(p.min) + " to " + sim::format_time(p.max) + ", default " +
                sim::format_time(p.default_time) + ")";
      if (p.type == sim::TrafficParam::Type::count)
        help += " (" + std::to_string(p.min) + " to " + std::to_string(p.max) + ", default " +
                std::to_string(p.default_time) + ")";
      sub->add_option("--" + p.name, a->model_options[p.name], help);
    }
  }
  sub->footer(footer);
  sub->add_option("--compat", a->compat, "kernel decisions: 5.7 (the seed's) or latest")->capture_default_str();
  sub->add_option("--scheduler", a->scheduler,
                  "fast or reference: the two implementations decide identically")
      ->capture_default_str();
  sub->add_option("--queues", cfg->queues, "transmit queues, one CPU and one fq each")
      ->check(count_word("queues", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--cpus", cfg->cpus, "CPUs of the machine (sy/id are shares of all)")
      ->check(count_word("cpus", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--irq-latency", a->irq_latency, "interrupt to handler latency")->capture_default_str();
  // Above 1 GHz the tick period rounds to 0 ns and the tick never lets time move.
  sub->add_option("--tick-hz", cfg->tick_hz, "scheduler tick per CPU (0 = none)")
      ->check(count_word("tick-hz", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--other-irq-rate", cfg->other_irq_per_s, "other interrupts per second")
      ->check(number_word("other-irq-rate"))
      ->capture_default_str();
  sub->add_option("--base-sy", cfg->base_sy_pct, "system CPU % not modelled by events")
      ->check(number_word("base-sy"))
      ->capture_default_str();
  sub->add_option("--nic-rate", a->nic_rate, "NIC line rate (tc rate syntax, e.g. 100gbit)");
  sub->add_option("--nic-latency", a->nic_latency,
                  "NIC interrupt to NAPI poll (with --nic-dummy: until the sender hears of a sent packet); "
                  "default --irq-latency");
  sub->add_flag("--nic-dummy", cfg->nic.dummy, "Linux's dummy device: no wire, no completion interrupts");
  sub->add_option("--ring", cfg->nic.ring_size, "NIC transmit ring descriptors")
      ->check(count_word("ring", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--tx-usecs", a->tx_usecs, "NIC completion coalescing time (default 16us)");
  sub->add_option("--tx-frames", cfg->nic.tx_frames, "NIC completion coalescing frames")
      ->check(count_word("tx-frames", UINT32_MAX))
      ->capture_default_str();

  // The kernel-fq guest (ufq/sim/guest.hpp, docs/simulator.md "The guest model").
  sub->add_flag("--guest-sender", cfg->guest.sender,
                "the harness's UDP sender: one task, epoll, full sockets (replaces --inflight; rate or edt)");
  sub->add_option("--guest-sndbuf", cfg->guest.sndbuf, "--guest-sender: datagrams a socket holds")
      ->check(count_word("guest-sndbuf", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--guest-wake-at", cfg->guest.wake_at, "--guest-sender: writable again at this many in flight")
      ->check(count_word("guest-wake-at", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--guest-burst", cfg->guest.burst, "--guest-sender: sends per visit of a ready flow")
      ->check(count_word("guest-burst", UINT32_MAX))
      ->capture_default_str();
  sub->add_option("--guest-send-cost", a->guest_send_cost, "--guest-sender: CPU per send (default 16us)");
  sub->add_option("--guest-epoll-cost", a->guest_epoll_cost, "--guest-sender: CPU per epoll_wait with events (default 2us)");
  sub->add_option("--guest-wake-latency", a->guest_wake_latency,
                  "--guest-sender: a sleeping sender runs at least this long after the write space (default 5us)");
  sub->add_option("--guest-wake-latency-mean", a->guest_wake_latency_mean,
                  "--guest-sender: and this long on average, exponential above the minimum (default 10us)");
  sub->add_option("--guest-lead", a->guest_lead, "--guest-sender, edt: start this long before the first departure");
  sub->add_option("--guest-send-for", a->guest_send_for,
                  "--guest-sender: send period (rate: from the start; edt: departures before its end)");
  sub->add_flag("--nohz-idle", cfg->guest.nohz_idle, "the tick stops on an idle CPU (NOHZ idle)");
  sub->add_option("--wheel-timers", cfg->guest.wheel_timers_per_s,
                  "--nohz-idle: timer-wheel timers per second that fire a stopped tick")
      ->check(number_word("wheel-timers"))
      ->capture_default_str();
  sub->add_option("--softirq-cost", a->softirq_cost, "--nohz-idle: CPU per packet a qdisc run sends (default 7us)");
  sub->add_option("--event-trace", cfg->guest.event_trace,
                  "write the watchdog, tick, xmit and sender wake-up events to FILE (scripts/event_compare.py)");

  sub->add_option("--cost-timer-irq", cfg->cost.timer_interrupt, "ns per timer interrupt")
      ->check(count_word("cost-timer-irq", UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--cost-nic-irq", cfg->cost.nic_interrupt, "ns per NIC interrupt")
      ->check(count_word("cost-nic-irq", UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--cost-other-irq", cfg->cost.other_interrupt, "ns per other interrupt")
      ->check(count_word("cost-other-irq", UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--cost-packet", cfg->cost.packet, "ns per packet sent")
      ->check(count_word("cost-packet", UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--cost-run", cfg->cost.qdisc_run, "ns per qdisc run")
      ->check(count_word("cost-run", UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--compare", a->compare, "KEY=V1,V2,...: one run per fq option value");
  sub->add_option("--jobs", a->jobs,
                  "--compare runs at once, the same output whatever N (default: the CPUs it may use; "
                  "fewer if they would not fit in memory; 1 with --rss or --event-trace)")
      ->type_name("N")
      ->check(integer_in(1, kMaxSimJobs));
  sub->add_flag("--json", a->json, "print JSON (an array with --compare)");
  sub->add_option("--plot", a->plot_dir, "write PNG plots (gnuplot) into DIR");
  sub->add_flag("--tc-stats", a->tc_stats, "print the `tc -s qdisc show` block (summed over queues)");
  sub->add_flag("--soak", a->soak, "print fq's flows and packet books per sample (flows held, collected)");
  sub->add_flag("--rss", a->rss,
                "the process's resident set per sample and its peak (not deterministic; implies --soak)");
  sub->add_flag("-q,--quiet", a->quiet, "no progress indicator");
}

}  // namespace ufq::cli
