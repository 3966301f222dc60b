#pragma once
/// Tickets that answer a CAF request: how a request for an announce or a
/// scrape (from another node, through its node actor, or a test's scoped
/// actor) takes the swarm's one entry point, the ticket.
///
///   requester ──request──▶ actor A (handler) ── answering ticket ──▶ swarm
///       ▲                                                              │
///       └──────── response, sent on the swarm's thread ◀───────────────┘
///
/// The ticket takes over the response of the request A is handling (A's
/// handler then returns `caf::delegated<...>`), so the answer goes straight
/// from the swarm to the requester, as a delegation would send it. It is
/// sent without an execution context (CAF schedules the requester itself),
/// which is what makes sending it from the swarm's thread safe.

#include <caf/all.hpp>

#include "tracker/swarm_messages.hpp"

namespace sk {

/// A ticket for `a` that answers the request `self` is handling now:
/// `complete()` answers the `announce_result`, `fail()` (another info_hash)
/// `sec::invalid_argument`, and a ticket dropped unread (its swarm ended)
/// `sec::request_receiver_down`. Call from within a handler of `self`.
announce_ticket_ptr answering_announce_ticket(caf::local_actor* self, swarm_announce a);

/// A scrape ticket that answers the request `self` is handling now with the
/// swarm's counts; dropped unread (its swarm ended), with zeros. Call from
/// within a handler of `self`.
scrape_ticket_ptr answering_scrape_ticket(caf::local_actor* self);

}  // namespace sk
