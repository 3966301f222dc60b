#pragma once
/// The member list nodes gossip, and how two lists merge. Pure C++17.
///
/// Every node keeps the members it has heard of (from seeds, from joins,
/// from gossip) and tells each peer its list whenever it changes; a node
/// dials every member it learns. Liveness is not gossiped: a member is live
/// for a node while that node's connection to it is up (middleman
/// heartbeats end a silent connection within cluster.connection-timeout).
/// With a full mesh every survivor loses the same connection when a node
/// dies, so all converge on the same live set without trusting hearsay
/// about who is dead.
///
/// A restarted node comes back with a higher `incarnation` (start time),
/// which replaces whatever address the others remembered for its name.

#include <cstdint>
#include <string>
#include <vector>

namespace sk::cluster {

struct member_info {
  /// Unique node name (what rendezvous hashing ranks).
  std::string name;
  /// Address and cluster port others dial.
  std::string host;
  std::uint16_t port = 0;
  /// Start time of the node's process (ms since the epoch): larger is newer.
  std::uint64_t incarnation = 0;

  friend bool operator==(const member_info& a, const member_info& b) {
    return a.name == b.name && a.host == b.host && a.port == b.port &&
           a.incarnation == b.incarnation;
  }
  friend bool operator!=(const member_info& a, const member_info& b) { return !(a == b); }
};

/// Merges `incoming` into `known` (kept sorted by name, names unique): a new
/// name is added, a known name is replaced only by a higher incarnation.
/// Entries with an empty name or port 0 are ignored. Returns the entries of
/// `known` that were added or replaced (what the caller must dial).
std::vector<member_info> merge_members(std::vector<member_info>& known,
                                       const std::vector<member_info>& incoming);

/// The names of `members`, sorted (the input of rendezvous hashing).
std::vector<std::string> member_names(const std::vector<member_info>& members);

}  // namespace sk::cluster
