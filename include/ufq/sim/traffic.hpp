// Traffic models: what the simulated owners send, and when. Each model is one
// file in sim/src/traffic/ (docs/simulator.md, "Adding a traffic model"): it
// declares its name, its own settings (with defaults and ranges) and which of
// the common workload settings it ignores, and makes a TrafficSource per run.
// `ufq sim` builds --traffic and the models' options from these declarations,
// and the library checks every value against them, once, before a run.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ufq/packet.hpp"
#include "ufq/time.hpp"

namespace ufq::sim {

struct SimConfig;

namespace detail {
// -ln(x) for x in [2^-53, 1] (x = 1 - Rng::unit()), within kNegLogError of
// the exact value: x = 2^e * m (m in [1, 2)), m's interval among 128 gives
// c = 1 + (j + 1/2) / 128 with ln c tabulated, and ln(m / c) = log1p(r),
// |r| <= 2^-8, a degree-5 series (truncation below 1e-15). The error
// (docs/simulator.md, "Speed"): the series' truncation and roundings below
// 1e-17, ln c's rounding 1e-16, e * ln 2's (|e| <= 53) and the two sums'
// below 2e-14 in all, under the bound by a factor of 40.
struct NegLogEntry {
  double c, inv_c, log_c;
};
extern const std::array<NegLogEntry, 128> kNegLogTable;
inline constexpr double kNegLogError = 0x1p-40;
inline double neg_log_approx(double x) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t mant = bits & ((std::uint64_t{1} << 52) - 1);
  const double e = static_cast<double>(static_cast<std::int64_t>(bits >> 52) - 1023);
  const double m = std::bit_cast<double>(mant | 0x3FF0000000000000ULL);
  const NegLogEntry& t = kNegLogTable[mant >> 45];
  const double r = (m - t.c) * t.inv_c;  // m - c is exact (both in [1, 2))
  const double log1p_r = r * (1 - r * (0.5 - r * (1.0 / 3 - r * (0.25 - r * 0.2))));
  return -(e * 0.6931471805599453 + (t.log_c + log1p_r));
}
}  // namespace detail

// Portable, deterministic random numbers (the standard distributions are not
// specified bit for bit across library versions).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  std::uint64_t below(std::uint64_t n) { return n ? g_() % n : 0; }
  double unit() { return static_cast<double>(g_() >> 11) * (1.0 / 9007199254740992.0); }
  // Exponential with the given mean, in ns: (Time)(-log(1 - unit()) * mean)
  // + 1, the same integer as with std::log for every draw (exponential_of).
  Time exponential(double mean_ns) { return exponential_of(1.0 - unit(), mean_ns); }

  // (Time)(-std::log(x) * mean) + 1 for x = 1 - unit() (in [2^-53, 1]) and
  // mean > 0, by a cheaper logarithm where that provably gives the same
  // integer: its product q is within D = kNegLogError * mean + q * 2^-48 of
  // std::log's (whose error, at most a few ulps, adds under q * 2^-50), so
  // when q - D and q + D truncate alike, std::log's product truncates to the
  // same; else (about one draw in 10^8 at the simulator's means) std::log.
  static Time exponential_of(double x, double mean_ns) {
    const double q = detail::neg_log_approx(x) * mean_ns;
    const double d = detail::kNegLogError * mean_ns + q * 0x1p-48;
    if (q + d < 0x1p62) [[likely]] {
      const std::int64_t lo = static_cast<std::int64_t>(q - d), hi = static_cast<std::int64_t>(q + d);
      if (lo == hi) [[likely]] return static_cast<Time>(lo) + 1;
    }
    return exponential_std(x, mean_ns);
  }
  // The formula with std::log itself.
  static Time exponential_std(double x, double mean_ns) { return static_cast<Time>(-std::log(x) * mean_ns) + 1; }

 private:
  std::mt19937_64 g_;
};

