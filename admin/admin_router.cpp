#include "admin/admin_router.hpp"

namespace sk::admin_api {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (pos < path.size()) {
    const std::size_t next = path.find('/', pos);
    const std::size_t end = next == std::string_view::npos ? path.size() : next;
    if (end > pos) parts.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

const std::string_view* path_params::find(std::string_view name) const noexcept {
  for (const auto& [n, v] : values_)
    if (n == name) return &v;
  return nullptr;
}

bool match_pattern(std::string_view pattern, const std::vector<std::string_view>& segments,
                   path_params& params) {
  std::size_t i = 0;
  std::size_t pos = 0;
  while (pos < pattern.size()) {
    const std::size_t next = pattern.find('/', pos);
    const std::size_t end = next == std::string_view::npos ? pattern.size() : next;
    if (end > pos) {
      const std::string_view want = pattern.substr(pos, end - pos);
      if (i == segments.size()) return false;
      if (want.size() >= 2 && want.front() == '{' && want.back() == '}')
        params.add(want.substr(1, want.size() - 2), segments[i]);
      else if (want != segments[i])
        return false;
      ++i;
    }
    pos = end + 1;
  }
  return i == segments.size();
}

}  // namespace sk::admin_api
