// Replays tests/data/kernel-6.1/tc-params.txt, ground truth recorded from the
// real Linux 6.1 kernel with iproute2 6.1 (the kernel-fq harness's `run.sh --job
// tcparams`, docs/results.md §3), through our tc language layer:
//
//   `tc qdisc add|change|replace dev d0 root fq WORDS`
//       parse_fq_options(WORDS) on FqConfig{} (hz 250) for `add`, on the state
//       the previous case left for `change`/`replace`, then
//       rc=0       -> accepted, and format_fq_options() in the 6.1 form equals
//                     the kernel's `> show:` line after "qdisc fq <h>: root refcnt 2 "
//       rc=1, 255  -> refused with Error::Kind::syntax (tc refused the words;
//                     255 is tc's exit(-1) for "Command line is not complete")
//       rc=2       -> refused with Error::Kind::kernel (the kernel said EINVAL)
//       refused    -> `add`: the kernel shows no fq; `change`: the kernel's state
//                     equals the state we carry on (ours is all-or-nothing,
//                     the kernel applies partially, docs/fq-rules.md#netlink-acceptance)
//   `tc [-s] [-j] [-d] qdisc show dev d0`
//       our format_qdisc / format_qdisc_json for the current state with zero
//       statistics, in the 6.1 form, against the recorded output.
//
// Every case in the file is either checked or listed in kSkipped below with a
// reason; an unrecognised command, a malformed case or a stale table entry
// fails the test.
//
// The 6.1 form of our output (we model Compat::latest, early 2026):
//   * options line: kernel 6.1 is in the 5.8-6.6 family. It is derived twice and
//     both derivations must agree:
//       (a) the Compat::latest line without "bands 3 priomap P0..P15" and
//           "weights W0 W1 W2" (kernel 6.7+, iproute2 6.8+) and without
//           "offload_horizon T" (kernel 6.13+, iproute2 6.14+);
//       (b) the Compat::linux_5_7 line followed by "horizon T horizon_drop|cap"
//           (kernel 5.8+, iproute2 5.14+).
//   * `tc -s` lines: our block without " band0_pkts N band1_pkts N band2_pkts N"
//     on the flows line (iproute2 5.14-6.7 print no band fields, docs/fq-rules.md#tc-output).
//     Only zero statistics occur in the file (a fresh qdisc without traffic);
//     then no other field differs (fastpath / band drops print only when > 0).
//   * `tc -j`: both documents are flattened in order, duplicate keys kept (tc
//     prints "throttled" twice), and ours loses options.bands, options."priomap ",
//     options."weights ", options.offload_horizon and band{0,1,2}_pkts; what
//     remains must equal the kernel's document key by key, in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "print_config.hpp"
#include "ufq/tc/config_json.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/qdisc_print.hpp"
#include "ufq/tc/stats_print.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::tc {
namespace {

const std::string kDataFile = std::string(UFQ_TEST_DATA_DIR) + "/kernel-6.1/tc-params.txt";

// ------------------------------------------------------------ known differences --

// Cases whose kernel result is not compared, with the reason. Where our parser
// refuses by design, the refusal itself is still checked (`ours`).
struct Skipped {
  std::string_view command;         // exactly as after "$ " in the file
  std::optional<Error::Kind> ours;  // what parse_fq_options must return; nullopt: accepted
  std::string_view reason;
};

constexpr std::array<Skipped, 3> kSkipped{{
    {"tc qdisc add dev d0 root fq refill_delay -1ms", Error::Kind::syntax,
     "tc converts the negative time to u32 with undefined behaviour (x86-64: wraps, the kernel "
     "shows 4.29e+03s); ufq refuses out-of-range times by design (include/ufq/tc/units.hpp)"},
    {"tc qdisc add dev d0 root fq horizon -1s", Error::Kind::syntax,
     "same undefined double->u32 conversion in tc (kernel shows 4.29e+03s); refused by design"},
    {"tc qdisc add dev d0 root fq horizon 5000s", Error::Kind::syntax,
     "5e9 us does not fit tc's u32: undefined conversion, which wrapped to 705032704 us "
     "(kernel shows 705s); refused by design"},
}};

// rc=2 cases where kernel 6.1 and the kernel we model (Compat::latest) decide
// differently, so our result is not Error::Kind::kernel. The file has none:
// the only acceptance rule that changed between 6.1 and latest for the
// options in it is initial_quantum <= INT_MAX (April 2023 fix, backported to
// stable, version unverified, docs/fq-rules.md#configuration), and no case sends initial_quantum
// above INT_MAX. Quantum 1..2^20 (Dec 2019) and buckets_log 1..18 hold in both.
struct VersionDifference {
  std::string_view command;
  std::optional<Error::Kind> ours;
  std::string_view reason;
};
constexpr std::array<VersionDifference, 0> kVersionDifferences{};

// Refused `change` cases after which the kernel's state differs from the one
// we carry on (unchanged), because the kernel applied the valid attributes of
// the message (docs/fq-rules.md#netlink-acceptance; docs/features.md: "change partial application:
// differs"). None in the file: its refused changes are `quantum 0` (the only
// attribute is the invalid one) and `bogus 1` (tc sent nothing).
struct PartialChange {
  std::string_view command;
  std::string_view reason;
};
constexpr std::array<PartialChange, 0> kPartialChanges{};

// ------------------------------------------------------------- the data file --

struct Case {
  int line = 0;                     // of the "$ " line
  std::string section;              // the last "## " heading
  std::string command;              // after "$ "
  std::vector<std::string> output;  // lines between the command and [rc=N]
  int rc = -1;
  std::string show;  // after "> show: " ("tc qdisc show dev d0" after the command)
};

struct DataFile {
  std::vector<Case> cases;
  std::vector<std::string> errors;  // malformed lines
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

DataFile read_data_file(const std::string& path) {
  DataFile data;
  std::ifstream in(path);
  if (!in) {
    data.errors.push_back("cannot open " + path);
    return data;
  }
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  std::string section;
  std::size_t i = 0;
  auto where = [](std::size_t index) { return "line " + std::to_string(index + 1) + ": "; };
  while (i < lines.size()) {
    const std::string& l = lines[i];
    if (l.empty()) {
      ++i;
      continue;
    }
    if (starts_with(l, "## ")) {
      section = l.substr(3);
      ++i;
      continue;
    }
    if (starts_with(l, "# ")) {  // the file header
      ++i;
      continue;
    }
    if (!starts_with(l, "$ ")) {
      data.errors.push_back(where(i) + "expected a '$ command' line, got: " + l);
      ++i;
      continue;
    }
    Case c;
    c.line = static_cast<int>(i + 1);
    c.section = section;
    c.command = l.substr(2);
    ++i;
    static const std::regex kRc(R"(\[rc=(\d+)\])");
    std::smatch m;
    while (i < lines.size() && !std::regex_match(lines[i], m, kRc) && !starts_with(lines[i], "$ "))
      c.output.push_back(lines[i++]);
    if (i >= lines.size() || starts_with(lines[i], "$ ")) {
      data.errors.push_back(where(static_cast<std::size_t>(c.line - 1)) + "no [rc=N] line");
      continue;
    }
    c.rc = std::stoi(m[1].str());
    ++i;
    if (i >= lines.size() || !starts_with(lines[i], "> show: ")) {
      data.errors.push_back(where(i) + "expected '> show: ' after [rc=" + std::to_string(c.rc) +
                            "]");
      continue;
    }
    c.show = lines[i].substr(8);
    ++i;
    data.cases.push_back(std::move(c));
  }
  return data;
}

// What a command line asks for.
struct Command {
  enum class Kind : std::uint8_t { add, change, replace, show, unrecognised };
  Kind kind = Kind::unrecognised;
  std::vector<std::string> fq_words;  // add/change/replace: the words after "fq"
  bool stats = false;                 // show: -s
  bool json = false;                  // show: -j
};

Command classify(std::string_view command) {
  const std::vector<std::string> w = split_words(command);
  Command c;
  std::size_t i = 0;
  if (i >= w.size() || w[i++] != "tc") return c;
  bool details = false;
  for (; i < w.size() && starts_with(w[i], "-"); ++i) {
    if (w[i] == "-s")
      c.stats = true;
    else if (w[i] == "-j")
      c.json = true;
    else if (w[i] == "-d")
      details = true;  // adds nothing to fq's lines in 6.1 (compare the file's outputs)
    else
      return c;
  }
  if (i + 1 >= w.size() || w[i] != "qdisc") return c;
  const std::string& verb = w[i + 1];
  i += 2;
  auto rest_is = [&](std::initializer_list<std::string_view> expected) {
    for (const auto word : expected) {
      if (i >= w.size() || w[i] != word) return false;
      ++i;
    }
    return true;
  };
  if (verb == "show") {
    if (rest_is({"dev", "d0"}) && i == w.size()) c.kind = Command::Kind::show;
    return c;
  }
  if (c.stats || c.json || details) return c;  // flags only on show
  if (!rest_is({"dev", "d0", "root", "fq"})) return c;
  c.fq_words.assign(w.begin() + static_cast<std::ptrdiff_t>(i), w.end());
  if (verb == "add") c.kind = Command::Kind::add;
  if (verb == "change") c.kind = Command::Kind::change;
  if (verb == "replace") c.kind = Command::Kind::replace;
  return c;
}

// A `tc qdisc show dev d0` line: an fq qdisc (handle, options part) or no fq.
struct ShownQdisc {
  bool fq = false;
  std::uint16_t handle = 0;
  std::string options;  // after "qdisc fq <h>: root refcnt 2 "
};

std::optional<ShownQdisc> parse_show_line(const std::string& line) {
  static const std::regex kFq(R"(qdisc fq ([0-9a-f]{1,4}): root refcnt 2 (.*))");
  static const std::regex kNone(R"(qdisc noqueue 0: root refcnt 2 )");
  std::smatch m;
  if (std::regex_match(line, m, kFq))
    return ShownQdisc{true, static_cast<std::uint16_t>(std::stoul(m[1].str(), nullptr, 16)),
                      m[2].str()};
  if (std::regex_match(line, kNone)) return ShownQdisc{};
  return std::nullopt;
}

// ------------------------------------------------------------ the 6.1 forms --

// (a) Our Compat::latest line without the 6.7+ and 6.13+ fields.
std::string options_61_from_latest(FqConfig cfg) {
  cfg.compat = Compat::latest;
  const std::vector<std::string> words = split_words(format_fq_options(cfg));
  std::string out;
  for (std::size_t i = 0; i < words.size();) {
    if (words[i] == "bands") {  // bands 3 priomap P0 .. P15
      EXPECT_TRUE(i + 2 < words.size() && words[i + 1] == "3" && words[i + 2] == "priomap");
      i += 3 + 16;
    } else if (words[i] == "weights") {
      i += 1 + kBands;
    } else if (words[i] == "offload_horizon") {
      i += 2;
    } else {
      out += words[i++] + ' ';
    }
  }
  return out;
}

// (b) Our Compat::linux_5_7 line plus the 5.8 horizon fields.
std::string options_61_from_5_7(const FqConfig& cfg) {
  FqConfig c = cfg;
  c.compat = Compat::linux_5_7;
  return format_fq_options(c) + "horizon " + format_time_us(cfg.horizon_us) + " " +
         (cfg.horizon_drop ? "horizon_drop " : "horizon_cap ");
}

std::string options_61(const FqConfig& cfg) {
  std::string a = options_61_from_latest(cfg);
  EXPECT_EQ(a, options_61_from_5_7(cfg)) << "the two derivations of the 6.1 line disagree";
  return a;
}

// `tc [-s] qdisc show` in the 6.1 form: our format_qdisc output with the
// options part replaced by its 6.1 form and the iproute2 >= 6.8 band fields
// dropped from the statistics.
std::string text_61(const FqConfig& cfg, const FqStats& stats, std::uint16_t handle,
                    bool with_stats) {
  QdiscHeader header;
  header.major = handle;
  const std::string ours =
      with_stats ? format_qdisc(cfg, stats, header) : format_qdisc(cfg, header);
  const std::string latest_options = format_fq_options(cfg);
  const std::size_t at = ours.find(latest_options);
  EXPECT_NE(at, std::string::npos) << ours;
  if (at == std::string::npos) return ours;
  const std::string out =
      ours.substr(0, at) + options_61(cfg) + ours.substr(at + latest_options.size());
  static const std::regex kBandPkts(R"( band[0-2]_pkts [0-9]+)");
  return std::regex_replace(out, kBandPkts, "");
}

// A JSON document as an ordered list of (path, scalar), keeping duplicate keys.
struct FlatEntry {
  std::string path;  // "/0/options/limit"
  nlohmann::json value;
  bool operator==(const FlatEntry&) const = default;
};

class Flattener {
 public:
  using json = nlohmann::json;
  std::vector<FlatEntry> entries;
  std::string error;

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(json::number_integer_t v) { return add(v); }
  bool number_unsigned(json::number_unsigned_t v) { return add(v); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return add(v); }
  bool string(json::string_t& v) { return add(v); }
  bool binary(json::binary_t& /*v*/) { return add("<binary>"); }
  bool start_object(std::size_t /*n*/) {
    frames_.push_back({path(), false, 0, {}});
    return true;
  }
  bool key(json::string_t& k) {
    frames_.back().key = k;
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    after_value();
    return true;
  }
  bool start_array(std::size_t /*n*/) {
    frames_.push_back({path(), true, 0, {}});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    after_value();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) {
    error = "at " + std::to_string(position) + " (" + token + "): " + ex.what();
    return false;
  }