namespace detail {
// Rng::exponential_of(x[i], mean) for i < n, two at a time (the same
// logarithm, in double pairs, and the same fallback rule).
void exponential_batch(const double* x, Time* out, std::size_t n, double mean_ns);
// Rng::exponential's draws from the n (a multiple of 4) std::mt19937_64
// words at x, as running sums in out[0..n): four lanes at a time when `wide`
// and the CPU has AVX2 (x86), else two; the same integers either way.
void exponential_words(const std::uint64_t* x, Time* out, std::size_t n, double mean_ns, bool wide);
// Whether this CPU runs exponential_words' four-lane form.
bool exponential_words_wide();
}  // namespace detail

// The draws of Rng(seed).exponential(mean), in order, made a generator refill
// (312 words) at a time: the same std::mt19937_64 words, tempered, turned
// into 1 - unit() and their exponentials in double pairs, or fours on a CPU
// with AVX2 (exponential_words).
// For a stream that draws nothing else (the other interrupts' arrivals).
class ExponentialDraws {
 public:
  ExponentialDraws(std::uint64_t seed, double mean_ns);
  Time next() {
    if (i_ == kWords) [[unlikely]] refill();
    const Time d = sum_[i_] - (i_ ? sum_[i_ - 1] : 0);
    ++i_;
    return d;
  }
  // What `while (at <= now) { ++n; at += next(); }` counts and leaves in
  // `at`, the same draws taken, by a search in the draws' running sums
  // rather than a step per draw. Returns n.
  std::uint64_t arrivals_until(Time& at, Time now);

 private:
  static constexpr std::size_t kWords = 312;  // std::mt19937_64's state
  void refill();
  alignas(16) std::array<std::uint64_t, kWords + 2> x_{};  // + x[0]'s new value, + padding
  // The block's draws as running sums: draw i is sum_[i] - sum_[i - 1].
  alignas(16) std::array<Time, kWords> sum_{};
  std::size_t i_ = kWords;  // the next draw
  double mean_;
};

// A configuration the simulator refuses, in the library's words: the setting
// (a SimConfig field as named in SimConfigError::kSettings, or a traffic
// model's setting), the value given and what is accepted. `ufq sim` turns the
// setting into its option (--flows, --pcap, ...).
class SimConfigError : public std::invalid_argument {
 public:
  // `value` and `expected` may name other settings in braces ("at least
  // {queues}"): what() drops the braces, a tool may put its option names there.
  SimConfigError(std::string setting, std::string value, std::string expected)
      : std::invalid_argument(setting + " " + (value.empty() ? std::string("\"\"") : unbraced(value)) +
                              ": expected " + unbraced(expected)),
        setting_(std::move(setting)),
        value_(std::move(value)),
        expected_(std::move(expected)) {}
  const std::string& setting() const { return setting_; }
  const std::string& value() const { return value_; }
  const std::string& expected() const { return expected_; }
  // `text` (the value or what is expected) with each {setting} replaced by name(setting).
  template <class Name>
  static std::string with_names(const std::string& text, Name name) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const std::size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
      if (close == std::string::npos) {
        out += text[i];
        continue;
      }
      out += name(text.substr(i + 1, close - i - 1));
      i = close;
    }
    return out;
  }
  static std::string unbraced(const std::string& s) {
    std::string out;
    for (char c : s)
      if (c != '{' && c != '}') out += c;
    return out;
  }

 private:
  std::string setting_, value_, expected_;
};

// One setting of a traffic model, as the model declares it.
struct TrafficParam {
  enum class Type : std::uint8_t {
    time,   // a duration in ns, within [min, max]
    file,   // a path to read (required: no default)
    count,  // a whole number within [min, max] (default_time, min and max hold numbers)
  };
  std::string name{};  // lower case, words joined by '-': "on", "flow-lifetime", "csv"
  Type type = Type::time;
  std::string help{};
  Time default_time = 0;  // Type::time (Type::count: the default number)
  Time min = 0, max = 0;  // Type::time and Type::count: the accepted range
};

// A setting's value: a time (ns) or a number, or a path.
using TrafficValue = std::variant<Time, std::string>;
// The models' settings of one run, by name; a model's setting not given takes
// its declared default.
using TrafficSettings = std::map<std::string, TrafficValue, std::less<>>;

// A common workload setting a model does not read (`ufq sim` refuses it when
// given), and why.
struct IgnoredSetting {
  std::string setting;  // "flows", "rate" or "packet-size"
  std::string why;
};

