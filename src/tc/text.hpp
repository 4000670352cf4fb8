// Small string helpers private to ufq_tc.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace ufq::tc {

// ASCII case-insensitive equality (tc compares unit suffixes with strcasecmp).
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto ca = static_cast<unsigned char>(a[i]);
    const auto cb = static_cast<unsigned char>(b[i]);
    if (std::tolower(ca) != std::tolower(cb)) return false;
  }
  return true;
}

// `"word"` as tc quotes words in its messages.
inline std::string quoted(std::string_view word) {
  std::string out;
  out.reserve(word.size() + 2);
  out += '"';
  out += word;
  out += '"';
  return out;
}

}  // namespace ufq::tc
