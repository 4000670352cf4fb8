// `ufq show`: print an fq configuration the way `tc qdisc show` does.
//
//   ufq show [-j] [-s] [--qdisc] [--args] [--compat 5.7|latest] [--hz N] [--mtu N]
//            [--link-speed RATE] [--max-offload-horizon TIME]
//            (fq [OPTIONS...] | --config FILE.json)
//
// The words after `fq` go verbatim to the tc-fq parser, so every ufq option
// must come before `fq`.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "ufq/tc/config_json.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::cli {
namespace {

struct ShowArgs {
  bool json = false;
  bool stats = false;
  bool qdisc = false;
  bool args = false;
  std::string compat = "latest";
  std::uint32_t hz = FqConfig{}.hz;
  std::uint32_t mtu = 0;  // 0: the defaults (Ethernet, MTU 1500)
  std::string link_speed;
  std::string max_offload_horizon;
  std::string config_file;
};

int show(const ShowArgs& a, CLI::App& sub) {
  // Surroundings first: they are the base the options apply to.
  FqConfig base = a.mtu != 0 ? FqConfig::for_mtu(a.mtu) : FqConfig{};
  base.compat = a.compat == "5.7" ? Compat::linux_5_7 : Compat::latest;
  base.hz = a.hz;
  tc::ParseOptions options;
  if (!a.link_speed.empty()) {
    const auto bits = tc::parse_rate_bits(a.link_speed);
    // A device reports its speed in Mbit/s, 32 bits (ethtool).
    if (!bits || *bits > 4294967295e6)
      return fail("--link-speed: \"" + a.link_speed + "\" is not a rate up to 4294967295mbit (e.g. 10gbit, 100mbit)");
    options.link_speed_bits = static_cast<std::uint64_t>(*bits);
  }
  if (!a.max_offload_horizon.empty()) {
    const auto us = tc::parse_time_us(a.max_offload_horizon);
    if (!us)
      return fail("--max-offload-horizon: \"" + a.max_offload_horizon +
                  "\" is not a time up to 4294967295us (e.g. 100us, 1ms)");
    base.max_offload_horizon_us = *us;
  }
  if (a.args && (a.json || a.stats || a.qdisc))
    return fail("--args prints tc words; it does not combine with -j, -s or --qdisc");

  std::vector<std::string> notes;
  options.notes = &notes;
  const std::vector<std::string> rest = sub.remaining();
  const bool from_file = sub.count("--config") != 0;
  if (from_file && !rest.empty())
    return fail("give either --config FILE or `fq OPTIONS...`, not both (unexpected \"" + rest[0] +
                "\")");
  if (!from_file && rest.empty())
    return fail("nothing to show: give `fq [OPTIONS...]` or --config FILE.json");
  if (!from_file && rest[0] != "fq")
    return fail("unexpected \"" + rest[0] +
                "\": expected `fq [OPTIONS...]` (ufq options go before `fq`; only fq is known)");

  tc::Expected<FqConfig> cfg =
      from_file ? tc::load_fq_config(a.config_file, base, &notes)
                : tc::parse_fq_options(std::span<const std::string>(rest).subspan(1), base, options);
  if (!cfg) return fail(cfg.error().message);
  for (const auto& n : notes) note(n);

  std::string out;
  if (a.args) {
    out = tc::join_words(tc::fq_options_args(*cfg));
  } else if (a.json) {
    if (a.stats)
      out = std::string("[").append(tc::format_qdisc_json(*cfg, FqStats{})).append("]");
    else if (a.qdisc)
      out = std::string("[").append(tc::format_qdisc_json(*cfg)).append("]");
    else
      out = tc::fq_options_json(*cfg);
  } else {
    if (a.stats)
      out = tc::format_qdisc(*cfg, FqStats{});
    else if (a.qdisc)
      out = tc::format_qdisc(*cfg);
    else
      out = tc::format_fq_options(*cfg);
  }
  if (out.empty() || out.back() != '\n') out += '\n';
  std::cout << out << std::flush;
  return std::cout ? kExitOk : fail("cannot write to stdout");
}

}  // namespace

void add_show_command(Commands& commands) {
  auto a = std::make_shared<ShowArgs>();
  CLI::App* sub = commands.add(
      "show", "Print an fq configuration as `tc qdisc show` does",
      [a](CLI::App& self) { return show(*a, self); });
  sub->footer(
      "Usage: ufq show [OPTIONS] fq [FQ OPTIONS...]   or   ufq show [OPTIONS] --config FILE.json\n"
      "Everything after `fq` is read as tc-fq(8) options:\n  fq " +
      std::string(tc::fq_usage()));
  // Stop at `fq`: the words after it belong to the tc parser, even "-1" or "-j".
  sub->prefix_command();
  sub->add_flag("-j,--json", a->json, "JSON output, as `tc -j qdisc show`");
  sub->add_flag("-s,--stats", a->stats,
                "print the whole qdisc with its (zero) statistics, as `tc -s qdisc show`");
  sub->add_flag("--qdisc", a->qdisc, "print the whole `qdisc fq 8001: root refcnt 2 ...` line");
  sub->add_flag("--args", a->args,
                "print the tc words that recreate this configuration exactly");
  sub->add_option("--compat", a->compat, "kernel whose options to show")
      ->check(CLI::IsMember({"latest", "5.7"}))
      ->capture_default_str();
  sub->add_option("--hz", a->hz, "kernel HZ (refill_delay is kept in jiffies)")
      ->type_name("N")
      ->check(integer_in(1, 100'000))
      ->capture_default_str();
  sub->add_option("--mtu", a->mtu,
                  "device MTU for the quantum defaults (2x and 10x MTU+14); default 1500")
      ->type_name("N")
      ->check(CLI::Range(68U, 65536U));
  sub->add_option("--link-speed", a->link_speed, "link speed for `maxrate P%`, e.g. 10gbit")
      ->type_name("RATE");
  sub->add_option("--max-offload-horizon", a->max_offload_horizon,
                  "the device's max_pacing_offload_horizon (default 0: no EDT offload)")
      ->type_name("TIME");
  sub->add_option("--config", a->config_file,
                  "read the options from a JSON file with `tc -j` keys instead of `fq ...`")
      ->type_name("FILE");
}

}  // namespace ufq::cli
