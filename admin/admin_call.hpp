#pragma once
/// What an admin endpoint's handler is given (`admin_call`), and the helpers
/// several handlers share: query strings, the fan-out of status requests to
/// many swarms and the errors of a failed swarm request. Where a swarm's
/// operator calls go is `swarm_directory::locate` (`swarm` and
/// `supervision`).
///
/// Handlers run on the admin actor (admin/admin_routes.hpp). They never
/// block: they ask actors with `request(...).then(...)` and answer through
/// the job, once, from whichever handler finishes last.

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "admin/admin_job.hpp"
#include "admin/admin_router.hpp"
#include "admin/admin_state.hpp"
#include "runtime/directory.hpp"
#include "runtime/messages.hpp"

namespace sk::admin_api {

using actor_ptr = admin_actor_type::pointer;
using state_ptr = std::shared_ptr<admin_state>;

/// One routed request.
struct admin_call {
  /// The admin actor; handlers send and ask through it.
  actor_ptr self = nullptr;
  state_ptr sh;
  job_ptr job;
  /// The raw query string (after '?'); empty for endpoints that take none
  /// (the router refused any with 400).
  std::string_view query;
  /// The route's `{hash}` segment, already parsed (400 when it was not 40
  /// hex digits).
  info_hash hash;
  /// Every `{name}` segment, raw; views into `job->target`.
  path_params params;
};

/// An endpoint's handler.
using handler_fn = void (*)(admin_call&);

/// Status answers of many swarms, with the id of the actor that answered.
using status_list = std::vector<std::pair<caf::actor_id, swarm_status>>;

/// Swarms to ask, each with its info_hash: local swarms or remote handles.
using swarm_list = std::vector<std::pair<info_hash, swarm_interface>>;

/// Asks every swarm in `swarms` for its status (plain, no peers) and calls
/// `done(results)` once, when every swarm answered or timed out. Swarms that
/// fail (ended meanwhile, timeout) are left out.
void fan_out_status(actor_ptr self, const state_ptr& sh, swarm_list swarms,
                    std::function<void(status_list&&)> done);

/// `fan_out_status` for the local swarms (`swarm_directory::local_swarms`).
void fan_out_status(actor_ptr self, const state_ptr& sh,
                    std::vector<std::pair<info_hash, local_swarm_actor>> swarms,
                    std::function<void(status_list&&)> done);

/// `fan_out_status` for dynamically typed handles that accept the swarm
/// interface (`swarm_directory::snapshot`).
void fan_out_status(actor_ptr self, const state_ptr& sh,
                    std::vector<std::pair<info_hash, caf::actor>> swarms,
                    std::function<void(status_list&&)> done);

/// Percent-decodes a query component (`plus_is_space`) or a path segment;
/// nullopt on a bad escape.
std::optional<std::string> url_decode(std::string_view in, bool plus_is_space = true);

using query_map = std::map<std::string, std::string>;

/// Parses `a=1&b=2` (percent-decoded); only `allowed` keys. nullopt and a
/// message for the client on error.
std::optional<query_map> parse_query(std::string_view q, std::initializer_list<const char*> allowed,
                                     std::string& error);

/// A decimal integer in [0, max]; nullopt otherwise (sign, blanks, more
/// than 9 digits).
std::optional<std::size_t> parse_count(const std::string& text, std::size_t max);

/// The answer to a failed request to a swarm (or through its forwarder: the
/// owner having no such swarm is a 404 there too).
void reply_swarm_error(const job_ptr& job, const info_hash& hash, const caf::error& err);

/// Records an operator's change in the supervisor's event log (`/api/events`).
/// Sent before the answer, so a client that reads the events next sees it.
void record_event(const admin_state& sh, const info_hash& hash, std::string kind,
                  std::string detail);

}  // namespace sk::admin_api
