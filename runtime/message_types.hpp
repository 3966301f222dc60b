#pragma once
/// The CAF side of the plain message types of tracker/swarm_messages.hpp:
/// the `inspect()` overloads that let them cross actors and nodes, their
/// registration in one place (`register_message_types`), and the few atoms
/// several runtime interfaces share.

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "tracker/swarm_messages.hpp"

namespace sk {

/// CAF 0.17 packs a float or double into IEEE 754 bits by halving it until
/// it drops below 2, which never ends for an infinity (caf/detail/
/// ieee_754.hpp). Every message field of those types is made finite before
/// it is written: an infinity becomes the largest finite value of its sign,
/// a NaN becomes `nan_as`.
template <class T>
void make_finite(T& v, T nan_as) noexcept {
  if (v != v) {
    v = nan_as;
  } else if (v > std::numeric_limits<T>::max()) {
    v = std::numeric_limits<T>::max();
  } else if (v < std::numeric_limits<T>::lowest()) {
    v = std::numeric_limits<T>::lowest();
  }
}

/// Every float or double field of a message type, made finite: one list per
/// type, used by its `inspect` overload before a write and by readers of
/// bytes written elsewhere (runtime/state_file.cpp).
inline void make_finite(health_report& x) noexcept {
  make_finite(x.completion_rate, 0.0);
  make_finite(x.announce_rate, 0.0);
  make_finite(x.progress_p25, -1.0f);
  make_finite(x.progress_median, -1.0f);
  make_finite(x.progress_p75, -1.0f);
}
inline void make_finite(swarm_knobs& x) noexcept {
  make_finite(x.interval_scale, 1.0);
  make_finite(x.leecher_interval_scale, 1.0);
}
inline void make_finite(health_signals& x) noexcept { make_finite(x.completion_rate, 0.0); }
inline void make_finite(peer_view& x) noexcept { make_finite(x.progress, -1.0f); }
inline void make_finite(remediation_record& x) noexcept {
  make_finite(x.before);
  make_finite(x.after);
}

// Atoms (<= 10 characters, CAF 0.17) that more than one runtime actor's
// interface uses; every other atom is declared with the interface it belongs
// to (runtime/swarm_interface.hpp, supervisor_interface.hpp,
// remediation_interface.hpp, probe_interface.hpp).

/// Health: a swarm's report (swarm, supervisor, remediation).
using health_atom = caf::atom_constant<caf::atom("health")>;
/// Allocation policy: of a swarm, pinned by the supervisor, rebased in a
/// remediation.
using policy_atom = caf::atom_constant<caf::atom("policy")>;
/// Stops a remediation (supervisor call, remediation actor).
using stop_atom = caf::atom_constant<caf::atom("stop")>;

/// Registers every message type of this header, and swarm snapshots
/// (runtime/swarm_snapshot.hpp), with the actor system config.
void register_message_types(caf::actor_system_config& cfg);

// inspect() overloads for CAF serialization.
template <class Inspector, class Tag>
typename Inspector::result_type inspect(Inspector& f, id20<Tag>& x) {
  return f(caf::meta::type_name("id20"), x.bytes);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ip_address& x) {
  return f(caf::meta::type_name("ip_address"), x.v6, x.bytes);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, endpoint& x) {
  return f(caf::meta::type_name("endpoint"), x.ip, x.port);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, peer_entry& x) {
  return f(caf::meta::type_name("peer_entry"), x.id, x.ep);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_stats& x) {
  return f(caf::meta::type_name("swarm_stats"), x.complete, x.incomplete, x.downloaded, x.partial);
}
/// CAF 0.17 knows no std::optional: a presence flag plus the value, written
/// back by a load callback when deserializing. Found by ADL through the
/// template argument (namespace sk).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, std::optional<ip_address>& x) {
  bool present = x.has_value();
  ip_address value = present ? *x : ip_address{};
  auto load = caf::meta::load_callback([&]() -> caf::error {
    if (present) {
      x = value;
    } else {
      x.reset();
    }
    return caf::none;
  });
  return f(caf::meta::type_name("optional<ip_address>"), present, value, load);
}
// announce_event (an enum class) needs no overload: CAF 0.17 serializes enums
// through their underlying type.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, announce_request& x) {
  return f(caf::meta::type_name("announce_request"), x.hash, x.id, x.port, x.uploaded, x.downloaded,
           x.left, x.numwant, x.event, x.compact, x.no_peer_id, x.key, x.tracker_id, x.claimed_ip);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_announce& x) {
  return f(caf::meta::type_name("swarm_announce"), x.request, x.peer, x.own_family_only);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, announce_result& x) {
  return f(caf::meta::type_name("announce_result"), x.stats, x.interval, x.min_interval, x.peers4,
           x.peers6, x.peers, x.warning_message, x.failure_reason, x.retry_in_minutes,
           x.refused_at_cap);
}

// policy_kind and swarm_health are enums: serialized through their
// underlying type, like announce_event.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, health_report& x) {
  make_finite(x);
  return f(caf::meta::type_name("health_report"), x.state, x.reasons, x.seeders, x.leechers,
           x.partial_seeds, x.stalled, x.quarantined, x.completion_rate, x.announce_rate,
           x.progress_p25, x.progress_median, x.progress_p75, x.at);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_knobs& x) {
  make_finite(x);
  return f(caf::meta::type_name("swarm_knobs"), x.policy, x.interval_scale,
           x.leecher_interval_scale, x.seeder_warning, x.quarantine_strict);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, health_signals& x) {
  make_finite(x);
  return f(caf::meta::type_name("health_signals"), x.state, x.reasons, x.seeders, x.leechers,
           x.stalled, x.completion_rate);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, remediation_record& x) {
  return f(caf::meta::type_name("remediation_record"), x.at, x.action, x.strategy, x.reason,
           x.detail, x.before, x.after);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, supervisor_event& x) {
  return f(caf::meta::type_name("supervisor_event"), x.at, x.hash, x.kind, x.detail);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, peer_view& x) {
  make_finite(x);
  return f(caf::meta::type_name("peer_view"), x.id, x.ep, x.seeder, x.left, x.progress, x.flags,
           x.announces);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_status& x) {
  return f(caf::meta::type_name("swarm_status"), x.hash, x.stats, x.knobs, x.evaluated, x.health,
           x.history, x.announces, x.banned, x.refused, x.warned, x.seeder_appeals, x.repeats,
           x.early, x.peer_count, x.peers, x.actor_id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, supervisor_counters& x) {
  return f(caf::meta::type_name("supervisor_counters"), x.restarts, x.restarts_fresh, x.give_ups,
           x.remediations_started, x.remediations_operator, x.remediations_ended,
           x.remediations_stopped);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, policy_change& x) {
  return f(caf::meta::type_name("policy_change"), x.previous, x.policy, x.was_pinned, x.pinned);
}

// probe_outcome is an enum: serialized through its underlying type.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, probe_request& x) {
  return f(caf::meta::type_name("probe_request"), x.hash, x.id, x.target);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, probe_result& x) {
  return f(caf::meta::type_name("probe_result"), x.hash, x.id, x.target, x.outcome);
}

}  // namespace sk

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::announce_ticket_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::scrape_ticket_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::swarm_core_ptr)
