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

authorization authorize(std::string_view method, std::string_view target,
                        std::string_view authorization_header, const std::string& admin_token,
                        const std::string& metrics_token) {
  const bearer_check admin = check_bearer(authorization_header, admin_token);
  if (admin == bearer_check::ok) return {};
  if (admin == bearer_check::missing) return {401, unauthorized_message(admin)};
  // Both checks always run when a metrics token is configured, so the time
  // taken does not tell which token a guess came close to.
  if (metrics_token.empty() ||
      check_bearer(authorization_header, metrics_token) != bearer_check::ok)
    return {401, unauthorized_message(bearer_check::wrong)};
  const std::string_view path = target.substr(0, target.find('?'));
  if (method == "GET" && path == "/metrics") return {};
  return {403, "the metrics token may only GET /metrics"};
}

}  // namespace admin_api
}  // namespace sk
