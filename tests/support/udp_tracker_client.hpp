#pragma once
/// A BEP 15 client for the daemon tests: connect once over a loopback UDP
/// socket, then announce and scrape with that connection id, each request
/// with the next transaction id.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"
#include "protocol/announce.hpp"
#include "protocol/types.hpp"
#include "protocol/udp.hpp"

namespace sk::test {

class udp_tracker_client {
 public:
  /// A socket connected to `host:port` ("127.0.0.1" or "::1").
  explicit udp_tracker_client(std::uint16_t port, const std::string& host = "127.0.0.1",
                              std::chrono::milliseconds timeout = 3000ms);

  /// Sends `packet` and parses the reply, whose bytes `storage` keeps (the
  /// response views them). Throws when no reply comes or it does not parse.
  udp_response exchange(const std::string& packet, std::string& storage);

  /// Gets a connection id; throws unless the tracker answers a connect.
  void connect();

  /// Announces `a` (after `connect()`). The reply may be an announce or an
  /// error; it should carry `last_transaction()`.
  udp_response announce(const announce_request& a, std::string& storage);
  /// Announces raw 20-byte `hash` and `peer` listening on `port` with
  /// `left` bytes left (`announce_of`, announces.hpp).
  udp_response announce(const std::string& hash, const std::string& peer, std::uint16_t port,
                        std::uint64_t left, std::string& storage,
                        announce_event event = announce_event::started);
  /// Scrapes raw 20-byte hashes (after `connect()`).
  udp_response scrape(const std::vector<std::string>& hashes, std::string& storage);

  /// The transaction id of the last request sent.
  transaction_id last_transaction() const noexcept { return transaction_id{transaction_}; }
  udp_client& socket() noexcept { return socket_; }

 private:
  transaction_id next() { return transaction_id{++transaction_}; }

  udp_client socket_;
  bool v6_;
  connection_id connection_;
  std::uint32_t transaction_ = 0x5000;
};

}  // namespace sk::test