 private:
  struct Frame {
    std::string path;  // of the container
    bool array;
    std::size_t index;  // next element (arrays)
    std::string key;    // current key (objects)
  };
  std::vector<Frame> frames_;

  // The path of the value about to be read.
  std::string path() const {
    if (frames_.empty()) return "";
    const Frame& f = frames_.back();
    return f.path + "/" + (f.array ? std::to_string(f.index) : f.key);
  }
  void after_value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  bool add(json v) {
    entries.push_back({path(), std::move(v)});
    after_value();
    return true;
  }
};

std::vector<FlatEntry> flatten(const std::string& text, std::string& error) {
  Flattener f;
  if (!nlohmann::json::sax_parse(text, &f)) {
    error = f.error.empty() ? "invalid JSON" : f.error;
    return {};
  }
  return std::move(f.entries);
}

// Keys of our output that kernel 6.1 / iproute2 6.1 do not print.
bool absent_in_61(const std::string& path) {
  static const std::array<std::string_view, 7> kPaths{
      "/0/options/bands", "/0/options/priomap ", "/0/options/weights ",
      "/0/options/offload_horizon", "/0/band0_pkts", "/0/band1_pkts", "/0/band2_pkts"};
  return std::any_of(kPaths.begin(), kPaths.end(), [&](std::string_view p) {
    return path == p || (starts_with(path, p) && path.size() > p.size() && path[p.size()] == '/');
  });
}

std::string describe(const std::vector<FlatEntry>& entries) {
  std::string out;
  for (const auto& e : entries) out += "  " + e.path + " = " + e.value.dump() + "\n";
  return out;
}

// ---------------------------------------------------------------- the replay --

struct Summary {
  int checked = 0;
  int skipped = 0;
  std::set<std::string> skip_entries_used;
  std::set<std::string> version_entries_used;
  std::set<std::string> partial_entries_used;
};

template <class Table>
const typename Table::value_type* find_entry(const Table& table, std::string_view command) {
  for (const auto& e : table)
    if (e.command == command) return &e;
  return nullptr;
}

std::string kind_name(const Expected<FqConfig>& r) {
  return r.ok() ? "accepted" : std::string("refused (") + to_string(r.error().kind) + ": " +
                                   r.error().message + ")";
}

// What the kernel has after the previous case, as far as we know it.
struct State {
  bool known = true;            // false after a skipped case until the next `add`
  std::optional<FqConfig> cfg;  // nullopt: no fq (noqueue)
  std::uint16_t handle = 0;
};

class Replay {
 public:
  explicit Replay(Summary& summary) : summary_(summary) {}

