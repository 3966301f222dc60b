#pragma once
/// The swarms' wake-ups (the sweep and the health tick of every running
/// swarm actor), kept by the node in one wheel instead of CAF's clock.
///
/// A `delayed_send` of CAF 0.17 is a message, a clock event and two map
/// nodes (about 200 B, two per swarm at all times), handled by CAF's clock
/// thread, and it holds a strong reference to its receiver: an actor that
/// ended (a swarm that fell asleep, or went idle) stayed allocated until
/// its last pending timer fired, up to a sweep period later, and was then
/// freed by the clock thread. A `swarm_timer` lives inside the swarm's
/// state, holds a weak reference, and is taken out of the wheel when the
/// swarm ends (`disarm`, from its state's destructor): the actor is freed
/// when it quits, on its own thread.
///
/// The wheel has one slot per step of 10 ms (8,192 slots, modulo: 82 s a
/// turn), each a list of the entries whose first due time falls in that
/// step. `collect` is called at every whole step of the clock by the node's
/// ticker (swarm_directory), so a wake-up comes at most one step late, and
/// returns the swarms due, each with what is due (sweep, tick or both); the
/// ticker sends them their messages outside the wheel's lock. The step is
/// short because what falls due in one step arrives at once: swarms
/// created together fall due together, and the node's hibernations per
/// second are a token bucket holding a hundredth of a second's worth (with
/// steps of 100 ms, a population of 100,000 fell asleep ten times slower
/// than the configured rate). All calls are thread-safe.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/actor_control_block.hpp>

namespace sk {

/// What a swarm asks to be woken for (bits of `swarm_timers::due::what`).
enum swarm_wake : std::uint8_t { wake_sweep = 1, wake_tick = 2 };

/// One swarm's entry in `swarm_timers`: a member of its state, never
/// allocated on its own. Not copyable; must be disarmed before it is
/// destroyed while armed (the swarm's state does so).
class swarm_timer {
 public:
  swarm_timer() = default;
  swarm_timer(const swarm_timer&) = delete;
  swarm_timer& operator=(const swarm_timer&) = delete;

  /// Whether `kind` is armed. Not synchronized with the wheel: for the
  /// entry's owner while no collect can run (tests).
  bool armed(swarm_wake kind) const noexcept {
    return (kind == wake_sweep ? sweep_ns_ : tick_ns_) != not_armed;
  }

 private:
  friend class swarm_timers;
  static constexpr std::int64_t not_armed = INT64_MAX;
  swarm_timer* prev_ = nullptr;
  swarm_timer* next_ = nullptr;
  caf::weak_actor_ptr swarm_;
  /// Due times (the clock's nanoseconds); `not_armed`: none.
  std::int64_t sweep_ns_ = not_armed;
  std::int64_t tick_ns_ = not_armed;
  /// The slot it is linked in; `none` while unlinked.
  std::uint32_t slot_ = none;
  static constexpr std::uint32_t none = UINT32_MAX;
};

class swarm_timers {
 public:
  using time_point = caf::actor_clock::time_point;
  /// The wheel's resolution.
  using step = std::chrono::duration<std::int64_t, std::centi>;
  static constexpr std::size_t slot_count = 8192;

  /// From `now` to the next whole step of the clock (a full step when `now`
  /// is one): when the ticker calls `collect` next.
  static caf::timespan until_next_step(time_point now) noexcept;

  /// A swarm that is due: what to send it (`swarm_wake` bits).
  struct due {
    caf::strong_actor_ptr swarm;
    std::uint8_t what = 0;
  };

  swarm_timers() = default;
  swarm_timers(const swarm_timers&) = delete;
  swarm_timers& operator=(const swarm_timers&) = delete;

  /// Arms `kind` of `t` for `at` (replacing one of that kind already
  /// armed); `swarm` is the actor to wake (kept as a weak reference).
  void arm(swarm_timer& t, caf::actor_control_block* swarm, swarm_wake kind, time_point at);
  /// Takes `t` out of the wheel: nothing of it is due any more.
  void disarm(swarm_timer& t);
  /// Appends every swarm due at `now` to `out`, disarming what is due
  /// (what else it has armed stays). A swarm whose actor is gone is
  /// dropped. Returns how many were appended.
  std::size_t collect(time_point now, std::vector<due>& out);
  /// Timers armed now (a swarm with both armed counts once).
  std::size_t armed() const;

 private:
  /// The step a time (in nanoseconds) falls in.
  static std::int64_t step_of(std::int64_t ns) noexcept;
  /// Links `t` (unlinked, something armed) in the slot of its first due time.
  void link(swarm_timer& t) noexcept;
  void unlink(swarm_timer& t) noexcept;

  mutable std::mutex mtx_;
  std::array<swarm_timer*, slot_count> heads_{};
  /// The first step `collect` has not passed yet (it looks at its own
  /// step again).
  std::int64_t next_s_ = INT64_MIN;
  std::size_t armed_ = 0;
};

}  // namespace sk
