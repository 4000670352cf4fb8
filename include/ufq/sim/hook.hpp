// A callback the simulator's models call on their hot paths (a NIC
// completion, a timer's expiry): either a plain function with a context
// pointer, called directly, or any callable kept in a std::function (tests,
// rare users). The plain form saves the std::function indirection per call
// (docs/simulator.md, "Speed").
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

namespace ufq::sim {

template <class... Args>
class Hook {
 public:
  using Fn = void (*)(void* context, Args...);

  Hook() = default;
  // Calls fn(context, args...). Precondition: fn is not null.
  Hook(Fn fn, void* context) : fn_(fn), context_(context) {}
  // Calls `callable` (empty: calling the hook does nothing).
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Hook> &&
             std::is_constructible_v<std::function<void(Args...)>, F &&>)
  Hook(F&& callable) : callable_(std::forward<F>(callable)) {}  // NOLINT: implicit, as std::function

  // Whether calling does anything.
  explicit operator bool() const { return fn_ || callable_; }

  void operator()(Args... args) const {
    if (fn_) [[likely]]
      fn_(context_, args...);
    else if (callable_)
      callable_(args...);
  }

 private:
  Fn fn_ = nullptr;
  void* context_ = nullptr;
  std::function<void(Args...)> callable_;
};

}  // namespace ufq::sim