  void run(const Case& c) {
    SCOPED_TRACE("tc-params.txt line " + std::to_string(c.line) + " [" + c.section + "]: $ " +
                 c.command);
    const Command cmd = classify(c.command);
    switch (cmd.kind) {
      case Command::Kind::add:
      case Command::Kind::change:
      case Command::Kind::replace:
        configure(c, cmd);
        return;
      case Command::Kind::show:
        show(c, cmd);
        return;
      case Command::Kind::unrecognised:
        break;
    }
    ADD_FAILURE() << "unrecognised case: the test does not know how to check `" << c.command
                  << "`; teach it or list it in kSkipped";
  }

 private:
  Summary& summary_;
  State state_;

  static FqConfig fresh() {
    FqConfig base;
    base.hz = 250;  // the recording kernel's HZ
    return base;
  }

  // The kernel's `> show:` line against the state we carry.
  void expect_show_matches_state(const Case& c, std::string_view what) {
    const auto shown = parse_show_line(c.show);
    ASSERT_TRUE(shown) << "unexpected show line: " << c.show;
    ASSERT_EQ(shown->fq, state_.cfg.has_value()) << what << ": kernel shows `" << c.show << "`";
    if (!state_.cfg) return;
    EXPECT_EQ(options_61(*state_.cfg), shown->options) << what;
  }

