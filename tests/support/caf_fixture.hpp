#pragma once
/// A GoogleTest fixture around CAF's deterministic `testing` scheduler:
/// nothing runs until the test says so (`run()`), and time moves only when
/// the test moves it (`advance()`), so actor tests need no sleeps.

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "runtime/messages.hpp"

namespace sk::test {

class caf_fixture : public ::testing::Test {
 protected:
  caf_fixture() {
    cfg_.set("scheduler.policy", caf::atom("testing"));
    cfg_.set("logger.file-verbosity", caf::atom("quiet"));
    register_message_types(cfg_);
    sys = std::make_unique<caf::actor_system>(cfg_);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    // Start well away from a zero time point.
    sched->clock().current_time += std::chrono::hours(1);
    self = std::make_unique<caf::scoped_actor>(*sys, true);
  }

  ~caf_fixture() override {
    // Stop whatever the test left running, so ~actor_system has nothing to
    // wait for; as a safety net it does not wait at all.
    for (auto& a : cleanup_) {
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
    sched->run();
    self.reset();
    sys->await_actors_before_shutdown(false);
  }

  /// Runs every job that is ready now (does not move time).
  std::size_t run() { return sched->run(); }

  /// Moves the clock forward by `d` in steps of `step`, delivering delayed
  /// messages that fall due and running the actors after each step.
  void advance(std::chrono::seconds d, std::chrono::seconds step = std::chrono::seconds(1)) {
    run();
    for (auto left = d; left > std::chrono::seconds(0); left -= step) {
      sched->advance_time(std::min(step, left));
      run();
    }
  }

  /// Actors to stop when the test ends.
  caf::actor track(caf::actor a) {
    cleanup_.push_back(a);
    return a;
  }

  /// Sends a request from the test, runs the system and returns the reply,
  /// or the error the receiver answered with. A missing reply is a failure.
  template <class T, class... Ts>
  caf::expected<T> ask(const caf::actor& dest, Ts&&... xs) {
    auto handle = (*self)->request(dest, caf::infinite, std::forward<Ts>(xs)...);
    run();
    if ((*self)->mailbox().empty()) {
      ADD_FAILURE() << "no reply";
      return caf::make_error(caf::sec::request_timeout);
    }
    std::optional<T> result;
    caf::error failure;
    handle.receive([&](T& x) { result = std::move(x); },
                   [&](caf::error& err) { failure = std::move(err); });
    if (result) {
      return std::move(*result);
    }
    return failure;
  }

  /// Watches `a`; `exited(a)` then tells whether it has ended.
  void watch(const caf::actor& a) { (*self)->monitor(a); }

  /// Whether a watched actor has ended (its down message arrived), and why.
  bool exited(const caf::actor& a, caf::error* reason = nullptr) {
    while (!(*self)->mailbox().empty()) {
      (*self)->receive([&](caf::down_msg& down) { downs_.emplace(down.source, down.reason); });
    }
    auto it = downs_.find(a.address());
    if (it == downs_.end()) {
      return false;
    }
    if (reason) {
      *reason = it->second;
    }
    return true;
  }

  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::unique_ptr<caf::scoped_actor> self;

 private:
  caf::actor_system_config cfg_;
  std::vector<caf::actor> cleanup_;
  std::map<caf::actor_addr, caf::error> downs_;
};

}  // namespace sk::test
