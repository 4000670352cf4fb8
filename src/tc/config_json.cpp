// JSON configuration files with `tc -j` key names.
#include "ufq/tc/config_json.hpp"

#include <bit>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ufq::tc {
namespace {

using Json = nlohmann::json;

constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();

Error bad_value(const std::string& key, const Json& value, std::string expected) {
  std::string shown = value.dump();
  std::string message = "\"" + key + "\": " + shown + " refused: expected " + expected;
  return Error{Error::Kind::syntax, key, std::move(shown), std::move(expected), std::move(message)};
}

Error bad_document(std::string what) {
  return Error{Error::Kind::input, "", "", "an fq options object or tc -j qdisc output",
               std::move(what)};
}

// Unsigned integer in [lo, hi]; JSON booleans, strings and fractions are refused.
std::optional<Error> integer(const std::string& key, const Json& v, std::uint64_t lo,
                             std::uint64_t hi, std::uint64_t& out) {
  const std::string range = "an integer " + std::to_string(lo) + ".." + std::to_string(hi);
  if (!v.is_number_unsigned()) return bad_value(key, v, range);
  const auto x = v.get<std::uint64_t>();
  if (x < lo || x > hi) return bad_value(key, v, range);
  out = x;
  return std::nullopt;
}

std::optional<Error> u32(const std::string& key, const Json& v, std::uint32_t& out) {
  std::uint64_t x = 0;
  if (auto err = integer(key, v, 0, kU32Max, x)) return err;
  out = static_cast<std::uint32_t>(x);
  return std::nullopt;
}

// The whole document -> options object, or an error.
std::optional<Error> find_options(const Json& doc, const Json*& options, bool& qdisc_form) {
  const Json* qdisc = nullptr;
  if (doc.is_array()) {
    if (doc.size() != 1 || !doc[0].is_object())
      return bad_document("a tc -j array must hold exactly one qdisc object, this one holds " +
                          std::to_string(doc.size()) + " element(s)");
    qdisc = &doc[0];
  } else if (doc.is_object()) {
    if (doc.contains("kind")) qdisc = &doc;  // options never have a "kind"
  } else {
    return bad_document("expected a JSON object, got " + std::string(doc.type_name()));
  }
  qdisc_form = qdisc != nullptr;
  if (qdisc == nullptr) {
    options = &doc;
    return std::nullopt;
  }
  const auto kind = qdisc->find("kind");
  if (kind == qdisc->end()) return bad_document("a qdisc object needs \"kind\": \"fq\"");
  if (*kind != "fq") return bad_value("kind", *kind, "\"fq\"");
  static const Json kEmpty = Json::object();
  const auto o = qdisc->find("options");
  if (o == qdisc->end()) {
    options = &kEmpty;
    return std::nullopt;
  }
  if (!o->is_object()) return bad_value("options", *o, "an object of fq options");
  options = &*o;
  return std::nullopt;
}

class OptionsReader {
 public:
  OptionsReader(const FqConfig& base, std::vector<std::string>* notes)
      : cfg_(base), notes_(notes) {}

  Expected<FqConfig> run(const Json& options) {
    for (const auto& [key, value] : options.items()) {
      if (auto err = item(key, value)) return std::move(*err);
    }
    if (horizon_drop_ && latest()) cfg_.horizon_drop = *horizon_drop_;
    if (auto refused = validate(cfg_)) {
      return Error{Error::Kind::kernel, refused->field(), refused->value(), refused->valid(),
                   std::string("Error: ") + refused->what()};
    }
    return cfg_;
  }

 private:
  bool latest() const { return cfg_.compat == Compat::latest; }

  void note(std::string text) const {
    if (notes_ != nullptr) notes_->push_back(std::move(text));
  }
  void note_ignored(const std::string& key) const {
    note("\"" + key + "\" is ignored by the " + to_string(cfg_.compat) +
         " kernel (attribute unknown to it)");
  }

  std::optional<Error> horizon_flag(const std::string& key, const Json& v, bool drop_when_set) {
    if (!v.is_null() && !v.is_boolean()) return bad_value(key, v, "null or a boolean");
    const bool set = v.is_null() || v.get<bool>();
    const bool drop = set == drop_when_set;
    if (horizon_drop_ && *horizon_drop_ != drop)
      return bad_value(key, v, "a choice agreeing with the other of horizon_drop / horizon_cap");
    horizon_drop_ = drop;
    if (!latest()) note_ignored(key);
    return std::nullopt;
  }

