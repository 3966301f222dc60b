#include "runtime/swarm_timers.hpp"

#include <algorithm>
#include <chrono>

namespace sk {

std::int64_t swarm_timers::step_of(std::int64_t ns) noexcept {
  return std::chrono::floor<step>(std::chrono::nanoseconds{ns}).count();
}

caf::timespan swarm_timers::until_next_step(time_point now) noexcept {
  const auto since = now.time_since_epoch();
  return std::chrono::duration_cast<caf::timespan>(std::chrono::floor<step>(since) + step{1} -
                                                   since);
}

void swarm_timers::link(swarm_timer& t) noexcept {
  // A step `collect` has passed already: the one it looks at next.
  const std::int64_t s = std::max(step_of(std::min(t.sweep_ns_, t.tick_ns_)), next_s_);
  const auto slot = static_cast<std::uint32_t>(static_cast<std::uint64_t>(s) % slot_count);
  t.slot_ = slot;
  t.prev_ = nullptr;
  t.next_ = heads_[slot];
  if (t.next_ != nullptr) t.next_->prev_ = &t;
  heads_[slot] = &t;
  ++armed_;
}

void swarm_timers::unlink(swarm_timer& t) noexcept {
  if (t.slot_ == swarm_timer::none) return;
  if (t.prev_ != nullptr)
    t.prev_->next_ = t.next_;
  else
    heads_[t.slot_] = t.next_;
  if (t.next_ != nullptr) t.next_->prev_ = t.prev_;
  t.prev_ = t.next_ = nullptr;
  t.slot_ = swarm_timer::none;
  --armed_;
}

void swarm_timers::arm(swarm_timer& t, caf::actor_control_block* swarm, swarm_wake kind,
                       time_point at) {
  caf::weak_actor_ptr ref;
  if (t.swarm_.get() != swarm) ref = caf::weak_actor_ptr{swarm};
  caf::weak_actor_ptr old;  // released after unlocking
  std::lock_guard<std::mutex> guard(mtx_);
  if (ref) {
    old = std::move(t.swarm_);
    t.swarm_ = std::move(ref);
  }
  (kind == wake_sweep ? t.sweep_ns_ : t.tick_ns_) = at.time_since_epoch().count();
  unlink(t);
  link(t);
}

void swarm_timers::disarm(swarm_timer& t) {
  caf::weak_actor_ptr old;  // released after unlocking
  std::lock_guard<std::mutex> guard(mtx_);
  unlink(t);
  t.sweep_ns_ = t.tick_ns_ = swarm_timer::not_armed;
  old = std::move(t.swarm_);
}

std::size_t swarm_timers::collect(time_point now, std::vector<due>& out) {
  const std::size_t before = out.size();
  const std::int64_t now_ns = now.time_since_epoch().count();
  const std::int64_t now_s = step_of(now_ns);
  std::lock_guard<std::mutex> guard(mtx_);
  if (next_s_ == INT64_MIN) next_s_ = now_s - static_cast<std::int64_t>(slot_count) + 1;
  if (now_s < next_s_) return 0;
  // Every step from the first not passed to now's (past a whole turn of the
  // wheel, every slot once). Now's own step is looked at again next time:
  // what it holds may fall due later in that step.
  const std::int64_t from = std::max(next_s_, now_s - static_cast<std::int64_t>(slot_count) + 1);
  next_s_ = now_s;
  for (std::int64_t s = from; s <= now_s; ++s) {
    swarm_timer* t = heads_[static_cast<std::uint64_t>(s) % slot_count];
    while (t != nullptr) {
      swarm_timer* next = t->next_;
      if (std::min(t->sweep_ns_, t->tick_ns_) <= now_ns) {
        std::uint8_t what = 0;
        if (t->sweep_ns_ <= now_ns) {
          what |= wake_sweep;
          t->sweep_ns_ = swarm_timer::not_armed;
        }
        if (t->tick_ns_ <= now_ns) {
          what |= wake_tick;
          t->tick_ns_ = swarm_timer::not_armed;
        }
        unlink(*t);
        if (std::min(t->sweep_ns_, t->tick_ns_) != swarm_timer::not_armed) link(*t);
        // The actor may have ended with its disarm still to come (it runs
        // in the state's destructor): then there is nobody to wake.
        if (caf::strong_actor_ptr p = t->swarm_.lock()) out.push_back(due{std::move(p), what});
      }
      t = next;
    }
  }
  return out.size() - before;
}

std::size_t swarm_timers::armed() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return armed_;
}

}  // namespace sk
