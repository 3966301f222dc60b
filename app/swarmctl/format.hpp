#pragma once
/// swarmctl's human-readable output, all pure (unit-tested on JSON values):
/// one renderer per API answer, laid out with table.hpp in a `style`
/// (terminal width, human or --raw units). Renderers read the answer
/// defensively: a missing or differently typed field prints as "-" instead
/// of throwing, so a newer or older daemon never crashes the client (use
/// --json to see everything).

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/swarmctl/table.hpp"

namespace sk::swarmctl {

// -- renderers (one per API answer) -----------------------------------------------

/// GET /api/node. `with_config` adds the effective configuration.
std::string render_node(const nlohmann::json& j, bool with_config, const style& st = {});
/// GET /api/swarms.
std::string render_swarms(const nlohmann::json& j, const style& st = {});
/// GET /api/swarms/<hash>.
std::string render_swarm(const nlohmann::json& j, const style& st = {});
/// GET /api/remediations.
std::string render_remediations(const nlohmann::json& j, const style& st = {});
/// GET /api/events.
std::string render_events(const nlohmann::json& j, const style& st = {});
/// GET /api/bans.
std::string render_bans(const nlohmann::json& j, const style& st = {});
/// GET /api/access.
std::string render_access(const nlohmann::json& j, const style& st = {});
/// GET /api/cluster: the members table, then the migrations table.
std::string render_members(const nlohmann::json& j, const style& st = {});

/// Every info_hash an answer names (string values of the keys "hash" and
/// "swarm" that are 40 hex digits), lower-cased; what the shell completes.
void collect_hashes(const nlohmann::json& j, std::set<std::string>& out);

}  // namespace sk::swarmctl
