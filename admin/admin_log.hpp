#pragma once
/// The log level at run time: the level names the config and the admin API
/// accept, and the handlers of `GET /api/log/level` and `PUT /api/log/level`
/// (body `{"level": "debug"}`), which change the level of every logger of
/// the process at once, without a restart.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/common.h>

#include "admin/admin_call.hpp"

namespace sk::admin_api {

/// spdlog's levels by the names `log.level` and the API take: trace, debug,
/// info, warn, error, critical, off (`warn`, not spdlog's display name
/// "warning").
const std::vector<std::string>& log_level_names();

/// The level named `name` (exactly one of log_level_names()); nullopt
/// otherwise (spdlog's own from_str turns an unknown name into `off`).
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name);

/// The name of the default logger's level now.
std::string current_log_level();

/// GET /api/log/level: {"level": name}.
void get_log_level(admin_call& c);
/// PUT /api/log/level {"level": name}: sets every logger's level; answers
/// {"level": new, "previous": old}; 400 with the accepted names otherwise.
void put_log_level(admin_call& c);

}  // namespace sk::admin_api
