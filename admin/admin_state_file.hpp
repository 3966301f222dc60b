#pragma once
/// The state file (runtime/state_keeper.hpp) on /metrics and in
/// GET /api/node: the last snapshot written, and what the start loaded or
/// refused.

#include "admin/admin_exposition.hpp"
#include "admin/admin_json.hpp"

namespace sk {
struct state_stats;
}

namespace sk::admin_api {

/// Writes the families
///   swarmkeeper_state_last_write_timestamp_seconds   Unix time of the last snapshot
///   swarmkeeper_state_last_write_duration_seconds    how long it took
///   swarmkeeper_state_last_write_bytes               its size
///   swarmkeeper_state_last_write_swarms / _peers     what it held
///   swarmkeeper_state_writes_total{outcome}          ok / failed, since start
///   swarmkeeper_state_load_duration_seconds          the load at start
///   swarmkeeper_state_loaded{what}                   swarms, peers, bans, expired_peers
///   swarmkeeper_state_load_refused                   1 when the file was refused
/// nothing when `stats` is null (no state.dir).
void write_state_file(exposition& m, const state_stats* stats);

/// {"dir": ..., "load": {"outcome": "loaded", ...}, "last_write": {...}}; null
/// without a state.dir.
json state_file_json(const state_stats* stats, const std::string& dir);

}  // namespace sk::admin_api
