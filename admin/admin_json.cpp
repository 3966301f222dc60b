#include "admin/admin_json.hpp"

#include <chrono>
#include <cmath>
#include <utility>

#include "net/udp/udp_server.hpp"

namespace sk::admin_api {

std::string health_name(const swarm_status& s) {
  return s.evaluated ? std::string(to_string(s.health.state)) : std::string("unevaluated");
}

json reasons_json(std::uint32_t reasons) {
  json out = json::array();
  for (int i = 0; i < health_reason_count; ++i) {
    const auto bit = static_cast<health_reason>(1u << i);
    if ((reasons & bit) != 0) out.push_back(std::string(reason_name(bit)));
  }
  return out;
}

json flags_json(std::uint8_t flags) {
  static const std::pair<peer_flag, const char*> names[] = {
      {flag_stalled, "stalled"},
      {flag_quarantined, "quarantined"},
      {flag_unreachable, "unreachable"},
      {flag_reachable, "reachable"},
      {flag_poor_contributor, "poor-contributor"},
      {flag_warned, "warned"}};
  json out = json::array();
  for (const auto& [bit, name] : names)
    if ((flags & bit) != 0) out.push_back(name);
  return out;
}

json age_seconds(health_time at) {
  if (at == health_time{}) return nullptr;
  return std::chrono::duration<double>(health_clock::now() - at).count();
}

json number_or_null(double x) {
  if (!std::isfinite(x)) return nullptr;
  return x;
}

json progress_json(float p) { return p < 0 ? json(nullptr) : json(static_cast<double>(p)); }

json signals_json(const health_signals& s) {
  return {{"state", std::string(to_string(s.state))},
          {"reasons", reasons_json(s.reasons)},
          {"seeders", s.seeders},
          {"leechers", s.leechers},
          {"stalled", s.stalled},
          {"completion_rate", number_or_null(s.completion_rate)}};
}

json record_json(const remediation_record& r) {
  return {{"age_seconds", age_seconds(r.at)},
          {"action", r.action},
          {"strategy", r.strategy},
          {"reason", r.reason},
          {"detail", r.detail},
          {"before", signals_json(r.before)},
          {"after", signals_json(r.after)}};
}

json event_json(const supervisor_event& e) {
  return {{"age_seconds", age_seconds(e.at)},
          {"hash", e.hash == no_swarm ? json(nullptr) : json(e.hash.hex())},
          {"kind", e.kind},
          {"detail", e.detail}};
}

json summary_json(const swarm_status& s, caf::actor_id id) {
  return {{"hash", s.hash.hex()},
          {"actor_id", id},
          {"peers", s.stats.complete + s.stats.incomplete},
          {"seeders", s.stats.complete},
          {"leechers", s.stats.incomplete},
          {"partial_seeds", s.stats.partial},
          {"downloaded", s.stats.downloaded},
          {"health", health_name(s)},
          {"reasons", reasons_json(s.evaluated ? s.health.reasons : 0)},
          {"announce_rate", number_or_null(s.evaluated ? s.health.announce_rate : 0.0)},
          {"policy", std::string(to_string(s.knobs.policy))}};
}

json detail_json(const swarm_status& s, caf::actor_id id, const std::string& owner_node,
                 const swarm_config& cfg) {
  // The swarm's own actor id (a forwarder's answer carries the owner's).
  json j = summary_json(s, s.actor_id != 0 ? s.actor_id : id);
  j["owner_node"] = owner_node;
  j["peer_count"] = s.peer_count;
  json peers = json::array();
  for (const auto& p : s.peers) {
    peers.push_back({{"address", p.ep.ip.to_string()},
                     {"port", p.ep.port},
                     {"peer_id", p.id.hex()},
                     {"client", identify_client(p.id).to_string()},
                     {"seeder", p.seeder},
                     {"left", p.left},
                     {"progress", progress_json(p.progress)},
                     {"announces", p.announces},
                     {"flags", flags_json(p.flags)}});
  }
  j["peers_listed"] = std::move(peers);
  j["counters"] = {{"announces", s.announces},
                   {"banned", s.banned},
                   {"refused", s.refused},
                   {"warned", s.warned},
                   {"seeder_appeals", s.seeder_appeals},
                   {"repeats", s.repeats},
                   {"early", s.early}};
  j["health_detail"] = {{"evaluated", s.evaluated},
                        {"state", health_name(s)},
                        {"reasons", reasons_json(s.health.reasons)},
                        {"seeders", s.health.seeders},
                        {"leechers", s.health.leechers},
                        {"partial_seeds", s.health.partial_seeds},
                        {"stalled", s.health.stalled},
                        {"quarantined", s.health.quarantined},
                        {"completion_rate", number_or_null(s.health.completion_rate)},
                        {"announce_rate", number_or_null(s.health.announce_rate)},
                        {"progress_p25", progress_json(s.health.progress_p25)},
                        {"progress_median", progress_json(s.health.progress_median)},
                        {"progress_p75", progress_json(s.health.progress_p75)},
                        {"age_seconds", age_seconds(s.health.at)}};
  j["knobs"] = {{"policy", std::string(to_string(s.knobs.policy))},
                {"interval_scale", s.knobs.interval_scale},
                {"leecher_interval_scale", s.knobs.leecher_interval_scale},
                {"seeder_warning", s.knobs.seeder_warning},
                {"quarantine_strict", s.knobs.quarantine_strict}};
  j["interval"] = {
      {"base_seconds", cfg.announce_interval.count()},
      {"min_seconds", cfg.min_interval.count()},
      {"scaled_seconds",
       static_cast<std::int64_t>(std::llround(static_cast<double>(cfg.announce_interval.count()) *
                                              s.knobs.interval_scale))}};
  json history = json::array();
  for (const auto& r : s.history) history.push_back(record_json(r));
  j["remediation_history"] = std::move(history);
  return j;
}

json ban_json(const ban_rule& r) {
  return {{"prefix", escape_ban_prefix(r.prefix)}, {"reason", r.reason}};
}

json migration_json(const cluster::migration_record& r) {
  return {{"from", r.from.empty() ? json(nullptr) : json(r.from)},
          {"to", r.to},
          {"hash", r.hash},
          {"reason", r.reason},
          {"finished_ms", r.finished_ms},
          {"peers", r.peers}};
}

json udp_requests_json(const udp_counters& c, std::size_t in_flight) {
  return {{"received", c.received},
          {"replied", c.replied},
          {"connects", c.connects},
          {"announces", c.announces},
          {"scrapes", c.scrapes},
          {"error_replies", c.error_replies},
          {"swarm_failures", c.swarm_failures},
          {"dropped", c.dropped()},
          {"in_flight", in_flight}};
}

}  // namespace sk::admin_api
