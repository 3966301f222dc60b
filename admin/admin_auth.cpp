#include "admin/admin_auth.hpp"

#include <algorithm>
#include <cstddef>

namespace sk {

bool constant_time_equal(const std::string& a, const std::string& b) noexcept {
  // Walk the longer length; a length mismatch is folded into the result so
  // that neither the position of the first difference nor an early return
  // on length leaks through timing (the token's length is no secret).
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

namespace admin_api {

bearer_check check_bearer(std::string_view authorization, const std::string& token) {
  if (authorization.empty()) return bearer_check::missing;
  constexpr std::string_view scheme = "Bearer ";
  if (authorization.size() <= scheme.size() || authorization.substr(0, scheme.size()) != scheme)
    return bearer_check::wrong;
  const std::string given(authorization.substr(scheme.size()));
  return constant_time_equal(given, token) ? bearer_check::ok : bearer_check::wrong;
}

const char* unauthorized_message(bearer_check why) noexcept {
  return why == bearer_check::missing ? "missing bearer token" : "wrong bearer token";
}

}  // namespace admin_api
}  // namespace sk
