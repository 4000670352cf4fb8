// A callback the simulator's models call on their hot paths (a NIC
// completion, a timer's expiry): either a plain function with a context
// pointer, called directly, or any callable kept in a std::function (tests,
// rare users). The plain form saves the std::function indirection per call
// (docs/simulator.md, "Speed").
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace ufq::sim {

// Either way the call is one indirect call, with no test: a callable is
// reached through a trampoline (its std::function on the heap, so that moving
// the hook keeps the trampoline's context valid) and an empty hook through one
// that does nothing.
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
  Hook(F&& callable) {  // NOLINT: implicit, as std::function
    Callable c(std::forward<F>(callable));
    if (c) adopt(std::make_unique<Callable>(std::move(c)));
  }
  // A copy of a callable hook calls its own copy of the callable; of a plain
  // hook, the same function and context (no allocation).
  Hook(const Hook& other) : fn_(other.fn_), context_(other.context_) {
    if (other.callable_) adopt(std::make_unique<Callable>(*other.callable_));
  }
  // The moved-from hook is empty.
  Hook(Hook&& other) noexcept : fn_(other.fn_), context_(other.context_), callable_(std::move(other.callable_)) {
    other.fn_ = &nothing;
    other.context_ = nullptr;
  }
  Hook& operator=(const Hook& other) {
    if (this != &other) *this = Hook(other);
    return *this;
  }
  Hook& operator=(Hook&& other) noexcept {
    if (this != &other) {
      fn_ = other.fn_;
      context_ = other.context_;
      callable_ = std::move(other.callable_);
      other.fn_ = &nothing;
      other.context_ = nullptr;
    }
    return *this;
  }
  ~Hook() = default;

  // Whether calling does anything.
  explicit operator bool() const { return fn_ != &nothing; }

  void operator()(Args... args) const { fn_(context_, args...); }

 private:
  using Callable = std::function<void(Args...)>;
  static void nothing(void*, Args...) {}
  static void call_callable(void* callable, Args... args) { (*static_cast<const Callable*>(callable))(args...); }
  void adopt(std::unique_ptr<Callable> c) {
    callable_ = std::move(c);
    fn_ = &call_callable;
    context_ = callable_.get();
  }

  Fn fn_ = &nothing;
  void* context_ = nullptr;
  std::unique_ptr<Callable> callable_;
};

}  // namespace ufq::sim
