#include "app/logging.hpp"

#include <chrono>
#include <ctime>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "admin/admin_log.hpp"
#include "runtime/swarm_actor_log.hpp"

namespace sk {

namespace {

/// `2026-12-01T16:50:00.123Z`.
void append_utc_time(spdlog::log_clock::time_point t, spdlog::memory_buf_t& out) {
  const auto since_epoch = t.time_since_epoch();
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - secs).count();
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  out.append(buf, buf + n);
  fmt::format_to(std::back_inserter(out), ".{:03d}Z", static_cast<int>(millis));
}

/// Appends `s` as the inside of a JSON string: quotes, backslashes and
/// control characters escaped; other bytes as they are (log text is UTF-8).
void append_json_escaped(spdlog::string_view_t s, spdlog::memory_buf_t& out) {
  static const char* hex = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out.append(std::string_view("\\\""));
        break;
      case '\\':
        out.append(std::string_view("\\\\"));
        break;
      case '\n':
        out.append(std::string_view("\\n"));
        break;
      case '\r':
        out.append(std::string_view("\\r"));
        break;
      case '\t':
        out.append(std::string_view("\\t"));
        break;
      default:
        if (c < 0x20) {
          const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
          out.append(esc, esc + 6);
        } else {
          out.push_back(ch);
        }
    }
  }
}

const std::string& level_name(spdlog::level::level_enum l) {
  const auto& names = admin_api::log_level_names();
  const auto i = static_cast<std::size_t>(l);
  return names[i < names.size() ? i : names.size() - 1];
}

/// One JSON object per line: time, level, msg.
class json_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    dest.append(std::string_view("{\"time\":\""));
    append_utc_time(msg.time, dest);
    dest.append(std::string_view("\",\"level\":\""));
    const std::string& level = level_name(msg.level);
    dest.append(level.data(), level.data() + level.size());
    dest.append(std::string_view("\",\"msg\":\""));
    append_json_escaped(msg.payload, dest);
    dest.append(std::string_view("\"}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<json_formatter>();
  }
};

/// The text line: UTC time, the level (coloured on a terminal), the message.
class text_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    append_utc_time(msg.time, dest);
    dest.push_back(' ');
    msg.color_range_start = dest.size();
    const std::string& level = level_name(msg.level);
    dest.append(level.data(), level.data() + level.size());
    msg.color_range_end = dest.size();
    dest.push_back(' ');
    dest.append(msg.payload.data(), msg.payload.data() + msg.payload.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<text_formatter>();
  }
};

}  // namespace

bool parse_log_format(const std::string& name, log_format& out) {
  if (name == "text") {
    out = log_format::text;
    return true;
  }
  if (name == "json") {
    out = log_format::json;
    return true;
  }
  return false;
}

std::unique_ptr<spdlog::formatter> make_log_formatter(log_format f) {
  if (f == log_format::json) return std::make_unique<json_formatter>();
  return std::make_unique<text_formatter>();
}

void setup_logging(const std::string& level, log_format f) {
  auto logger = spdlog::stderr_color_mt("swarmkeeper");
  logger->set_formatter(make_log_formatter(f));
  logger->set_level(admin_api::parse_log_level(level).value_or(spdlog::level::info));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

void setup_swarm_log_budget(double lines_per_minute, std::uint32_t burst) {
  log_limiter::limits l;
  l.lines_per_minute = lines_per_minute;
  l.burst = burst;
  swarm_log::instance().configure(l);
}

}  // namespace sk
