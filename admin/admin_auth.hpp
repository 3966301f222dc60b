#pragma once
/// The admin API's credentials: bearer tokens in the Authorization header
/// (`Authorization: Bearer <token>`), compared in constant time.
///
///   admin token     (admin.token)          every endpoint
///   metrics token   (admin.metrics-token)  GET /metrics only; anything
///                                          else is 403, so a scraper that
///                                          holds it can read, never act

#include <string>
#include <string_view>

namespace sk {

/// Compares two strings in time that depends only on their lengths (never
/// on where they first differ).
bool constant_time_equal(const std::string& a, const std::string& b) noexcept;

namespace admin_api {

/// What an Authorization header says about the caller.
enum class bearer_check {
  ok,       ///< "Bearer " followed by exactly the token
  missing,  ///< no Authorization header (or an empty one)
  wrong,    ///< anything else: another scheme, another token, no token
};

/// Checks the value of an Authorization header against `token` (which must
/// not be empty: the server refuses to start without one).
bearer_check check_bearer(std::string_view authorization, const std::string& token);

/// The text of a 401 for `why` (never `ok`).
const char* unauthorized_message(bearer_check why) noexcept;

/// What a request may do with the credential it carries.
struct authorization {
  /// 0: allowed; else the status to answer (401: no or a wrong token;
  /// 403: the metrics token on anything but GET /metrics).
  unsigned status = 0;
  /// The error text of that answer (empty when allowed).
  const char* message = "";
};

/// Checks `authorization_header` for a request `method target`: the admin
/// token allows everything, `metrics_token` (empty: none configured) only
/// GET /metrics (the path without a query string).
authorization authorize(std::string_view method, std::string_view target,
                        std::string_view authorization_header, const std::string& admin_token,
                        const std::string& metrics_token);

}  // namespace admin_api
}  // namespace sk
