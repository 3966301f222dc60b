#pragma once
/// UDP tracker connection ids (BEP 15) that carry no per-client state.
///
/// BEP 15 makes a client prove it can receive packets at its source address
/// before the tracker answers an announce or scrape: it first sends `connect`
/// and must echo the 64-bit id it gets back. Without that step anyone could
/// spoof a victim's address and have the tracker send it announce replies
/// several times larger than the request (an amplifier).
///
/// The id here is a MAC, so the tracker remembers nothing per client:
///
///     id = SipHash-2-4(key, epoch ‖ family ‖ address)
///
///     hashed bytes (25):
///     +-----------------+--------+------------------------+
///     | epoch (u64, LE) | family | address (16; v4 in the |
///     |  = floor(now /  | 4 or 6 |  first 4, rest zero)   |
///     |    120 s)       |        |                        |
///     +-----------------+--------+------------------------+
///      0               8        9                       25
///
/// The id is bound to the client's address, not its port. What the
/// handshake proves is that the client receives packets at that address,
/// which is all the anti-spoofing needs; and real clients reuse one id from
/// several source ports (libtorrent caches one id per tracker for the whole
/// process, shared by all its listen sockets), so a port-bound id would
/// reject honest announces. The end-to-end libtorrent test runs several
/// sessions in one process and relies on this.
///
/// Validity: an id issued during epoch e is accepted while the current epoch
/// is e or e + 1, so it lives between 120 s (issued at the very end of its
/// epoch) and 240 s (issued at the very start), and is rejected from 240 s
/// after issue at the latest. BEP 15 says clients may use an id for one
/// minute; libtorrent keeps one for 60 s (`udp_tracker_token_expiry`).
///
/// Time is injected: `now` is seconds on a clock the caller picks. One node:
/// a monotonic clock (`steady_clock`), so wall-clock steps do not expire ids.
/// Several nodes sharing one key (so an id issued by one validates on
/// another, e.g. behind anycast): every node must pass the same clock, i.e.
/// `system_clock` seconds, and their clocks must agree to well under 120 s.
///
/// Checking costs two SipHash runs (current and previous epoch) whatever the
/// outcome, and the comparison has no data-dependent branch, so timing says
/// nothing about how close a forged id was.
///
/// The key is random per process unless configured; a restart with a random
/// key invalidates every id in flight (clients get the invalid-id reply, see
/// protocol/udp.hpp, and reconnect).

#include <chrono>
#include <cstdint>
#include <string_view>

#include "protocol/siphash.hpp"
#include "protocol/types.hpp"

namespace sk {

/// The 64-bit connection id of BEP 15 (opaque to clients).
struct connection_id {
  std::uint64_t value = 0;
  friend bool operator==(connection_id a, connection_id b) noexcept { return a.value == b.value; }
  friend bool operator!=(connection_id a, connection_id b) noexcept { return a.value != b.value; }
};

/// The secret that connection ids are MACed under.
using connection_id_key = siphash_key;

/// Parses a key written as exactly 32 hex digits (either case) into `out`.
/// Returns false, leaving `out` untouched, on any other input.
bool parse_connection_id_key(std::string_view hex, connection_id_key& out) noexcept;

/// A fresh key from the operating system's CSPRNG (`std::random_device` on
/// /dev/urandom). Start-up only: throws `std::runtime_error` if no entropy
/// source is available.
connection_id_key random_connection_id_key();

/// Issues and checks connection ids. Immutable after construction, so one
/// instance may be shared by every I/O thread without locking.
class connection_id_issuer {
 public:
  /// Length of one time epoch; ids live for one to two epochs.
  static constexpr std::int64_t epoch_seconds = 120;
  /// An id is valid for at least this long after it was issued...
  static constexpr std::int64_t min_lifetime_seconds = epoch_seconds;
  /// ...and never this long or longer.
  static constexpr std::int64_t max_lifetime_seconds = 2 * epoch_seconds;

  explicit connection_id_issuer(const connection_id_key& key) noexcept : key_(key) {}

  /// From configuration: 32 hex digits, or empty for a random key.
  /// Throws `std::invalid_argument` on a malformed key (a config error).
  static connection_id_issuer from_config(std::string_view hex_key_or_empty);

  /// The id for `client` at time `now`.
  connection_id issue(const endpoint& client, std::chrono::seconds now) const noexcept;
  connection_id issue(const endpoint& client,
                      std::chrono::steady_clock::time_point now) const noexcept {
    return issue(client, std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()));
  }

  /// True if `id` was issued to `client`'s address (any port) in the
  /// current or the previous epoch. Constant time.
  bool valid(connection_id id, const endpoint& client, std::chrono::seconds now) const noexcept;
  bool valid(connection_id id, const endpoint& client,
             std::chrono::steady_clock::time_point now) const noexcept {
    return valid(id, client,
                 std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()));
  }

  /// The epoch `now` falls in (floor division, also for negative times).
  static std::int64_t epoch_of(std::chrono::seconds now) noexcept;

 private:
  std::uint64_t mac(std::int64_t epoch, const endpoint& client) const noexcept;

  connection_id_key key_;
};

}  // namespace sk
