#include "cluster/ownership.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "protocol/siphash.hpp"

namespace sk::cluster {

namespace {

/// Fixed key: the weight must be the same on every node and in every
/// release (changing it moves every swarm). Not a secret: rendezvous needs
/// a well-mixed hash, not an unpredictable one.
constexpr siphash_key weight_key = {0x73, 0x77, 0x61, 0x72, 0x6d, 0x6b, 0x65, 0x65,
                                    0x70, 0x65, 0x72, 0x2d, 0x68, 0x72, 0x77, 0x31};

/// Longest member name hashed as a whole (longer names are cut; names are
/// bounded far below this by the config).
constexpr std::size_t max_hashed_name = 235;

bool heavier(std::uint64_t wa, std::string_view a, std::uint64_t wb, std::string_view b) {
  return wa != wb ? wa > wb : a < b;
}

}  // namespace

std::uint64_t rendezvous_weight(const info_hash& hash, std::string_view member) noexcept {
  // hash (20) | 0x00 separator | name: the separator keeps (hash, name)
  // pairs apart from any other split of the same bytes.
  unsigned char buf[20 + 1 + max_hashed_name];
  std::memcpy(buf, hash.bytes.data(), 20);
  buf[20] = 0;
  const std::size_t n = std::min(member.size(), max_hashed_name);
  std::memcpy(buf + 21, member.data(), n);
  return siphash24(weight_key, buf, 21 + n);
}

std::size_t rendezvous_owner(const info_hash& hash, const std::vector<std::string>& members) {
  std::size_t best = members.size();
  std::uint64_t best_w = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::uint64_t w = rendezvous_weight(hash, members[i]);
    if (best == members.size() || heavier(w, members[i], best_w, members[best])) {
      best = i;
      best_w = w;
    }
  }
  return best;
}

std::vector<std::size_t> rendezvous_rank(const info_hash& hash,
                                         const std::vector<std::string>& members) {
  std::vector<std::uint64_t> w(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) w[i] = rendezvous_weight(hash, members[i]);
  std::vector<std::size_t> idx(members.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return heavier(w[a], members[a], w[b], members[b]);
  });
  return idx;
}

}  // namespace sk::cluster
