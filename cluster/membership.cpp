#include "cluster/membership.hpp"

#include <algorithm>

namespace sk::cluster {

std::vector<member_info> merge_members(std::vector<member_info>& known,
                                       const std::vector<member_info>& incoming) {
  std::vector<member_info> changed;
  for (const auto& m : incoming) {
    if (m.name.empty() || m.port == 0) continue;
    auto it = std::lower_bound(known.begin(), known.end(), m.name,
                               [](const member_info& a, const std::string& n) { return a.name < n; });
    if (it == known.end() || it->name != m.name) {
      known.insert(it, m);
      changed.push_back(m);
    } else if (m.incarnation > it->incarnation) {
      *it = m;
      changed.push_back(m);
    }
  }
  return changed;
}

std::vector<std::string> member_names(const std::vector<member_info>& members) {
  std::vector<std::string> out;
  out.reserve(members.size());
  for (const auto& m : members) out.push_back(m.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sk::cluster
