#include <spdlog/spdlog.h>

#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"

namespace sk::admin_api {

void get_bans(admin_call& c) {
  json list = json::array();
  if (const auto& bans = c.sh->dir->bans())
    for (const auto& r : bans->snapshot()->rules()) list.push_back(ban_json(r));
  c.job->reply_json(200, {{"bans", std::move(list)}});
}

void post_ban(admin_call& c) {
  const job_ptr& job = c.job;
  const auto& bans = c.sh->dir->bans();
  if (!bans) return job->reply_error(503, "this node has no ban list");
  json body = json::parse(job->body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return job->reply_error(
        400, "body must be a JSON object such as {\"prefix\":\"-XX0001-\",\"reason\":\"...\"}");
  auto p = body.find("prefix");
  auto r = body.find("reason");
  if (p == body.end() || !p->is_string())
    return job->reply_error(400, "body needs a string field \"prefix\"");
  if (r == body.end() || !r->is_string())
    return job->reply_error(400, "body needs a string field \"reason\"");
  std::string error;
  auto prefix = parse_ban_prefix(p->get<std::string>(), &error);
  if (!prefix) return job->reply_error(400, error);
  std::string reason = r->get<std::string>();
  if (reason.empty()) return job->reply_error(400, "reason must not be empty");
  if (reason.size() > client_ban_list::max_reason_length)
    return job->reply_error(
        400, "reason longer than " + std::to_string(client_ban_list::max_reason_length) + " bytes");
  const ban_rule shown{*prefix, reason};
  switch (bans->add(*prefix, std::move(reason))) {
    case live_ban_list::add_result::added: {
      const std::string text = escape_ban_prefix(shown.prefix);
      spdlog::info("admin: peer_id prefix \"{}\": not banned -> banned ({})", text, shown.reason);
      record_event(*c.sh, no_swarm, "operator-ban",
                   "prefix \"" + text + "\": not banned -> banned (" + shown.reason + ")");
      return job->reply_json(201, ban_json(shown));
    }
    case live_ban_list::add_result::exists:
      return job->reply_error(
          409, "prefix \"" + escape_ban_prefix(shown.prefix) + "\" is already banned");
    case live_ban_list::add_result::invalid:
      break;
  }
  job->reply_error(400, "reason must not contain control characters");
}

void delete_ban(admin_call& c) {
  const job_ptr& job = c.job;
  const auto& bans = c.sh->dir->bans();
  if (!bans) return job->reply_error(503, "this node has no ban list");
  // The path segment is percent-encoded once for the URL, and its text is
  // the prefix in the ban-spec notation ("exbc%00" arrives as "exbc%2500").
  const std::string_view* segment = c.params.find("prefix");
  auto text = url_decode(segment != nullptr ? *segment : std::string_view{}, false);
  if (!text) return job->reply_error(400, "bad percent-encoding in the prefix");
  std::string error;
  auto prefix = parse_ban_prefix(*text, &error);
  if (!prefix) return job->reply_error(400, error);
  const std::string shown = escape_ban_prefix(*prefix);
  if (!bans->remove(*prefix))
    return job->reply_error(404, "prefix \"" + shown + "\" is not banned");
  spdlog::info("admin: peer_id prefix \"{}\": banned -> not banned", shown);
  record_event(*c.sh, no_swarm, "operator-unban", "prefix \"" + shown + "\": banned -> not banned");
  job->reply_json(200, {{"prefix", shown}, {"removed", true}});
}

}  // namespace sk::admin_api
