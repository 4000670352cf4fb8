// Reading the words after `fq` (tc's fq option parser,
// docs/fq-rules.md#configuration and #tc-parsing-and-units).
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "text.hpp"
#include "ufq/tc/fq_options.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::tc {
namespace {

constexpr std::string_view kCountForm =
    "an unsigned 32-bit integer (decimal, 0x hex or 0-prefixed octal) without unit";
constexpr std::string_view kRateForm =
    "a rate up to 4294967295 bytes/s, a fraction of a byte/s dropped (e.g. 550kbit, 10mbit, "
    "1.5gbit, 125kbps = 125000 bytes/s; no unit = bit/s)";
constexpr std::string_view kTimeUsForm =
    "a time up to 4294967295us (unit s, ms or us; no unit = us; e.g. 40ms, 1.5s)";
constexpr std::string_view kTimeNsForm =
    "a time 0..4294967295ns (unit s, ms, us or ns; no unit = ns; e.g. 10us)";

constexpr std::string_view kFractionForm =
    "off, or a fraction of a flow's wait 0.0001%..100% (e.g. 10%, or 0.1)";

Error syntax_error(std::string_view keyword, std::string_view value, std::string_view expected,
                   std::string message) {
  return Error{Error::Kind::syntax, std::string(keyword), std::string(value),
               std::string(expected), std::move(message)};
}

Error illegal(std::string_view keyword, std::string_view value, std::string_view expected) {
  return syntax_error(keyword, value, expected,
                      "Illegal " + quoted(keyword) + " value " + quoted(value) + ": expected " +
                          std::string(expected));
}

Error out_of_range(std::string_view keyword, std::string_view value, std::string_view expected) {
  return syntax_error(keyword, value, expected,
                      "Illegal (out of range) " + quoted(keyword) + " value " + quoted(value) +
                          ": expected " + std::string(expected));
}

Error missing(std::string_view keyword, std::string_view expected) {
  return syntax_error(keyword, "", expected,
                      "Command line is not complete: " + quoted(keyword) + " needs " +
                          std::string(expected));
}

// Number of bits needed for n (tc sends buckets_log = bit length of N-1).
std::uint8_t bit_length(std::uint32_t n) {
  std::uint8_t len = 0;
  while (n != 0) {
    ++len;
    n >>= 1;
  }
  return len;
}

class FqParser {
 public:
  FqParser(std::span<const std::string> words, const FqConfig& base, const ParseOptions& options)
      : words_(words), cfg_(base), options_(options) {}

  Expected<FqConfig> run() {
    while (pos_ < words_.size()) {
      const std::string_view keyword = words_[pos_++];
      if (auto err = option(keyword)) return std::move(*err);
    }
    // tc sends the bucket count as a log; 0 buckets sends nothing.
    if (buckets_ != 0) cfg_.buckets_log = bit_length(buckets_ - 1);
    if (auto refused = validate(cfg_)) {
      std::string message = std::string("Error: ") + refused->what();
      if (refused->field() == "buckets_log" && buckets_ != 0)
        message += " (\"buckets " + std::to_string(buckets_) + "\" is sent as log " +
                   std::to_string(cfg_.buckets_log) + ")";
      return Error{Error::Kind::kernel, refused->field(), refused->value(), refused->valid(),
                   std::move(message)};
    }
    return cfg_;
  }

 private:
  using MaybeError = std::optional<Error>;

  bool latest() const { return cfg_.compat == Compat::latest; }

  void note(std::string text) const {
    if (options_.notes != nullptr) options_.notes->push_back(std::move(text));
  }
  void note_ignored(std::string_view keyword) const {
    note(quoted(keyword) + " is ignored by the " + to_string(cfg_.compat) +
         " kernel (attribute unknown to it)");
  }

