#pragma once
/// Announces and scrapes the way the network layer sends them: as tickets
/// (a swarm's one announce and one scrape entry point). `announce_by_ticket`
/// and `scrape_by_ticket` for tests on CAF's deterministic scheduler (the
/// test runs it); `announce_and_wait` for tests on a real scheduler.

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <utility>

#include <caf/all.hpp>

#include "runtime/swarm_interface.hpp"

namespace sk::test {

/// How a ticket ended: settled with a result, failed, or dropped unread
/// (its swarm was gone).
template <class T>
struct ticket_outcome {
  std::optional<T> result;
  bool failed = false;
  bool dropped = false;
};

class recording_announce_ticket final : public announce_ticket {
 public:
  recording_announce_ticket(swarm_announce a, std::shared_ptr<ticket_outcome<announce_result>> out)
      : announce_ticket(std::move(a)), out_(std::move(out)) {}
  ~recording_announce_ticket() override {
    if (!out_->result && !out_->failed) out_->dropped = true;
  }
  void complete(const announce_result& r) override { out_->result = r; }
  void fail() override { out_->failed = true; }

 private:
  std::shared_ptr<ticket_outcome<announce_result>> out_;
};

class recording_scrape_ticket final : public scrape_ticket {
 public:
  explicit recording_scrape_ticket(std::shared_ptr<ticket_outcome<swarm_stats>> out)
      : out_(std::move(out)) {}
  ~recording_scrape_ticket() override {
    if (!out_->result) out_->dropped = true;
  }
  void complete(const swarm_stats& s) override { out_->result = s; }

 private:
  std::shared_ptr<ticket_outcome<swarm_stats>> out_;
};

/// Sends `a` to `swarm` as a ticket and calls `run` (runs the scheduler):
/// the result, or `sec::invalid_argument` (the swarm failed the ticket:
/// another info_hash), `sec::request_receiver_down` (dropped unread), or
/// `sec::request_timeout` (not settled yet).
template <class Handle, class Run>
caf::expected<announce_result> announce_by_ticket(const Handle& swarm, swarm_announce a,
                                                  Run&& run) {
  auto out = std::make_shared<ticket_outcome<announce_result>>();
  caf::anon_send(
      swarm, announce_atom::value,
      announce_ticket_ptr(std::make_shared<recording_announce_ticket>(std::move(a), out)));
  run();
  if (out->result) return std::move(*out->result);
  if (out->failed) return caf::make_error(caf::sec::invalid_argument);
  if (out->dropped) return caf::make_error(caf::sec::request_receiver_down);
  return caf::make_error(caf::sec::request_timeout);
}

/// Scrapes `swarm` with a ticket and calls `run`: the counts, or
/// `sec::request_receiver_down` (dropped unread) or `sec::request_timeout`.
template <class Handle, class Run>
caf::expected<swarm_stats> scrape_by_ticket(const Handle& swarm, Run&& run) {
  auto out = std::make_shared<ticket_outcome<swarm_stats>>();
  caf::anon_send(swarm, scrape_atom::value,
                 scrape_ticket_ptr(std::make_shared<recording_scrape_ticket>(out)));
  run();
  if (out->result) return std::move(*out->result);
  if (out->dropped) return caf::make_error(caf::sec::request_receiver_down);
  return caf::make_error(caf::sec::request_timeout);
}

/// A ticket that hands its outcome to a waiting thread: the result, or
/// `sec::invalid_argument` (failed), or `sec::request_receiver_down`
/// (dropped unread).
class waitable_announce_ticket final : public announce_ticket {
 public:
  explicit waitable_announce_ticket(swarm_announce a) : announce_ticket(std::move(a)) {}
  ~waitable_announce_ticket() override { settle(caf::make_error(caf::sec::request_receiver_down)); }
  void complete(const announce_result& r) override { settle(r); }
  void fail() override { settle(caf::make_error(caf::sec::invalid_argument)); }
  std::future<caf::expected<announce_result>> outcome() { return promise_.get_future(); }

 private:
  void settle(caf::expected<announce_result> x) {
    if (settled_) return;
    settled_ = true;
    promise_.set_value(std::move(x));
  }
  bool settled_ = false;
  std::promise<caf::expected<announce_result>> promise_;
};

/// Sends `a` to `swarm` as a ticket and waits up to `limit` for the swarm
/// (on a real scheduler) to settle it: the result, or the error of
/// `waitable_announce_ticket`, or `sec::request_timeout`.
template <class Handle>
caf::expected<announce_result> announce_and_wait(
    const Handle& swarm, swarm_announce a,
    std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto ticket = std::make_shared<waitable_announce_ticket>(std::move(a));
  auto outcome = ticket->outcome();
  caf::anon_send(swarm, announce_atom::value, announce_ticket_ptr(std::move(ticket)));
  if (outcome.wait_for(limit) != std::future_status::ready)
    return caf::make_error(caf::sec::request_timeout);
  return outcome.get();
}

/// A typed handle as the fixture's `ask`, `track` and `watch` take it.
template <class Handle>
caf::actor untyped(const Handle& h) {
  return caf::actor_cast<caf::actor>(h);
}

}  // namespace sk::test
