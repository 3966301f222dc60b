#pragma once
/// swarmctl's HTTP side: parsing the admin URL (pure, unit-tested) and one
/// synchronous Boost.Beast request with an overall deadline.
///
/// Failures are split the way the exit codes are (see exit_code in
/// commands.hpp): the daemon could not be reached at all (transport_error:
/// refused, timed out, name not resolved, connection broken) versus the
/// daemon answered with an HTTP status (a reply, whatever the status; the
/// caller decides what 401 or 404 mean).

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sk::swarmctl {

/// An `http://host[:port][/base]` URL of the admin API.
struct admin_url {
  /// Host name or address as written; IPv6 without the brackets.
  std::string host;
  std::uint16_t port = 80;
  /// Path prefix without a trailing slash ("" or e.g. "/sk" behind a proxy);
  /// request targets like "/api/node" are appended to it.
  std::string base_path;

  /// The URL back as text ("http://[::1]:8080"), for messages.
  std::string text() const;
};

/// Parses `text`; nullopt and a message in `error` when it is not a plain
/// http URL with a host (https is refused with a hint: the admin API speaks
/// plain HTTP on loopback; query strings and fragments are refused too).
std::optional<admin_url> parse_admin_url(std::string_view text, std::string& error);

/// Percent-encodes every byte outside RFC 3986's unreserved set, for one
/// path segment (a ban prefix may hold '/', '%', spaces...).
std::string percent_encode(std::string_view raw);

/// One HTTP answer.
struct http_reply {
  int status = 0;
  std::string content_type;
  std::string body;
};

/// Why the daemon could not be reached.
enum class transport_failure {
  refused,      ///< connection refused: nothing listens there
  timed_out,    ///< no complete answer before the deadline
  unresolved,   ///< the host name did not resolve
  broken,       ///< any other socket error (reset, unreachable network...)
};

/// Thrown by `perform` when no HTTP answer arrived.
class transport_error : public std::runtime_error {
 public:
  transport_error(transport_failure kind, const std::string& what)
      : std::runtime_error(what), kind_(kind) {}
  transport_failure kind() const noexcept { return kind_; }

 private:
  transport_failure kind_;
};

/// One request: `method` `target` (already percent-encoded, starting with
/// '/'), with `Authorization: Bearer token` unless `token` is empty, and a
/// JSON `body` when not empty (POST/DELETE always send Content-Length).
struct http_request {
  std::string method = "GET";
  std::string target;
  std::string body;
};

/// Connects, sends one request (Connection: close) and reads the whole
/// answer, all within `timeout` (resolution included). Throws
/// transport_error when no HTTP answer arrived; any status is a reply.
/// Answers larger than 64 MiB are refused as broken.
http_reply perform(const admin_url& url, const http_request& req, const std::string& token,
                   std::chrono::milliseconds timeout);

}  // namespace sk::swarmctl