  // The word after the keyword, or an error saying what was expected.
  std::optional<std::string_view> next(std::string_view keyword, std::string_view expected,
                                       MaybeError& err) {
    if (pos_ >= words_.size()) {
      err = missing(keyword, expected);
      return std::nullopt;
    }
    return std::string_view(words_[pos_++]);
  }

  MaybeError count(std::string_view keyword, std::uint32_t& out) {
    MaybeError err;
    const auto word = next(keyword, kCountForm, err);
    if (!word) return err;
    const auto v = parse_unsigned(*word, 0);
    if (!v) return illegal(keyword, *word, kCountForm);
    out = *v;
    return std::nullopt;
  }

  // A rate, or (maxrate/defrate) a percentage of the link speed.
  MaybeError rate(std::string_view keyword, bool percent_allowed, std::uint32_t& out) {
    MaybeError err;
    const auto word = next(keyword, kRateForm, err);
    if (!word) return err;
    if (percent_allowed && word->find('%') != std::string_view::npos) {
      const auto fraction = parse_percent(*word);
      if (!fraction) return illegal(keyword, *word, "a percentage 0%..100% of the link speed");
      if (!options_.link_speed_bits) {
        return syntax_error(keyword, *word, "a link speed to take the percentage of",
                            "Illegal " + quoted(keyword) + " value " + quoted(*word) +
                                ": a percentage needs the link speed, which was not given "
                                "(ufq: --link-speed RATE)");
      }
      const double bytes =
          std::floor(*fraction * static_cast<double>(*options_.link_speed_bits) / 8.0);
      if (bytes > 4294967295.0)
        return out_of_range(keyword, *word, "at most 4294967295 bytes/s (about 34.36gbit)");
      out = static_cast<std::uint32_t>(bytes);
      return std::nullopt;
    }
    const auto v = parse_rate(*word);
    if (!v) return illegal(keyword, *word, kRateForm);
    out = *v;
    return std::nullopt;
  }

  MaybeError time_us(std::string_view keyword, std::uint32_t& out) {
    MaybeError err;
    const auto word = next(keyword, kTimeUsForm, err);
    if (!word) return err;
    const auto value = parse_time_value(*word, TimeUnit::us);
    if (!value) return illegal(keyword, *word, kTimeUsForm);
    // tc would wrap these through an undefined conversion; refuse them instead.
    const auto v = parse_time_us(*word);
    if (!v) return out_of_range(keyword, *word, kTimeUsForm);
    out = *v;
    return std::nullopt;
  }

  MaybeError timer_slack(std::string_view keyword) {
    MaybeError err;
    const auto word = next(keyword, kTimeNsForm, err);
    if (!word) return err;
    const auto value = parse_time_value(*word, TimeUnit::ns);
    if (!value) return illegal(keyword, *word, kTimeNsForm);
    const double ns = std::trunc(*value);
    if (!(ns >= 0.0 && ns <= 4294967295.0)) return out_of_range(keyword, *word, kTimeNsForm);
    cfg_.timer_slack_ns = static_cast<std::uint32_t>(ns);
    return std::nullopt;
  }

  // `adaptive_slack FRACTION|off [max TIME]`, a ufq
  // extension (docs/fq-rules.md#adaptive-slack). validate() refuses it for a
  // kernel level that cannot have it (5.7).
  MaybeError adaptive_slack(std::string_view keyword) {
    MaybeError err;
    const auto word = next(keyword, kFractionForm, err);
    if (!word) return err;
    if (*word == "off" || *word == "0") {
      cfg_.adaptive_slack_ppm = 0;
    } else {
      std::string_view number = *word;
      double scale = 1e6;  // a plain fraction
      if (!number.empty() && number.back() == '%') {
        number.remove_suffix(1);
        scale = 1e4;
      }
      const auto value = parse_time_value(number, TimeUnit::ns);  // a plain decimal number
      if (!value || number.empty() || !std::isdigit(static_cast<unsigned char>(number.back())))
        return illegal(keyword, *word, kFractionForm);
      const double ppm = std::round(*value * scale);
      if (!(ppm >= 1.0 && ppm <= 1e6)) return out_of_range(keyword, *word, kFractionForm);
      cfg_.adaptive_slack_ppm = static_cast<std::uint32_t>(ppm);
    }
    if (pos_ < words_.size() && words_[pos_] == "max") {
      ++pos_;
      const auto max = next("adaptive_slack max", kTimeNsForm, err);
      if (!max) return err;
      const auto t = parse_time_value(*max, TimeUnit::ns);
      if (!t) return illegal("adaptive_slack max", *max, kTimeNsForm);
      const double ns = std::trunc(*t);
      if (!(ns >= 0.0 && ns <= 4294967295.0)) return out_of_range("adaptive_slack max", *max, kTimeNsForm);
      cfg_.adaptive_slack_max_ns = static_cast<std::uint32_t>(ns);
    }
    return std::nullopt;
  }

