#pragma once
/// The admin API's one credential: a bearer token in the Authorization
/// header (`Authorization: Bearer <admin.token>`), compared in constant time.

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

}  // namespace admin_api
}  // namespace sk