  void configure(const Case& c, const Command& cmd) {
    const bool is_add = cmd.kind == Command::Kind::add;
    // `replace` on an existing fq root is a change (the kernel calls the
    // qdisc's change operation); on nothing it is an add.
    const bool on_existing = !is_add && state_.cfg.has_value();
    if (!is_add) {
      ASSERT_TRUE(state_.known) << "a change after a skipped case: the state is unknown";
      if (cmd.kind == Command::Kind::change) {
        ASSERT_TRUE(on_existing) << "`change` without an fq qdisc";
      }
    }
    const FqConfig base = on_existing ? *state_.cfg : fresh();
    const Expected<FqConfig> ours = parse_fq_options(cmd.fq_words, base);

    if (const Skipped* s = find_entry(kSkipped, c.command)) {
      summary_.skip_entries_used.emplace(s->command);
      ++summary_.skipped;
      if (s->ours) {
        EXPECT_TRUE(!ours.ok() && ours.error().kind == *s->ours)
            << "skipped case: expected our refusal (" << to_string(*s->ours) << "), got "
            << kind_name(ours);
      } else {
        EXPECT_TRUE(ours.ok()) << kind_name(ours);
      }
      std::cout << "[ skipped  ] line " << c.line << ": " << c.command << " -- " << s->reason
                << "\n";
      state_ = State{false, std::nullopt, 0};
      return;
    }
    ++summary_.checked;

    if (c.rc == 0) {
      ASSERT_TRUE(ours.ok()) << "the kernel accepted it; ours: " << kind_name(ours);
      const auto shown = parse_show_line(c.show);
      ASSERT_TRUE(shown && shown->fq) << "rc=0 without an fq qdisc shown: " << c.show;
      EXPECT_EQ(options_61(*ours), shown->options)
          << "parsed as " << ::testing::PrintToString(*ours);
      state_ = State{true, *ours, shown->handle};
      return;
    }

    // Refused by tc (1, 255) or by the kernel (2).
    std::optional<Error::Kind> expected;
    if (c.rc == 1 || c.rc == 255) expected = Error::Kind::syntax;
    if (c.rc == 2) {
      expected = Error::Kind::kernel;
      const bool kernel_said_so =
          std::any_of(c.output.begin(), c.output.end(), [](const std::string& l) {
            return starts_with(l, "Error: ") || starts_with(l, "RTNETLINK answers: ");
          });
      EXPECT_TRUE(kernel_said_so) << "rc=2 without a kernel error line";
      if (const VersionDifference* d = find_entry(kVersionDifferences, c.command)) {
        summary_.version_entries_used.emplace(d->command);
        expected = d->ours;
      }
    }
    ASSERT_TRUE(c.rc == 1 || c.rc == 2 || c.rc == 255) << "unknown exit status " << c.rc;
    if (expected) {
      EXPECT_TRUE(!ours.ok() && ours.error().kind == *expected)
          << "expected refusal (" << to_string(*expected) << "), ours: " << kind_name(ours);
    } else {
      EXPECT_TRUE(ours.ok()) << kind_name(ours);
    }

    // Nothing of it is applied by us. `add`: the kernel destroyed the new qdisc.
    // `change`: the kernel applied the valid attributes (docs/fq-rules.md#netlink-acceptance); its state
    // must equal ours unless the case is listed in kPartialChanges.
    if (is_add) state_ = State{true, std::nullopt, 0};
    if (!is_add && c.rc == 2) {
      if (const PartialChange* p = find_entry(kPartialChanges, c.command)) {
        summary_.partial_entries_used.emplace(p->command);
        std::cout << "[ partial  ] line " << c.line << ": " << p->reason << "\n";
        state_ = State{false, std::nullopt, 0};
        return;
      }
    }
    expect_show_matches_state(c, "state after the refused command");
  }

