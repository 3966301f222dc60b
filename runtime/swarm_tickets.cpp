#include "runtime/swarm_tickets.hpp"

#include <utility>

#include "runtime/message_types.hpp"

namespace sk {

namespace {

/// The answer to the request an actor was handling when it made this: what
/// a `caf::response_promise` delivers, but sent without an execution
/// context (CAF then schedules the requester itself), so any thread may
/// deliver it. (CAF 0.17's own promise needs the actor that made it to be
/// the one running; here the swarm delivers it on its own thread.) The
/// answer carries no sender, as an anonymous message.
class detached_response {
 public:
  explicit detached_response(caf::local_actor* self) {
    caf::response_promise rp = self->make_response_promise();
    source_ = rp.source();
    stages_ = rp.stages();
    id_ = rp.id();
  }

  bool pending() const { return source_ != nullptr || !stages_.empty(); }

  void deliver(caf::message msg) {
    if (!stages_.empty()) {
      auto next = std::move(stages_.back());
      stages_.pop_back();
      next->enqueue(
          caf::make_mailbox_element(std::move(source_), id_, std::move(stages_), std::move(msg)),
          nullptr);
      source_ = nullptr;
      stages_.clear();
      return;
    }
    if (source_) {
      source_->enqueue(nullptr, id_.response_id(), std::move(msg), nullptr);
      source_ = nullptr;
    }
  }

 private:
  caf::strong_actor_ptr source_;
  caf::response_promise::forwarding_stack stages_;
  caf::message_id id_;
};

class answering_announce final : public announce_ticket {
 public:
  answering_announce(swarm_announce a, detached_response rp)
      : announce_ticket(std::move(a)), rp_(std::move(rp)) {}
  ~answering_announce() override {
    if (rp_.pending())
      rp_.deliver(caf::make_message(caf::make_error(caf::sec::request_receiver_down)));
  }
  void complete(const announce_result& r) override {
    if (rp_.pending()) rp_.deliver(caf::make_message(r));
  }
  void fail() override {
    if (rp_.pending()) rp_.deliver(caf::make_message(caf::make_error(caf::sec::invalid_argument)));
  }

 private:
  detached_response rp_;
};

class answering_scrape final : public scrape_ticket {
 public:
  explicit answering_scrape(detached_response rp) : rp_(std::move(rp)) {}
  ~answering_scrape() override {
    if (rp_.pending()) rp_.deliver(caf::make_message(swarm_stats{}));
  }
  void complete(const swarm_stats& s) override {
    if (rp_.pending()) rp_.deliver(caf::make_message(s));
  }

 private:
  detached_response rp_;
};

}  // namespace

announce_ticket_ptr answering_announce_ticket(caf::local_actor* self, swarm_announce a) {
  return std::make_shared<answering_announce>(std::move(a), detached_response{self});
}

scrape_ticket_ptr answering_scrape_ticket(caf::local_actor* self) {
  return std::make_shared<answering_scrape>(detached_response{self});
}

}  // namespace sk
