#include "admin/admin_log.hpp"

#include <spdlog/spdlog.h>

#include "admin/admin_json.hpp"

namespace sk::admin_api {

const std::vector<std::string>& log_level_names() {
  // Indexed by spdlog::level::level_enum (trace = 0 ... off = 6).
  static const std::vector<std::string> names = {"trace", "debug",    "info", "warn",
                                                 "error", "critical", "off"};
  return names;
}

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view name) {
  const auto& names = log_level_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<spdlog::level::level_enum>(i);
  return std::nullopt;
}

std::string current_log_level() {
  const auto level = static_cast<std::size_t>(spdlog::default_logger_raw()->level());
  const auto& names = log_level_names();
  return level < names.size() ? names[level] : "unknown";
}

void get_log_level(admin_call& c) { c.job->reply_json(200, {{"level", current_log_level()}}); }

void put_log_level(admin_call& c) {
  const job_ptr& job = c.job;
  std::string accepted;
  for (const auto& n : log_level_names()) accepted += (accepted.empty() ? "" : ", ") + n;
  const json body = json::parse(job->body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return job->reply_error(400, "body must be a JSON object such as {\"level\":\"debug\"}");
  const auto it = body.find("level");
  if (it == body.end() || !it->is_string())
    return job->reply_error(400, "body needs a string field \"level\" (one of " + accepted + ")");
  const std::string name = it->get<std::string>();
  const auto level = parse_log_level(name);
  if (!level)
    return job->reply_error(400, "unknown log level \"" + name + "\" (one of " + accepted + ")");
  const std::string previous = current_log_level();
  // Logged at warn before a change to a quieter level can hide the line.
  spdlog::warn("admin: log level {} -> {}", previous, name);
  spdlog::set_level(*level);
  job->reply_json(200, {{"level", name}, {"previous", previous}});
}

}  // namespace sk::admin_api