// One flow as the simulation keeps it; a model sets its pacing and reads its
// progress. `slot` is its index among the run's flows, stable for the run.
// What every packet of a running flow reads or writes (its stamps, its
// departure books but the first, its generation, and the owner's bytes that
// fq's enqueue reads) lies in the first cache line, the rest in the second:
// a packet touches one line of its flow (docs/simulator.md, "Speed").
struct alignas(64) TrafficFlow {  // two cache lines (128 bytes): a shift to index
  Time gap = 0;              // EDT spacing (ns) of the default next(); 0 = no timestamps
  Time next_stamp = 0;       // the default next()'s next departure time
  std::uint64_t sent = 0;    // departures so far
  Time last = 0;             // the last departure's time
  // Which life of this slot the flow is in (TrafficHost::renew); its packets
  // carry it, so one of an ended flow no longer counts against its successor.
  std::uint32_t generation = 0;
  bool on = true;            // false: the flow sends nothing until resumed
  FlowOwner owner;           // bytes 40-80: fq reads its first 18 (id, hint, generation, kind)
  Time first = 0;            // the first departure's time
  double target_pps = 0;     // 0 = no target (rate error not measured)
  std::uint32_t slot = 0;
  std::uint32_t queue = 0;   // transmit queue (drawn by the simulation)
  std::uint32_t inflight = 0;
  // Which of the source's lateness_classes() the flow's lateness is recorded
  // in, counting from 1; 0 = none.
  std::uint32_t lateness_class = 0;
};
static_assert(offsetof(TrafficFlow, owner) == 40 && sizeof(TrafficFlow) == 128,
              "TrafficFlow: a packet's fields in the first line (see above)");

// A group of flows whose lateness the run reports apart, as a fraction of
// their common packet gap (TrafficSource::lateness_classes).
struct LatenessClass {
  std::string name;  // "fast", "slow"
  Time gap = 0;      // the flows' packet gap (ns)
};

// What the simulation offers a model while it runs.
class TrafficHost {
 public:
  virtual Time now() const = 0;
  // The run's random stream (seeded by SimConfig::seed); the order of draws is
  // part of the run, so a model draws the same way every time.
  virtual Rng& rng() = 0;
  virtual const SimConfig& config() const = 0;
  // Call the model's wake() for `f` at `at` (>= now). One wake per flow is
  // pending at a time.
  virtual void wake_at(TrafficFlow& f, Time at) = 0;
  // Start `f` now: its first packets are queued, its queue's qdisc runs, then
  // the model's started() is called.
  virtual void start(TrafficFlow& f) = 0;
  // Queue what `f` may now send (its in-flight allowance) and run its qdisc.
  virtual void resume(TrafficFlow& f) = 0;
  // `f` falls silent for good (its queued packets still leave); a flow with a
  // never-used key takes its slot, on a transmit queue drawn afresh, not started.
  virtual void renew(TrafficFlow& f) = 0;

 protected:
  ~TrafficHost() = default;
};

// One run's traffic: made by the model's factory once the configuration has
// passed its checks.
class TrafficSource {
 public:
  virtual ~TrafficSource() = default;
  // How many flows the run has (a trace: as many as it holds). Called once, first.
  virtual std::uint32_t flows(const SimConfig& cfg) const;
  // Set up `f` (its owner id, slot and queue are set); returns when it starts
  // (kNever: never). Called for every flow in slot order.
  virtual Time init(TrafficFlow& f, TrafficHost& host) = 0;
  // The next packet of `f`: its departure time (0 = none) and its length
  // (preset to --packet-size). False: `f` has nothing more to send.
  // EDT stamps `gap` apart from `next_stamp` when gap > 0, unless the source
  // gives packets of its own (own_next()). Not virtual: it is called once per
  // packet, and every model but the trace replays uses the stamps.
  bool next(TrafficFlow& f, Time& tstamp, std::uint32_t& len) {
    if (own_packets_) [[unlikely]] {
      // Through copies, so that the caller's own stay in registers.
      Time t = tstamp;
      std::uint32_t l = len;
      const bool more = own_next(f, t, l);
      tstamp = t;
      len = l;
      return more;
    }
    tstamp = stamp(f, tstamp);
    return true;
  }
  // Whether next() gives the source's own packets (own_next()) rather than
  // stamp()'s, which a caller may then use directly.
  bool own_packets() const { return own_packets_; }
  // next() of a source without packets of its own: the flow's next EDT stamp
  // when gap > 0 (advancing it), else `none`.
  static Time stamp(TrafficFlow& f, Time none) {
    if (!f.gap) return none;
    const Time t = f.next_stamp;
    f.next_stamp += f.gap;
    return t;
  }
  // `f` has started (its first packets are queued).
  virtual void started(TrafficFlow& f, TrafficHost& host) {
    (void)f;
    (void)host;
  }
  // The classes TrafficFlow::lateness_class refers to (none by default).
  // Called once, after every init().
  virtual std::vector<LatenessClass> lateness_classes() const { return {}; }
  // A wake `f` asked for (TrafficHost::wake_at) is due.
  virtual void wake(TrafficFlow& f, TrafficHost& host) {
    (void)f;
    (void)host;
  }

