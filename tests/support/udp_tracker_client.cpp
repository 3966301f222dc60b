#include "udp_tracker_client.hpp"

#include <stdexcept>
#include <system_error>
#include <utility>

#include "announces.hpp"

namespace sk::test {

udp_tracker_client::udp_tracker_client(std::uint16_t port, const std::string& host,
                                       std::chrono::milliseconds timeout)
    : socket_(host, port, timeout), v6_(host.find(':') != std::string::npos) {}

udp_response udp_tracker_client::exchange(const std::string& packet, std::string& storage) {
  auto reply = socket_.exchange(packet);
  if (!reply) throw std::runtime_error("no UDP reply");
  storage = std::move(*reply);
  udp_response r;
  const auto ec = parse_udp_response(storage, v6_, r);
  if (ec != udp_error::ok)
    throw std::runtime_error("unparseable UDP reply: " + std::error_code(ec).message());
  return r;
}

void udp_tracker_client::connect() {
  std::string packet;
  encode_udp_connect_request(packet, next());
  std::string bytes;
  const auto r = exchange(packet, bytes);
  if (r.action != udp_action::connect)
    throw std::runtime_error("connect answered with " + std::string(r.message));
  connection_ = r.connection;
}

udp_response udp_tracker_client::announce(const announce_request& a, std::string& storage) {
  std::string packet;
  encode_udp_announce_request(packet, connection_, next(), a);
  return exchange(packet, storage);
}

udp_response udp_tracker_client::announce(const std::string& hash, const std::string& peer,
                                          std::uint16_t port, std::uint64_t left,
                                          std::string& storage, announce_event event) {
  return announce(
      announce_of(info_hash::from_bytes(hash), peer_id::from_bytes(peer), port, left, event),
      storage);
}

udp_response udp_tracker_client::scrape(const std::vector<std::string>& hashes,
                                        std::string& storage) {
  std::vector<info_hash> raw;
  for (const auto& h : hashes) raw.push_back(info_hash::from_bytes(h));
  std::string packet;
  encode_udp_scrape_request(packet, connection_, next(), raw.data(), raw.size());
  return exchange(packet, storage);
}

}  // namespace sk::test
