// Errors of the tc language layer and a small value-or-error holder
// (std::expected is C++23; the project is C++20).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace ufq::tc {

struct Error {
  enum class Kind : std::uint8_t {
    syntax,  // tc itself refuses the words (tc exits 1)
    kernel,  // the kernel would refuse the configuration (EINVAL, tc exits 2)
    input,   // a configuration file cannot be read or is not the expected JSON
  };
  Kind kind = Kind::syntax;
  std::string where;     // option keyword, JSON key or file name; empty if none applies
  std::string value;     // the offending word or value; empty when it is missing
  std::string expected;  // what would have been accepted (form and/or valid range)
  std::string message;   // one line, ready for stderr
};

const char* to_string(Error::Kind kind);

// Either a value or an Error.
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}        // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace ufq::tc
