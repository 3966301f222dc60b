#include "protocol/reply_value.hpp"

#include <algorithm>

namespace sk {

bvalue announce_reply_value(const announce_reply_view& r) {
  bvalue::dict d;
  d["interval"] = bvalue(r.interval);
  d["min interval"] = bvalue(r.min_interval);
  d["complete"] = bvalue(r.stats.complete);
  d["incomplete"] = bvalue(r.stats.incomplete);
  d["downloaded"] = bvalue(r.stats.downloaded);
  if (r.compact) {
    d["peers"] = bvalue(std::string(r.peers4));
    if (!r.peers6.empty()) d["peers6"] = bvalue(std::string(r.peers6));
  } else {
    bvalue::list peers;
    for (std::size_t i = 0; i < r.peer_count; ++i) {
      bvalue::dict p;
      p["ip"] = bvalue(r.peers[i].ep.ip.to_string());
      if (!r.no_peer_id) p["peer id"] = bvalue(std::string(r.peers[i].id.view()));
      p["port"] = bvalue(static_cast<bvalue::integer>(r.peers[i].ep.port));
      peers.emplace_back(std::move(p));
    }
    d["peers"] = bvalue(std::move(peers));
  }
  if (r.external_ip) d["external ip"] = bvalue(std::string(r.external_ip->raw()));
  if (!r.tracker_id.empty()) d["tracker id"] = bvalue(std::string(r.tracker_id));
  if (!r.warning_message.empty()) d["warning message"] = bvalue(std::string(r.warning_message));
  return bvalue(std::move(d));
}

bvalue failure_value(std::string_view reason, std::optional<std::int64_t> retry_in_minutes) {
  bvalue::dict d;
  d["failure reason"] = bvalue(std::string(reason));
  if (retry_in_minutes) {
    d["retry in"] = *retry_in_minutes < 0 ? bvalue("never") : bvalue(*retry_in_minutes);
  }
  return bvalue(std::move(d));
}

bvalue scrape_reply_value(const scrape_entry* entries, std::size_t count) {
  bvalue::dict files;
  for (std::size_t i = 0; i < count; ++i) {
    bvalue::dict s;
    s["complete"] = bvalue(entries[i].stats.complete);
    s["downloaded"] = bvalue(entries[i].stats.downloaded);
    s["downloaders"] =
        bvalue(std::max<std::int64_t>(0, entries[i].stats.incomplete - entries[i].stats.partial));
    s["incomplete"] = bvalue(entries[i].stats.incomplete);
    files[std::string(entries[i].hash.view())] = bvalue(std::move(s));
  }
  bvalue::dict d;
  d["files"] = bvalue(std::move(files));
  return bvalue(std::move(d));
}

}  // namespace sk
