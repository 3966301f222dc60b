#pragma once
/// Who owns a swarm in a cluster: rendezvous (highest random weight)
/// hashing of the info_hash over the live members' names.
///
///   weight(h, m) = SipHash-2-4(k, h ‖ 0x00 ‖ m)       k fixed (see .cpp)
///   owner(h)     = the member with the highest weight (ties: smaller name)
///   rank(h)      = members by falling weight: owner, then the next node
///                  (replica target), ...
///
/// Why rendezvous: every node computes the same owner from the same member
/// list with no coordination, the load is balanced (each member wins a
/// hash with probability 1/n), and a membership change moves only the
/// hashes the joining member wins (join) or the leaving member owned
/// (leave): about 1/n of them, never a hash between two other members.
///
/// Pure C++17: no CAF, no clock; unit-tested for stability, balance and
/// minimal movement (tests/cluster/ownership_test.cpp).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/types.hpp"

namespace sk::cluster {

/// The weight of `member` for `hash` (a keyed hash; the key is fixed so that
/// every node, whatever its build, computes the same weight).
std::uint64_t rendezvous_weight(const info_hash& hash, std::string_view member) noexcept;

/// Index into `members` of the owner of `hash`; `members.size()` when
/// `members` is empty. Duplicates in `members` are allowed (the first wins).
std::size_t rendezvous_owner(const info_hash& hash, const std::vector<std::string>& members);

/// Indexes into `members` ordered by falling weight (the owner first).
std::vector<std::size_t> rendezvous_rank(const info_hash& hash,
                                         const std::vector<std::string>& members);

}  // namespace sk::cluster