  void show(const Case& c, const Command& cmd) {
    ASSERT_TRUE(state_.known) << "a show after a skipped case: the state is unknown";
    ASSERT_TRUE(state_.cfg.has_value()) << "show without an fq qdisc";
    ASSERT_EQ(c.rc, 0);
    ++summary_.checked;
    expect_show_matches_state(c, "show line");
    const FqConfig& cfg = *state_.cfg;
    const FqStats zero{};  // a fresh qdisc that saw no traffic

    if (!cmd.json) {
      std::string kernel;
      for (const auto& l : c.output) kernel += l + "\n";
      EXPECT_EQ(text_61(cfg, zero, state_.handle, cmd.stats), kernel);
      return;
    }

    ASSERT_EQ(c.output.size(), 1U) << "tc -j prints one line";
    QdiscHeader header;
    header.major = state_.handle;
    const std::string ours_text =
        "[" + (cmd.stats ? format_qdisc_json(cfg, zero, header) : format_qdisc_json(cfg, header)) +
        "]";
    std::string error;
    const std::vector<FlatEntry> kernel = flatten(c.output[0], error);
    ASSERT_TRUE(error.empty()) << "kernel JSON: " << error;
    std::vector<FlatEntry> ours = flatten(ours_text, error);
    ASSERT_TRUE(error.empty()) << "our JSON: " << error << "\n" << ours_text;
    std::vector<FlatEntry> dropped;
    std::vector<FlatEntry> kept;
    for (auto& e : ours) (absent_in_61(e.path) ? dropped : kept).push_back(std::move(e));
    EXPECT_FALSE(dropped.empty()) << "our output should have the 6.7+ keys";
    // Key by key, in order (duplicates included).
    const std::size_t n = std::min(kept.size(), kernel.size());
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(kept[i].path, kernel[i].path) << "key #" << i;
      EXPECT_EQ(kept[i].value, kernel[i].value) << "at " << kernel[i].path;
    }
    EXPECT_EQ(kept.size(), kernel.size()) << "ours (6.1 keys):\n"
                                          << describe(kept) << "kernel:\n"
                                          << describe(kernel);
    // What tc -j printed, read back as a configuration, is the kernel's view of ours.
    const Expected<FqConfig> read_back = fq_config_from_json(c.output[0], fresh());
    ASSERT_TRUE(read_back.ok()) << read_back.error().message;
    EXPECT_EQ(*read_back, dumped_config(cfg));
  }
};

TEST(KernelGroundTruth, DataFileIsWellFormed) {
  const DataFile data = read_data_file(kDataFile);
  for (const auto& e : data.errors) ADD_FAILURE() << kDataFile << ": " << e;
  EXPECT_GT(data.cases.size(), 100U);
}

TEST(KernelGroundTruth, EveryCaseOfLinux61) {
  const DataFile data = read_data_file(kDataFile);
  ASSERT_TRUE(data.errors.empty()) << data.errors.front();
  ASSERT_FALSE(data.cases.empty());

  Summary summary;
  Replay replay(summary);
  for (const Case& c : data.cases) replay.run(c);

  // Every table entry must match a case of the file (no stale entries).
  for (const auto& s : kSkipped) {
    EXPECT_TRUE(summary.skip_entries_used.count(std::string(s.command)) != 0U)
        << "kSkipped entry matches no case: " << s.command;
  }
  for (const auto& d : kVersionDifferences) {
    EXPECT_TRUE(summary.version_entries_used.count(std::string(d.command)) != 0U)
        << "kVersionDifferences entry matches no rc=2 case: " << d.command;
  }
  for (const auto& p : kPartialChanges) {
    EXPECT_TRUE(summary.partial_entries_used.count(std::string(p.command)) != 0U)
        << "kPartialChanges entry matches no refused change: " << p.command;
  }

  const int total = static_cast<int>(data.cases.size());
  EXPECT_EQ(summary.checked + summary.skipped, total) << "every case is checked or skipped";
  ::testing::Test::RecordProperty("cases", total);
  ::testing::Test::RecordProperty("checked", summary.checked);
  ::testing::Test::RecordProperty("skipped", summary.skipped);
  std::cout << "[ summary  ] tc-params.txt (Linux 6.1, iproute2 6.1): " << total << " cases, "
            << summary.checked << " checked, " << summary.skipped << " skipped\n";
}

// The classification itself: a command the replay does not know must not be
// mistaken for one it does.
TEST(KernelGroundTruth, UnknownCommandsAreNotRecognised) {
  for (const char* line :
       {"tc qdisc add dev d0 root fq_codel", "tc qdisc add dev d1 root fq limit 5",
        "tc qdisc add dev d0 parent 1:1 fq", "tc qdisc del dev d0 root",
        "tc -s qdisc add dev d0 root fq", "tc -x qdisc show dev d0", "tc qdisc show dev d0 extra",
        "ip link show", "tc class show dev d0"}) {
    EXPECT_EQ(classify(line).kind, Command::Kind::unrecognised) << line;
  }
  EXPECT_EQ(classify("tc -j -s -d qdisc show dev d0").kind, Command::Kind::show);
  EXPECT_EQ(classify("tc qdisc replace dev d0 root fq timer_slack 1us").fq_words,
            (std::vector<std::string>{"timer_slack", "1us"}));
}

}  // namespace
}  // namespace ufq::tc