  MaybeError bands(std::string_view keyword) {
    if (seen_bands_) return syntax_error(keyword, "", "bands given once", "Duplicate \"bands\"");
    seen_bands_ = true;
    MaybeError err;
    const auto word = next(keyword, "3", err);
    if (!word) return err;
    const auto n = parse_integer(*word, 10);
    if (!n) return illegal(keyword, *word, "3");
    if (*n != 3)
      return syntax_error(keyword, *word, "3", "\"bands\" must be 3 (FQ has 3 bands)");
    const auto pm = next(keyword, "the word \"priomap\" after \"bands 3\"", err);
    if (!pm) return err;
    if (*pm != "priomap")
      return syntax_error("priomap", *pm, "priomap",
                          "\"priomap\" expected after \"bands 3\", got " + quoted(*pm));
    std::array<std::uint8_t, 16> map{};
    for (std::size_t i = 0; i < map.size(); ++i) {
      constexpr std::string_view kBandForm = "16 band numbers, each 0..2";
      if (pos_ >= words_.size())
        return syntax_error("priomap", "", kBandForm,
                            "Not enough elements in priomap: " + std::to_string(i) +
                                " of 16 given");
      const std::string_view w = words_[pos_++];
      const auto band = parse_unsigned(w, 10);
      if (!band)
        return syntax_error("priomap", w, kBandForm,
                            "Illegal \"priomap\" element " + quoted(w) +
                                ": number in [0..2] expected");
      if (*band >= kBands)
        return syntax_error("priomap", w, kBandForm,
                            "\"priomap\" element " + std::string(w) + " too big (bands are 0..2)");
      map[i] = static_cast<std::uint8_t>(*band);
    }
    if (latest())
      cfg_.priomap = map;
    else
      note_ignored("priomap");
    return std::nullopt;
  }

  MaybeError weights(std::string_view keyword) {
    if (seen_weights_)
      return syntax_error(keyword, "", "weights given once", "Duplicate \"weights\"");
    seen_weights_ = true;
    constexpr std::string_view kWeightForm =
        "3 integers, each 16384..2147483647 (bytes per round for bands 0, 1, 2)";
    std::array<std::int32_t, kBands> w{};
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (pos_ >= words_.size())
        return syntax_error(keyword, "", kWeightForm,
                            "Not enough elements in weights: " + std::to_string(i) +
                                " of 3 given");
      const std::string_view word = words_[pos_++];
      const auto v = parse_integer(word, 10);
      if (!v)
        return syntax_error(keyword, word, kWeightForm,
                            "Illegal \"weights\" element " + quoted(word) +
                                ": positive number expected");
      if (*v < kMinWeight)
        return syntax_error(keyword, word, kWeightForm,
                            "\"weight\" element " + std::string(word) + " too small (minimum 16384)");
      w[i] = *v;
    }
    if (latest())
      cfg_.weights = w;
    else
      note_ignored("weights");
    return std::nullopt;
  }

