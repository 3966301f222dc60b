#pragma once
/// A value that exists only once something needs it: one pointer (8 bytes)
/// while absent, the value on the heap after `ensure`. Copies are deep, so a
/// class holding boxes stays copyable by value (the supervisor copies swarm
/// cores).
///
/// For state that few swarms ever have (remediation history, outstanding
/// probes, the jitter stream of a swarm whose interval is never adjusted):
/// millions of swarms pay a pointer instead of an empty container, whose
/// header alone (a std::deque allocates 576 bytes when default-constructed)
/// can be larger than the rest of a small swarm.

#include <memory>
#include <utility>

namespace sk {

template <class T>
class lazy_box {
 public:
  lazy_box() = default;
  lazy_box(const lazy_box& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  lazy_box& operator=(const lazy_box& other) {
    if (this != &other) {
      p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    }
    return *this;
  }
  lazy_box(lazy_box&&) noexcept = default;
  lazy_box& operator=(lazy_box&&) noexcept = default;

  bool has_value() const noexcept { return p_ != nullptr; }
  /// Null while absent.
  T* get() noexcept { return p_.get(); }
  const T* get() const noexcept { return p_.get(); }
  /// The value, default-constructed first if absent.
  T& ensure() {
    if (!p_) {
      p_ = std::make_unique<T>();
    }
    return *p_;
  }
  /// Back to absent (frees the value).
  void reset() noexcept { p_.reset(); }
  /// `ensure()`: lets code that expects a `T&` bind to the box.
  operator T&() { return ensure(); }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace sk
