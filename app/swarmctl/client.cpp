#include "app/swarmctl/client.hpp"

#include <cctype>
#include <memory>
#include <optional>
#include <sstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace sk::swarmctl {

namespace {

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string admin_url::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + base_path;
}

std::optional<admin_url> parse_admin_url(std::string_view text, std::string& error) {
  const std::string_view scheme_sep = "://";
  const auto sep = text.find(scheme_sep);
  if (sep == std::string_view::npos) {
    error = "'" + std::string(text) + "' is not a URL; expected http://HOST:PORT";
    return std::nullopt;
  }
  const std::string scheme = lower(text.substr(0, sep));
  if (scheme == "https") {
    error = "https is not supported: the admin API speaks plain HTTP (keep it on loopback and "
            "reach it through an SSH tunnel)";
    return std::nullopt;
  }
  if (scheme != "http") {
    error = "unsupported URL scheme '" + scheme + "'; expected http://HOST:PORT";
    return std::nullopt;
  }
  std::string_view rest = text.substr(sep + scheme_sep.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    error = "the admin URL may not have a query or fragment: '" + std::string(text) + "'";
    return std::nullopt;
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    error = "the admin URL may not carry credentials; use --token or --token-file";
    return std::nullopt;
  }
  admin_url url;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      error = "unclosed '[' in the host of '" + std::string(text) + "'";
      return std::nullopt;
    }
    url.host = std::string(authority.substr(1, close - 1));
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        error = "unexpected text after ']' in '" + std::string(text) + "'";
        return std::nullopt;
      }
      port_text = after.substr(1);
      if (port_text.empty()) {
        error = "empty port in '" + std::string(text) + "'";
        return std::nullopt;
      }
    }
  } else {
    const auto colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) {
        error = "empty port in '" + std::string(text) + "'";
        return std::nullopt;
      }
    }
  }
  if (url.host.empty()) {
    error = "no host in '" + std::string(text) + "'";
    return std::nullopt;
  }
  if (!port_text.empty()) {
    if (!is_digits(port_text) || port_text.size() > 5 || std::stoul(std::string(port_text)) == 0 ||
        std::stoul(std::string(port_text)) > 65535) {
      error = "port '" + std::string(port_text) + "' is not a number from 1 to 65535";
      return std::nullopt;
    }
    url.port = static_cast<std::uint16_t>(std::stoul(std::string(port_text)));
  }
  std::string base(path);
  while (!base.empty() && base.back() == '/') base.pop_back();
  url.base_path = base;
  return url;
}

std::string percent_encode(std::string_view raw) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : raw) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

/// The request's async chain. Asynchronous operations on a private
/// io_context, run until done or until the deadline: Beast's synchronous
/// calls have no timeout, and resolution needs one too.
struct exchange : std::enable_shared_from_this<exchange> {
  exchange(asio::io_context& ioc, const admin_url& u, http::request<http::string_body> r)
      : resolver(ioc), stream(ioc), url(u), req(std::move(r)) {}

  tcp::resolver resolver;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  admin_url url;
  http::request<http::string_body> req;
  std::optional<http::response_parser<http::string_body>> parser;
  bool done = false;
  beast::error_code failure;
  const char* stage = "connect";

  void start(std::chrono::steady_clock::time_point deadline) {
    stream.expires_at(deadline);
    resolver.async_resolve(url.host, std::to_string(url.port),
                           [self = shared_from_this()](beast::error_code ec,
                                                       tcp::resolver::results_type results) {
                             if (ec) return self->fail(ec, "resolve");
                             self->stream.async_connect(
                                 results, [self](beast::error_code ec2, const tcp::endpoint&) {
                                   if (ec2) return self->fail(ec2, "connect");
                                   self->write();
                                 });
                           });
  }

  void write() {
    http::async_write(stream, req, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->fail(ec, "send");
      self->read();
    });
  }

  void read() {
    parser.emplace();
    parser->body_limit(64u * 1024 * 1024);
    http::async_read(stream, buffer, *parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->fail(ec, "read");
                       self->done = true;
                       beast::error_code ignored;
                       self->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
                     });
  }

  void fail(beast::error_code ec, const char* where) {
    failure = ec;
    stage = where;
    done = true;
  }
};

}  // namespace

http_reply perform(const admin_url& url, const http_request& r, const std::string& token,
                   std::chrono::milliseconds timeout) {
  http::request<http::string_body> req;
  req.version(11);
  req.method_string(r.method);
  req.target(url.base_path + r.target);
  const bool v6 = url.host.find(':') != std::string::npos;
  req.set(http::field::host,
          (v6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port));
  req.set(http::field::user_agent, "swarmctl");
  req.set(http::field::accept, "application/json");
  req.set(http::field::connection, "close");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  if (!r.body.empty()) req.set(http::field::content_type, "application/json");
  req.body() = r.body;
  if (!r.body.empty() || r.method != "GET") req.prepare_payload();

  asio::io_context ioc{1};
  auto ex = std::make_shared<exchange>(ioc, url, std::move(req));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ex->start(deadline);
  // The stream's deadline covers connect/write/read; run_until bounds the
  // resolver too (it has no timeout of its own).
  ioc.run_until(deadline);
  const std::string where = url.text();
  std::ostringstream secs_text;
  secs_text << static_cast<double>(timeout.count()) / 1000.0;
  const std::string secs = secs_text.str();
  if (!ex->done) {
    // Abandon the pending operations now rather than in ~io_context.
    ex->resolver.cancel();
    beast::error_code ignored;
    ex->stream.socket().close(ignored);
    throw transport_error(transport_failure::timed_out,
                          "swarmkeeper admin at " + where + " did not answer within " + secs + " s");
  }
  const auto ec = ex->failure;
  if (ec) {
    if (ec == beast::error::timeout)
      throw transport_error(transport_failure::timed_out, "swarmkeeper admin at " + where +
                                                              " did not answer within " + secs +
                                                              " s (" + ex->stage + ")");
    if (ec == asio::error::connection_refused)
      throw transport_error(transport_failure::refused,
                            "cannot reach swarmkeeper admin at " + where +
                                ": connection refused; is the daemon running with admin.port set?");
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset)
      throw transport_error(transport_failure::broken,
                            "swarmkeeper admin at " + where +
                                " closed the connection without answering (did the daemon stop?)");
    if (std::string(ex->stage) == "resolve")
      throw transport_error(transport_failure::unresolved,
                            "cannot resolve '" + url.host + "': " + ec.message());
    throw transport_error(transport_failure::broken, "cannot talk to swarmkeeper admin at " +
                                                         where + " (" + ex->stage +
                                                         "): " + ec.message());
  }
  auto res = ex->parser->release();
  http_reply out;
  out.status = static_cast<int>(res.result_int());
  out.content_type = std::string(res[http::field::content_type]);
  out.body = std::move(res.body());
  return out;
}

}  // namespace sk::swarmctl