  std::optional<Error> priomap(const std::string& key, const Json& v) {
    if (seen_priomap_) return bad_value(key, v, "one of \"priomap\" and \"priomap \", not both");
    seen_priomap_ = true;
    constexpr const char* kForm = "an array of 16 integers 0..2";
    if (!v.is_array() || v.size() != 16) return bad_value(key, v, kForm);
    std::array<std::uint8_t, 16> map{};
    for (std::size_t i = 0; i < map.size(); ++i) {
      std::uint64_t band = 0;
      if (integer(key, v[i], 0, kBands - 1, band)) return bad_value(key, v, kForm);
      map[i] = static_cast<std::uint8_t>(band);
    }
    if (latest())
      cfg_.priomap = map;
    else
      note_ignored(key);
    return std::nullopt;
  }

  std::optional<Error> weights(const std::string& key, const Json& v) {
    if (seen_weights_) return bad_value(key, v, "one of \"weights\" and \"weights \", not both");
    seen_weights_ = true;
    constexpr const char* kForm = "an array of 3 integers 16384..2147483647";
    if (!v.is_array() || v.size() != kBands) return bad_value(key, v, kForm);
    std::array<std::int32_t, kBands> w{};
    for (std::size_t i = 0; i < w.size(); ++i) {
      std::uint64_t x = 0;
      if (integer(key, v[i], kMinWeight, std::numeric_limits<std::int32_t>::max(), x))
        return bad_value(key, v, kForm);
      w[i] = static_cast<std::int32_t>(x);
    }
    if (latest())
      cfg_.weights = w;
    else
      note_ignored(key);
    return std::nullopt;
  }

  std::optional<Error> item(const std::string& key, const Json& v) {
    std::uint32_t x = 0;
    std::uint64_t wide = 0;
    if (key == "limit") return u32(key, v, cfg_.limit);
    if (key == "flow_limit") return u32(key, v, cfg_.flow_limit);
    if (key == "quantum") return u32(key, v, cfg_.quantum);
    if (key == "initial_quantum") return u32(key, v, cfg_.initial_quantum);
    if (key == "orphan_mask") return u32(key, v, cfg_.orphan_mask);
    if (key == "low_rate_threshold") return u32(key, v, cfg_.low_rate_threshold);
    if (key == "refill_delay") return u32(key, v, cfg_.refill_delay_us);
    if (key == "ce_threshold") return u32(key, v, cfg_.ce_threshold_us);
    if (key == "timer_slack") return u32(key, v, cfg_.timer_slack_ns);
    if (key == "ufq_adaptive_slack_ppm") return u32(key, v, cfg_.adaptive_slack_ppm);
    if (key == "ufq_adaptive_slack_max") return u32(key, v, cfg_.adaptive_slack_max_ns);
    if (key == "buckets") {
      constexpr std::uint64_t kMax = std::uint64_t{1} << 31;
      const std::string form = "a power of two 1..2147483648 (the kernel takes 2..262144)";
      if (!v.is_number_unsigned()) return bad_value(key, v, form);
      wide = v.get<std::uint64_t>();
      if (wide == 0 || wide > kMax || !std::has_single_bit(wide)) return bad_value(key, v, form);
      cfg_.buckets_log = static_cast<std::uint8_t>(std::countr_zero(wide));
      return std::nullopt;
    }
    if (key == "maxrate") {
      if (auto err = u32(key, v, x)) return err;
      cfg_.maxrate = x == kU32Max ? kUnlimitedRate : Rate{x};
      return std::nullopt;
    }
    if (key == "defrate") {
      if (auto err = u32(key, v, x)) return err;
      note("\"defrate\" is obsolete: accepted and ignored by the kernel");
      return std::nullopt;
    }
    if (key == "pacing") {
      if (!v.is_boolean()) return bad_value(key, v, "true or false");
      cfg_.pacing = v.get<bool>();
      return std::nullopt;
    }
    if (key == "horizon" || key == "offload_horizon") {
      if (auto err = u32(key, v, x)) return err;
      if (!latest())
        note_ignored(key);
      else if (key == "horizon")
        cfg_.horizon_us = x;
      else
        cfg_.offload_horizon_us = x;
      return std::nullopt;
    }
    if (key == "horizon_drop") return horizon_flag(key, v, true);
    if (key == "horizon_cap") return horizon_flag(key, v, false);
    if (key == "bands") {
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() != kBands)
        return bad_value(key, v, "3 (FQ has 3 bands)");
      return std::nullopt;
    }
    if (key == "priomap" || key == "priomap ") return priomap(key, v);
    if (key == "weights" || key == "weights ") return weights(key, v);
    return bad_value(key, v,
                     "a known fq option key (limit, flow_limit, buckets, quantum, "
                     "initial_quantum, maxrate, defrate, pacing, refill_delay, orphan_mask, "
                     "low_rate_threshold, ce_threshold, timer_slack, horizon, horizon_drop, "
                     "horizon_cap, bands, priomap, weights, offload_horizon; ufq extensions: "
                     "ufq_adaptive_slack_ppm, ufq_adaptive_slack_max)");
  }