  // One keyword and its values.
  MaybeError option(std::string_view kw) {
    std::uint32_t v = 0;
    if (kw == "limit") return count(kw, cfg_.limit);
    if (kw == "flow_limit") return count(kw, cfg_.flow_limit);
    if (kw == "quantum") return count(kw, cfg_.quantum);
    if (kw == "initial_quantum") return count(kw, cfg_.initial_quantum);
    if (kw == "orphan_mask") return count(kw, cfg_.orphan_mask);
    if (kw == "buckets") return count(kw, buckets_);
    if (kw == "maxrate") {
      if (auto err = rate(kw, true, v)) return err;
      // 0xFFFFFFFF bytes/s is the kernel's "unlimited".
      cfg_.maxrate = v == 0xFFFFFFFFU ? kUnlimitedRate : Rate{v};
      return std::nullopt;
    }
    if (kw == "defrate") {
      if (auto err = rate(kw, true, v)) return err;
      note("\"defrate\" is obsolete: accepted and ignored by the kernel");
      return std::nullopt;
    }
    if (kw == "low_rate_threshold") return rate(kw, false, cfg_.low_rate_threshold);
    if (kw == "refill_delay") return time_us(kw, cfg_.refill_delay_us);
    if (kw == "ce_threshold") return time_us(kw, cfg_.ce_threshold_us);
    if (kw == "timer_slack") return timer_slack(kw);
    if (kw == "adaptive_slack") return adaptive_slack(kw);
    if (kw == "horizon" || kw == "offload_horizon") {
      if (auto err = time_us(kw, v)) return err;
      if (!latest())
        note_ignored(kw);
      else if (kw == "horizon")
        cfg_.horizon_us = v;
      else
        cfg_.offload_horizon_us = v;
      return std::nullopt;
    }
    if (kw == "pacing" || kw == "nopacing") {
      cfg_.pacing = kw == "pacing";
      return std::nullopt;
    }
    if (kw == "horizon_drop" || kw == "horizon_cap") {
      if (latest())
        cfg_.horizon_drop = kw == "horizon_drop";
      else
        note_ignored(kw);
      return std::nullopt;
    }
    if (kw == "bands") return bands(kw);
    if (kw == "weights") return weights(kw);
    if (kw == "help")
      return syntax_error(kw, "", "fq options", "Usage: ... fq " + std::string(fq_usage()));
    return syntax_error(kw, kw, "an fq option keyword (try \"help\")",
                        "What is " + quoted(kw) + "?");
  }

  std::span<const std::string> words_;
  std::size_t pos_ = 0;
  FqConfig cfg_;
  const ParseOptions& options_;
  std::uint32_t buckets_ = 0;
  bool seen_bands_ = false;
  bool seen_weights_ = false;
};

}  // namespace

std::string_view fq_usage() {
  return "[ limit PACKETS ] [ flow_limit PACKETS ] [ quantum BYTES ] [ initial_quantum BYTES ] "
         "[ maxrate RATE ] [ buckets NUMBER ] [ [no]pacing ] [ refill_delay TIME ] "
         "[ low_rate_threshold RATE ] [ orphan_mask MASK ] [ timer_slack TIME ] "
         "[ ce_threshold TIME ] [ horizon TIME ] [ horizon_{cap|drop} ] "
         "[ bands 3 priomap P0 .. P15 ] [ weights W0 W1 W2 ] [ offload_horizon TIME ] "
         "[ adaptive_slack FRACTION [ max TIME ] ]";
}

Expected<FqConfig> parse_fq_options(std::span<const std::string> words, const FqConfig& base,
                                    const ParseOptions& options) {
  return FqParser(words, base, options).run();
}

Expected<FqConfig> parse_fq_line(std::string_view line, const FqConfig& base,
                                 const ParseOptions& options) {
  const auto words = split_words(line);
  return parse_fq_options(words, base, options);
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      if (!cur.empty()) words.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

std::string join_words(std::span<const std::string> words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

}  // namespace ufq::tc
