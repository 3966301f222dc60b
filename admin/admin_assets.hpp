#pragma once
/// The web console's static files (admin/console/), compiled into the
/// binary by admin/console/embed_assets.cmake, and the HTTP answers the
/// admin server gives for them.
///
/// The console is a page that asks the operator for the admin token and then
/// calls the JSON API with it; the files themselves hold no data, so they are
/// served without the token:
///
///   GET|HEAD /               302 → /console/
///   GET|HEAD /console        302 → /console/
///   GET|HEAD /console/       index.html
///   GET|HEAD /console/<file> the file; 404 (JSON) for an unknown file
///   any other method there   405 (JSON), Allow: GET, HEAD
///
/// Every file goes out with a strong ETag (If-None-Match → 304),
/// `Cache-Control: no-cache` (revalidate: a new binary serves new files at
/// once), `X-Content-Type-Options: nosniff` and a Content-Security-Policy that
/// allows only the console's own script, style and API calls (no inline
/// script or style, no framing), so even a bug that put API text into markup
/// could not run it.

#include <cstddef>
#include <optional>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace sk {

/// One embedded file.
struct admin_asset {
  /// URL path, e.g. "/console/console.js".
  std::string_view path;
  /// Content-Type header value.
  std::string_view content_type;
  /// The file's bytes.
  std::string_view body;
  /// Strong entity tag including its quotes: a hash of `body`.
  std::string_view etag;
};

/// The embedded file served at `path` (without a query), or nullptr.
/// "/console/" is "/console/index.html".
const admin_asset* find_admin_asset(std::string_view path) noexcept;

/// Every embedded file (for tests).
std::size_t admin_asset_count() noexcept;
const admin_asset& admin_asset_at(std::size_t i) noexcept;

/// The Content-Security-Policy sent with every console file.
extern const std::string_view admin_console_csp;

/// The answer to `req` when its target is a console path (see the table
/// above), or nullopt when it is not (an API path: the caller checks the
/// token and routes it). The response is complete (headers, body, payload
/// size) except keep-alive, which the caller sets. For HEAD the body is empty
/// and Content-Length is that of the GET answer.
std::optional<boost::beast::http::response<boost::beast::http::string_body>> admin_console_response(
    const boost::beast::http::request<boost::beast::http::string_body>& req);

namespace detail {
/// Defined in the generated source (admin_console_assets.cpp).
extern const admin_asset embedded_admin_assets[];
extern const std::size_t embedded_admin_asset_count;
}  // namespace detail

}  // namespace sk
