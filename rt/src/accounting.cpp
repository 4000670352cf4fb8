#include "ufq/rt/accounting.hpp"

#include <cstring>

namespace ufq::rt {
namespace {

std::size_t slot(int error) {
  return error > 0 && static_cast<std::size_t>(error) < ErrnoCounts::kSlots
             ? static_cast<std::size_t>(error)
             : 0;
}

}  // namespace

void ErrnoCounts::add(int error, std::uint64_t n) { n_[slot(error)] += n; }

std::uint64_t ErrnoCounts::operator[](int error) const { return n_[slot(error)]; }

std::uint64_t ErrnoCounts::total() const {
  std::uint64_t s = 0;
  for (auto v : n_) s += v;
  return s;
}

std::string ErrnoCounts::name(int error) {
  if (error <= 0 || static_cast<std::size_t>(error) >= kSlots) return "other";
  if (const char* n = ::strerrorname_np(error)) return n;
  return "errno " + std::to_string(error);
}

std::string ErrnoCounts::format() const {
  std::string out;
  for_each([&](const std::string& name, std::uint64_t n) {
    if (!out.empty()) out += ", ";
    out += name + " " + std::to_string(n);
  });
  return out;
}

std::string PacketAccounting::format() const {
  auto s = [](std::uint64_t v) { return std::to_string(v); };
  std::string out = "produced " + s(produced) + " = sent " + s(sent) + " + dropped " + s(dropped()) +
                    " (limit " + s(drop_limit) + ", flow_limit " + s(drop_flow_limit) +
                    ", horizon " + s(drop_horizon) + ") + failed " + s(failed.total());
  const std::string errs = failed.format();
  if (!errs.empty()) out += " (" + errs + ")";
  out += " + unsent " + s(unsent()) + " (producer " + s(unsent_producer) + ", ring " +
         s(unsent_ring) + ", fq " + s(unsent_scheduler) + ", egress " + s(unsent_egress) + "): ";
  out += balanced() ? "balanced" : "UNBALANCED by " + std::to_string(static_cast<long long>(
                                                          produced - accounted()));
  return out;
}

}  // namespace ufq::rt
