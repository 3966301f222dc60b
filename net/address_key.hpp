#pragma once
/// The key of one client address in the per-address tables (request rate,
/// new-swarm budget, HTTP connections per address): a keyed hash, so nobody
/// without the per-process secret can aim many addresses at one bucket of a
/// hash map, one stripe or one key.
///
///   IPv4: the address                  IPv6: its /64 (one subscriber: an
///                                      ISP hands each a /64 or more, and
///                                      the host half is the client's pick)

#include <cstdint>
#include <string>

#include "protocol/siphash.hpp"
#include "protocol/types.hpp"

namespace sk {

/// 16 bytes from the OS's random source (one per table: no table's key
/// tells anything about another's).
siphash_key random_siphash_key();

/// SipHash-2-4 under `secret` of the family and the address (IPv6: its
/// first 64 bits).
std::uint64_t address_key(const siphash_key& secret, const ip_address& a) noexcept;

/// The subscriber `a` is counted as, in words: the address, or its /64.
std::string subscriber_text(const ip_address& a);

}  // namespace sk
