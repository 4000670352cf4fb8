// The traffic models' registry (the list is generated from the files in
// sim/src/traffic/, see sim/CMakeLists.txt) and the checks of their settings.
#include "ufq/sim/traffic.hpp"

#include <algorithm>
#include <cmath>

#include "ufq/sim/simulation.hpp"

namespace ufq::sim {

// Generated: one entry per sim/src/traffic/<name>.cpp.
std::vector<const TrafficModelInfo*> registered_traffic_models();

namespace detail {
// c = 1 + (j + 1/2) / 128 (exact), 1 / c and ln c rounded to nearest by the
// compiler's and the library's double arithmetic (within an ulp: the bound in
// traffic.hpp allows ten).
const std::array<NegLogEntry, 128> kNegLogTable = [] {
  std::array<NegLogEntry, 128> t{};
  for (int j = 0; j < 128; ++j) {
    const double c = 1.0 + (j + 0.5) / 128.0;
    t[static_cast<std::size_t>(j)] = NegLogEntry{c, 1.0 / c, std::log(c)};
  }
  return t;
}();
}  // namespace detail

std::uint32_t TrafficSource::flows(const SimConfig& cfg) const { return cfg.flows; }

bool TrafficSource::own_next(TrafficFlow&, Time&, std::uint32_t&) {
  throw std::logic_error("traffic source built with OwnPackets does not override own_next()");
}

const std::vector<const TrafficModelInfo*>& traffic_models() {
  static const std::vector<const TrafficModelInfo*> models = [] {
    auto m = registered_traffic_models();
    std::sort(m.begin(), m.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
    return m;
  }();
  return models;
}

const TrafficModelInfo* find_traffic_model(std::string_view name) {
  for (const TrafficModelInfo* m : traffic_models())
    if (m->name == name) return m;
  return nullptr;
}

std::string traffic_model_names() {
  const auto& all = traffic_models();
  std::string s;
  for (std::size_t i = 0; i < all.size(); ++i)
    s += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i]->name;
  return s;
}

std::string format_time(Time ns) {
  struct Unit {
    Time ns;
    const char* suffix;
  };
  for (const Unit u : {Unit{kNsecPerSec, "s"}, Unit{kNsecPerMsec, "ms"}, Unit{kNsecPerUsec, "us"}})
    if (ns >= u.ns && ns % u.ns == 0) return std::to_string(ns / u.ns) + u.suffix;
  return std::to_string(ns) + "ns";
}

TrafficValue traffic_setting(const TrafficModelInfo& model, const TrafficSettings& settings, std::string_view name) {
  const auto decl = std::find_if(model.params.begin(), model.params.end(),
                                 [&](const TrafficParam& p) { return p.name == name; });
  if (decl == model.params.end())
    throw SimConfigError(std::string(name), "", "no such setting of traffic " + model.name);
  const auto given = settings.find(name);
  switch (decl->type) {
    case TrafficParam::Type::time: {
      const std::string range = "a time from " + format_time(decl->min) + " to " + format_time(decl->max);
      if (given == settings.end()) return decl->default_time;
      const Time* t = std::get_if<Time>(&given->second);
      if (!t) throw SimConfigError(decl->name, std::get<std::string>(given->second), range);
      if (*t < decl->min || *t > decl->max) throw SimConfigError(decl->name, format_time(*t), range);
      return *t;
    }
    case TrafficParam::Type::count: {
      const std::string range = "an integer from " + std::to_string(decl->min) + " to " + std::to_string(decl->max);
      if (given == settings.end()) return decl->default_time;
      const Time* n = std::get_if<Time>(&given->second);
      if (!n) throw SimConfigError(decl->name, std::get<std::string>(given->second), range);
      if (*n < decl->min || *n > decl->max) throw SimConfigError(decl->name, std::to_string(*n), range);
      return *n;
    }
    case TrafficParam::Type::file: {
      const std::string* path = given == settings.end() ? nullptr : std::get_if<std::string>(&given->second);
      if (!path || path->empty())
        throw SimConfigError(decl->name, "", "a file to read (traffic " + model.name + " needs one)");
      return *path;
    }
  }
  return {};
}

}  // namespace ufq::sim
