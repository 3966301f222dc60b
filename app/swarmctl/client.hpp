#pragma once
/// swarmctl's HTTP side: parsing the admin URL (pure, unit-tested) and one
/// synchronous libcurl request with an overall deadline, over http or
/// https (the admin API itself speaks plain HTTP; https reaches it through
/// a TLS-terminating proxy in front of it).
///
/// Failures are split the way the exit codes are (see exit_code in
/// commands.hpp): the daemon could not be reached at all (transport_error:
/// refused, timed out, name not resolved, connection broken) versus the
/// daemon answered with an HTTP status (a reply, whatever the status; the
/// caller decides what 401 or 404 mean).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sk::swarmctl {

/// An `http[s]://host[:port][/base]` URL of the admin API.
struct admin_url {
  /// True for https (default port 443), false for http (default port 80).
  bool tls = false;
  /// Host name or address as written; IPv6 without the brackets.
  std::string host;
  std::uint16_t port = 80;
  /// Path prefix without a trailing slash ("" or e.g. "/sk" behind a proxy);
  /// request targets like "/api/node" are appended to it.
  std::string base_path;

  /// The URL back as text ("http://[::1]:8080"), for messages.
  std::string text() const;
  /// host:port as in the URL ("[::1]:8080"), e.g. for the shell's prompt.
  std::string authority() const;
};

/// Parses `text`; nullopt and a message in `error` when it is not an http
/// or https URL with a host (credentials, query strings and fragments are
/// refused too: the token goes in a header, never in the URL).
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
  tls,          ///< the TLS handshake failed (certificate not trusted, wrong name...)
  interrupted,  ///< the caller's cancel flag was raised (Ctrl-C in the shell)
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

/// How an https URL is trusted, and how a request is abandoned.
struct transfer_options {
  /// PEM file of the CA (or the self-signed certificate) that signed the
  /// proxy's certificate; empty: the system's CA store.
  std::string ca_file;
  /// Accept any certificate and host name (a self-signed proxy on a test
  /// machine). The token still travels encrypted, but to whoever answers.
  bool insecure = false;
  /// When set and raised, the transfer stops with transport_failure::interrupted.
  const std::atomic<bool>* cancel = nullptr;
};

/// Connects, sends one request (Connection: close) and reads the whole
/// answer, all within `timeout` (resolution included). Throws
/// transport_error when no HTTP answer arrived; any status is a reply.
/// Answers larger than 64 MiB are refused as broken. Proxies from the
/// environment (http_proxy...) are ignored: the request goes to the URL's
/// host, so the token is sent only there. Nothing is logged.
http_reply perform(const admin_url& url, const http_request& req, const std::string& token,
                   std::chrono::milliseconds timeout, const transfer_options& opts = {});

}  // namespace sk::swarmctl
