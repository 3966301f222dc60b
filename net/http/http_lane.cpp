// The lanes of the HTTP transport: the session registry, the sweep and
// flush of each I/O thread's gateway lane, and an answer's way back from a
// swarm thread to its session.

#include "net/http/http_lane.hpp"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "net/http/http_session.hpp"
#include "tracker/recycler.hpp"

namespace sk {

namespace asio = boost::asio;

// -- registry -----------------------------------------------------------------

std::pair<http_context::registry::iterator, bool> http_context::add(
    const std::shared_ptr<http_session>& s) {
  std::lock_guard<std::mutex> lock{mutex};
  sessions.push_front(registry_entry{s, &s->waiting_since()});
  session_count.fetch_add(1, std::memory_order_relaxed);
  return {sessions.begin(), draining};
}

// -- shedding -------------------------------------------------------------------

void http_context::refill_shed_queue() {
  // One walk over the registry finds a batch of victims, so a flood at the
  // total costs a walk per batch, not per connection. A victim that became
  // busy meanwhile is skipped when its turn comes (and again on its thread).
  std::vector<std::pair<std::int64_t, std::weak_ptr<http_session>>> waiting;
  {
    std::lock_guard<std::mutex> lock{mutex};
    if (draining) return;
    for (const auto& e : sessions) {
      const std::int64_t since = e.waiting_since->load(std::memory_order_relaxed);
      if (since != http_session::busy_mark) waiting.emplace_back(since, e.session);
    }
  }
  const std::size_t batch =
      std::min(waiting.size(), std::max<std::size_t>(32, cfg.max_connections / 64));
  // The `batch` that waited longest, the longest last (taken from the back).
  std::partial_sort(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(batch),
                    waiting.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  shed_queue_.clear();
  for (std::size_t i = batch; i-- > 0;) shed_queue_.push_back(std::move(waiting[i].second));
  // The weak references of the rest die here, outside the registry's lock.
}

bool http_context::shed_one() {
  for (int pass = 0; pass < 2; ++pass) {
    while (!shed_queue_.empty()) {
      std::shared_ptr<http_session> s = shed_queue_.back().lock();
      shed_queue_.pop_back();
      if (s && s->waiting_since().load(std::memory_order_relaxed) != http_session::busy_mark) {
        s->shed();
        return true;
      }
    }
    if (pass == 0) refill_shed_queue();
  }
  return false;
}

void http_context::settle(std::chrono::steady_clock::time_point now) {
  if (per_address_reached.settle(now, limit_quiet))
    spdlog::info("http: connections per address back under http.max-connections-per-address "
                 "({}): none refused for {} s",
                 cfg.max_connections_per_address, limit_quiet.count());
  if (total_reached.settle(now, limit_quiet))
    spdlog::info("http: connections back under http.max-connections ({}): none shed or refused "
                 "for {} s",
                 cfg.max_connections, limit_quiet.count());
}

void http_context::remove(registry::iterator pos) {
  {
    std::lock_guard<std::mutex> lock{mutex};
    sessions.erase(pos);
    session_count.fetch_sub(1, std::memory_order_relaxed);
  }
  all_closed.notify_all();
}

// -- lanes --------------------------------------------------------------------

void http_lane::start_sweeping() {
  if (!timer_) timer_.emplace(ioc_);
  timer_->expires_after(gw_.sweep_period());
  timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    const auto now = std::chrono::steady_clock::now();
    gw_.sweep(lane_, now);
    if (on_tick) on_tick(now);
    start_sweeping();
  });
}

void http_lane::schedule_flush() {
  if (flush_posted_) return;
  flush_posted_ = true;
  // Runs after the handlers already queued on this thread: every request
  // parsed in this round of the event loop reaches the swarms in one message.
  asio::post(ioc_, [this] {
    flush_posted_ = false;
    gw_.flush(lane_);
  });
}

void http_lane::post_reply(reply&& r) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock{mutex_};
    was_empty = replies_.empty();
    replies_.push_back(std::move(r));
  }
  // A drain is already on its way when the queue was not empty.
  if (was_empty) asio::post(ioc_, [this] { deliver_replies(); });
}

void http_lane::deliver_replies() {
  {
    std::lock_guard<std::mutex> lock{mutex_};
    std::swap(replies_, draining_);
  }
  for (auto& r : draining_) r.session->apply(r);
  // The requests' references to their sessions die here, on the I/O thread.
  draining_.clear();
  // Forget what was answered (a clock-free sweep: nothing is overdue yet).
  gw_.sweep(lane_, std::chrono::steady_clock::time_point{});
}

void http_lane::discard() {
  gw_.abandon(lane_);
  {
    std::lock_guard<std::mutex> lock{mutex_};
    replies_.clear();
  }
  draining_.clear();
  timer_.reset();
}

namespace {

/// An announce's or scrape's way back to its session: the answer is copied
/// into a lane reply and posted to the session's I/O thread.
template <class Base>
class http_reply_base : public Base {
 public:
  http_reply_base(std::shared_ptr<http_session> session, std::uint64_t tag, http_lane& lane)
      : session_(std::move(session)), tag_(tag), lane_(lane) {}

  void on_refusal(gateway_refusal why, std::int64_t retry_in_minutes) override {
    http_lane::reply r = make(http_lane::reply::kind::refusal);
    r.refusal = why;
    r.retry_in_minutes = retry_in_minutes;
    lane_.post_reply(std::move(r));
  }

 protected:
  http_lane::reply make(http_lane::reply::kind what) {
    http_lane::reply r;
    // The request's reference goes with the reply, so the last reference to
    // a session is dropped on its own I/O thread (see deliver_replies).
    r.session = std::move(session_);
    r.tag = tag_;
    r.what = what;
    return r;
  }
  http_lane& lane() noexcept { return lane_; }

 private:
  std::shared_ptr<http_session> session_;
  std::uint64_t tag_;
  http_lane& lane_;
};

class http_announce_reply final : public http_reply_base<announce_reply> {
 public:
  using http_reply_base::http_reply_base;
  void on_result(const announce_result& result) override {
    http_lane::reply r = make(http_lane::reply::kind::announce);
    r.announce = result;
    lane().post_reply(std::move(r));
  }
};

class http_scrape_reply final : public http_reply_base<scrape_reply> {
 public:
  using http_reply_base::http_reply_base;
  void on_result(std::vector<scrape_answer>&& answers) override {
    http_lane::reply r = make(http_lane::reply::kind::scrape);
    r.scrape = std::move(answers);
    lane().post_reply(std::move(r));
  }
};

}  // namespace

std::shared_ptr<announce_reply> make_http_announce_reply(std::shared_ptr<http_session> session,
                                                         std::uint64_t tag, http_lane& lane) {
  return make_recycled<http_announce_reply>(std::move(session), tag, lane);
}

std::shared_ptr<scrape_reply> make_http_scrape_reply(std::shared_ptr<http_session> session,
                                                     std::uint64_t tag, http_lane& lane) {
  return make_recycled<http_scrape_reply>(std::move(session), tag, lane);
}

}  // namespace sk