  FqConfig cfg_;
  std::vector<std::string>* notes_;
  std::optional<bool> horizon_drop_;
  bool seen_priomap_ = false;
  bool seen_weights_ = false;
};

}  // namespace

Expected<FqConfig> fq_config_from_json(std::string_view json_text, const FqConfig& base,
                                       std::vector<std::string>* notes) {
  // nlohmann keeps the last of duplicate keys silently; a configuration must
  // not. Duplicates are noted with the path of their object ("/options",
  // "/*/options"; "*" for an array element) and judged once it is known which
  // objects are read: tc's own -j -s output repeats "throttled" among the
  // counters, which are skipped.
  struct Open {
    std::string path;
    bool array = false;
    std::string last_key;
    std::set<std::string> keys;
  };
  std::vector<Open> open;
  std::vector<std::pair<std::string, std::string>> duplicates;  // (object path, key)
  const Json::parser_callback_t track = [&](int /*depth*/, Json::parse_event_t event,
                                            Json& parsed) {
    using E = Json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      std::string path;
      if (!open.empty()) path = open.back().path + "/" + (open.back().array ? "*" : open.back().last_key);
      open.push_back(Open{std::move(path), event == E::array_start, {}, {}});
    } else if (event == E::object_end || event == E::array_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == E::key && !open.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      open.back().last_key = key;
      if (!open.back().keys.insert(key).second) duplicates.emplace_back(open.back().path, key);
    }
    return true;
  };
  Json doc;
  try {
    doc = Json::parse(json_text.begin(), json_text.end(), track);
  } catch (const Json::exception& e) {
    return bad_document(std::string("invalid JSON: ") + e.what());
  }
  const Json* options = nullptr;
  bool qdisc_form = false;
  if (auto err = find_options(doc, options, qdisc_form)) return std::move(*err);
  const std::string options_path = !qdisc_form ? "" : doc.is_array() ? "/*/options" : "/options";
  const std::string qdisc_path = doc.is_array() ? "/*" : "";
  for (const auto& [path, key] : duplicates) {
    const bool read = path == options_path ||
                      (qdisc_form && path == qdisc_path && (key == "kind" || key == "options"));
    if (read)
      return Error{Error::Kind::syntax, key, "", "each key once",
                   "\"" + key + "\" is given more than once"};
  }
  FqConfig start = base;
  if (qdisc_form) {
    // tc prints these only when they differ from what their absence means.
    start.pacing = true;
    start.maxrate = kUnlimitedRate;
    start.low_rate_threshold = 0;
    start.ce_threshold_us = kCeThresholdDisabled;
  }
  return OptionsReader(start, notes).run(*options);
}

Expected<FqConfig> load_fq_config(const std::filesystem::path& file, const FqConfig& base,
                                  std::vector<std::string>* notes) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return Error{Error::Kind::input, file.string(), "", "a readable JSON file",
                 "cannot open " + file.string()};
  // `tc -j` output is a few KB; reading stops at the cap, so /dev/zero or an
  // endless pipe is refused instead of filling memory.
  constexpr std::size_t kMaxBytes = 1 << 20;
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad())
    return Error{Error::Kind::input, file.string(), "", "a readable JSON file",
                 "cannot read " + file.string()};
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxBytes)
    return Error{Error::Kind::input, file.string(), "", "a JSON file of at most 1 MiB",
                 file.string() + ": larger than 1 MiB; not an fq configuration"};
  auto result = fq_config_from_json(text, base, notes);
  if (!result.ok() && result.error().kind == Error::Kind::input) {
    Error e = result.error();
    e.message = file.string() + ": " + e.message;
    return e;
  }
  return result;
}

}  // namespace ufq::tc
