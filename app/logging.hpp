#pragma once
/// The daemon's log: one logger (`swarmkeeper`) on stderr, the default
/// logger of the process. Every line carries its time in UTC with the zone
/// (ISO 8601, milliseconds: `2026-12-01T16:50:00.123Z`):
///
///   text  2026-12-01T16:50:00.123Z info admin API on 127.0.0.1:7070
///   json  {"time":"2026-12-01T16:50:00.123Z","level":"info","msg":"admin API on ..."}
///
/// The level can change at run time (admin API, admin/admin_log.hpp).

#include <cstdint>
#include <memory>
#include <string>

#include <spdlog/formatter.h>

namespace sk {

/// The formats `log.format` names.
enum class log_format { text, json };

/// Sets `out` from "text" or "json" and returns true; false for anything
/// else (`out` unchanged).
bool parse_log_format(const std::string& name, log_format& out);

/// The formatter of `f` (UTC times in both).
std::unique_ptr<spdlog::formatter> make_log_formatter(log_format f);

/// Installs the stderr logger as the default one, at `level` (a name from
/// admin_api::log_level_names()) in format `f`.
void setup_logging(const std::string& level, log_format f);

/// Sets the node's budget of per-swarm info lines (`log.swarm-lines-per-minute`,
/// `log.swarm-lines-burst`; runtime/swarm_actor_log.hpp).
void setup_swarm_log_budget(double lines_per_minute, std::uint32_t burst);

}  // namespace sk
