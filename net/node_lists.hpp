#pragma once
/// The node-wide lists that change while the daemon runs: the info_hash
/// access list (`[access]`) and the banned peer_id prefixes
/// (`clients.banned`). They are live state, not settings: the admin API and
/// SIGHUP change them, every front end and every swarm reads them. One
/// `node_lists` per process, built in main from what the configuration read
/// at start, and handed out in parts:
///
///   node_lists ─ access() ─▶ gateway (checked before routing), admin API
///              └ bans()  ──▶ the directory (`node_shared`, beside the swarm
///                            config, never in it) ─▶ every swarm's settings;
///                            the admin API reads it back from the directory
///
/// Both parts are shared_ptrs because the structs that carry them to the
/// swarms and the admin API hold shared_ptrs; the holder keeps them alive
/// for the whole run and neither is ever null.

#include <memory>
#include <string>
#include <utility>

#include "tracker/access_list.hpp"
#include "tracker/client_id.hpp"

namespace sk {

/// What the lists hold at start, read and checked with the configuration
/// (a bad access file or ban list stops the daemon before anything runs).
struct initial_lists {
  /// `access.mode`.
  access_mode mode = access_mode::off;
  /// `access.file`: re-read on SIGHUP and written back by the admin API;
  /// empty: the access list lives in memory only.
  std::string access_file;
  /// The access file's content at start (empty without a file).
  access_list access;
  /// `clients.banned`.
  client_ban_list bans;
};

/// The node's live lists. Not copyable: there is one per process.
class node_lists {
 public:
  explicit node_lists(initial_lists initial)
      : access_(std::make_shared<access_control>(initial.mode, std::move(initial.access_file),
                                                 std::move(initial.access))),
        bans_(std::make_shared<live_ban_list>(std::move(initial.bans))) {}
  node_lists(const node_lists&) = delete;
  node_lists& operator=(const node_lists&) = delete;

  /// The info_hash access list (never null).
  const std::shared_ptr<access_control>& access() const noexcept { return access_; }
  /// The banned peer_id prefixes (never null).
  const std::shared_ptr<live_ban_list>& bans() const noexcept { return bans_; }

 private:
  const std::shared_ptr<access_control> access_;
  const std::shared_ptr<live_ban_list> bans_;
};

}  // namespace sk