 protected:
  TrafficSource() = default;
  // A source whose packets are its own (a trace): next() calls own_next(),
  // which it must override, instead of stamping `gap` apart.
  struct OwnPackets {};
  explicit TrafficSource(OwnPackets) : own_packets_(true) {}
  // next() for a source built with OwnPackets; same contract as next().
  virtual bool own_next(TrafficFlow& f, Time& tstamp, std::uint32_t& len);

 private:
  bool own_packets_ = false;
};

// Work a run of a model would simulate, for an estimate of a run's size
// before it starts (`ufq sim` refuses runs of hours).
struct TrafficWork {
  double per_s = 0;                   // events (or packets) per simulated second
  std::string what;                   // "packets", "on/off switches"
  std::vector<std::string> settings;  // the settings that drive it, named as in SimConfigError
};

// A traffic model as registered: one per file in sim/src/traffic/.
struct TrafficModelInfo {
  std::string name{};  // --traffic NAME
  std::string help{};  // one line
  std::vector<TrafficParam> params{};
  std::vector<IgnoredSetting> ignores{};
  // The model wakes every flow often (churn): its wakes share one event and a
  // heap of their own, so the event queue stays a few entries deep.
  bool shared_wakes = false;
  // Once the run has started, the model's source touches only the flow it is
  // called for (no host rng(), no state shared by flows, a flow stays on its
  // queue): the transmit queues then share nothing, and the simulator may run
  // each queue's CPU on its own (SimConfig::queues_apart). False when unsure.
  bool flows_apart = false;
  // Adjusts the run's configuration before anything is built (e.g. maxrate
  // derives fq's maxrate from the rate when none is given). May be empty.
  std::function<void(SimConfig&)> adjust{};
  // Packets per second the model can offer at most, before the NIC's line
  // rate caps them (empty: the rate setting; 0: unknown, e.g. a trace).
  std::function<TrafficWork(const SimConfig&)> packets{};
  // Other events per second (on/off switches, flow replacements). May be empty.
  std::function<TrafficWork(const SimConfig&)> work{};
  // Makes the run's source. `settings` holds every declared setting (given or
  // default), checked against its declaration. Throws SimConfigError for an
  // input it cannot use (a file that does not parse).
  std::function<std::unique_ptr<TrafficSource>(const SimConfig&, const TrafficSettings&)> make{};
};

// Every registered model, by name (sorted).
const std::vector<const TrafficModelInfo*>& traffic_models();
// The model called `name`, or nullptr.
const TrafficModelInfo* find_traffic_model(std::string_view name);
// "bulk, churn, ... or rate": the names, for messages.
std::string traffic_model_names();

// The value of `name` for a run: given in `settings`, or the declared default.
// Throws SimConfigError when it is missing (a file), of the wrong type or out
// of its declared range.
TrafficValue traffic_setting(const TrafficModelInfo& model, const TrafficSettings& settings, std::string_view name);

// "1us", "86400s", "1.5ms": a time as the settings' ranges are written.
std::string format_time(Time ns);

}  // namespace ufq::sim
