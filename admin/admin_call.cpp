#include "admin/admin_call.hpp"

#include <algorithm>

#include "protocol/text.hpp"

namespace sk::admin_api {

void fan_out_status(actor_ptr self, const state_ptr& sh, swarm_list swarms,
                    std::function<void(status_list&&)> done) {
  struct join_state {
    status_list results;
    std::size_t pending = 0;
    std::function<void(status_list&&)> done;
  };
  auto st = std::make_shared<join_state>();
  st->pending = swarms.size();
  st->done = std::move(done);
  if (swarms.empty()) {
    st->done(std::move(st->results));
    return;
  }
  st->results.reserve(swarms.size());
  for (auto& [hash, swarm] : swarms) {
    const caf::actor_id id = swarm.id();
    self->request(swarm, sh->cfg.actor_timeout, status_atom::value)
        .then(
            [st, id](swarm_status& s) {
              st->results.emplace_back(id, std::move(s));
              if (--st->pending == 0) st->done(std::move(st->results));
            },
            [st](caf::error&) {
              if (--st->pending == 0) st->done(std::move(st->results));
            });
  }
}

void fan_out_status(actor_ptr self, const state_ptr& sh,
                    std::vector<std::pair<info_hash, local_swarm_actor>> swarms,
                    std::function<void(status_list&&)> done) {
  swarm_list list;
  list.reserve(swarms.size());
  for (auto& [hash, swarm] : swarms) list.emplace_back(hash, swarm_interface{swarm});
  fan_out_status(self, sh, std::move(list), std::move(done));
}

void fan_out_status(actor_ptr self, const state_ptr& sh,
                    std::vector<std::pair<info_hash, caf::actor>> swarms,
                    std::function<void(status_list&&)> done) {
  swarm_list list;
  list.reserve(swarms.size());
  for (auto& [hash, swarm] : swarms)
    list.emplace_back(hash, caf::actor_cast<swarm_interface>(swarm));
  fan_out_status(self, sh, std::move(list), std::move(done));
}

std::optional<std::string> url_decode(std::string_view in, bool plus_is_space) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = hex_digit(in[i + 1]);
      const int lo = hex_digit(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return out;
}

std::optional<query_map> parse_query(std::string_view q, std::initializer_list<const char*> allowed,
                                     std::string& error) {
  query_map out;
  std::size_t pos = 0;
  while (pos <= q.size() && !q.empty()) {
    const std::size_t amp = q.find('&', pos);
    const std::string_view part =
        q.substr(pos, amp == std::string_view::npos ? std::string_view::npos : amp - pos);
    if (!part.empty()) {
      const std::size_t eq = part.find('=');
      auto key = url_decode(part.substr(0, eq));
      auto value =
          url_decode(eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1));
      if (!key || !value) {
        error = "malformed query string";
        return std::nullopt;
      }
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return *key == a; })) {
        error = "unknown query parameter '" + *key + "'";
        return std::nullopt;
      }
      out[*key] = *value;
    }
    if (amp == std::string_view::npos) break;
    pos = amp + 1;
  }
  return out;
}

std::optional<std::size_t> parse_count(const std::string& text, std::size_t max) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::size_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  if (v > max) return std::nullopt;
  return v;
}

void reply_swarm_error(const job_ptr& job, const info_hash& hash, const caf::error& err) {
  if (err == caf::sec::request_receiver_down)
    job->reply_error(503, "swarm " + hash.hex() + " is restarting; retry");
  else if (err == caf::sec::cannot_forward_to_invalid_actor)
    job->reply_error(404, "no swarm for " + hash.hex());
  else
    job->reply_error(504, "swarm " + hash.hex() + " did not answer");
}

void record_event(const admin_state& sh, const info_hash& hash, std::string kind,
                  std::string detail) {
  if (const supervisor_actor& sup = sh.dir->supervisor_handle())
    caf::anon_send(sup, events_atom::value, caf::put_atom::value,
                   supervisor_event{{}, hash, std::move(kind), std::move(detail)});
}

}  // namespace sk::admin_api
