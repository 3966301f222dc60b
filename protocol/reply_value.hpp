#pragma once
/// Replies built the generic way: a `bvalue` tree per reply, then
/// `encode_value`. Written independently of reply.cpp (it shares no code
/// with the streaming encoder), so that the differential tests comparing the
/// two catch a mistake in either; also the "generic" side of the issue-3
/// benchmark. Not used on the serving path.

#include "protocol/bencode_value.hpp"
#include "protocol/reply.hpp"

namespace sk {

/// The tree `encode_announce_reply` must produce the encoding of.
bvalue announce_reply_value(const announce_reply_view& reply);
/// The tree `encode_failure` must produce the encoding of.
bvalue failure_value(std::string_view reason, std::optional<std::int64_t> retry_in_minutes);
/// The tree `encode_scrape_reply` must produce the encoding of.
bvalue scrape_reply_value(const scrape_entry* entries, std::size_t count);

}  // namespace sk
