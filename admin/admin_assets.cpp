#include "admin/admin_assets.hpp"

#include <string>

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>

#include "protocol/text.hpp"

namespace sk {

namespace http = boost::beast::http;

// 'self' only, and nothing inline: the page's script and style are files of
// their own, its data comes from the API on the same origin. `frame-ancestors
// 'none'` (and X-Frame-Options for old browsers) keeps the page out of other
// sites' frames, where a click could be stolen.
const std::string_view admin_console_csp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const admin_asset* find_admin_asset(std::string_view path) noexcept {
  if (path == "/console/") path = "/console/index.html";
  for (std::size_t i = 0; i < detail::embedded_admin_asset_count; ++i) {
    if (detail::embedded_admin_assets[i].path == path) return &detail::embedded_admin_assets[i];
  }
  return nullptr;
}

std::size_t admin_asset_count() noexcept { return detail::embedded_admin_asset_count; }

const admin_asset& admin_asset_at(std::size_t i) noexcept {
  return detail::embedded_admin_assets[i];
}

namespace {

using response = http::response<http::string_body>;

/// Beast 1.74 takes boost::string_view.
boost::beast::string_view bsv(std::string_view s) noexcept { return {s.data(), s.size()}; }

/// If-None-Match uses the weak comparison (RFC 7232 3.2): a `W/` prefix is
/// ignored; `*` matches any current file.
bool etag_matches(std::string_view header, std::string_view etag) noexcept {
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view tag = trim(header.substr(0, comma));
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

response base(http::status status) {
  response res{status, 11};
  res.set(http::field::server, "swarmkeeper-admin");
  res.set("X-Content-Type-Options", "nosniff");
  return res;
}

response json_error(http::status status, const std::string& message) {
  // The messages here are fixed text (no request bytes), so no escaping.
  response res = base(status);
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.body() = "{\"error\":\"" + message + "\"}\n";
  res.prepare_payload();
  return res;
}

}  // namespace

std::optional<response> admin_console_response(const http::request<http::string_body>& req) {
  const std::string_view target{req.target().data(), req.target().size()};
  const std::string_view path = target.substr(0, target.find('?'));
  const bool redirect = path == "/" || path == "/console";
  if (!redirect && path.substr(0, 9) != "/console/") return std::nullopt;

  const bool head = req.method() == http::verb::head;
  if (req.method() != http::verb::get && !head) {
    response res = json_error(http::status::method_not_allowed,
                              "method " + std::string(req.method_string()) +
                                  " not allowed here (use GET or HEAD)");
    res.set(http::field::allow, "GET, HEAD");
    return res;
  }
  if (redirect) {
    response res = base(http::status::found);
    res.set(http::field::location, "/console/");
    res.set(http::field::cache_control, "no-cache");
    res.content_length(0);
    return res;
  }
  const admin_asset* asset = find_admin_asset(path);
  if (asset == nullptr) {
    response res = json_error(http::status::not_found, "no such console file");
    if (head) res.body().clear();  // Content-Length stays that of the GET answer
    return res;
  }

  const auto inm = req[http::field::if_none_match];
  const bool not_modified = etag_matches({inm.data(), inm.size()}, asset->etag);
  response res = base(not_modified ? http::status::not_modified : http::status::ok);
  res.set(http::field::etag, bsv(asset->etag));
  res.set(http::field::cache_control, "no-cache");
  res.set("Content-Security-Policy", bsv(admin_console_csp));
  res.set(http::field::x_frame_options, "DENY");
  res.set("Referrer-Policy", "no-referrer");
  if (not_modified) return res;  // 304: no body, no Content-Length
  res.set(http::field::content_type, bsv(asset->content_type));
  if (head) {
    res.content_length(asset->body.size());
  } else {
    res.body().assign(asset->body.data(), asset->body.size());
    res.prepare_payload();
  }
  return res;
}

}  // namespace sk
