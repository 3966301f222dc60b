#pragma once
/// The daemon's configuration: one documented option tree with defaults,
/// read from a config file (CAF's INI format) and the command line, checked
/// strictly, and printed by `--dump-config`.
///
/// Precedence: embedded defaults < config file (`--config-file=FILE`) <
/// command line. Unlike plain CAF 0.17, which stores unknown INI keys and
/// silently drops INI values of the wrong type, every key of the file must be
/// a known option of the right type, and every value is range-checked before
/// anything starts.

#include <chrono>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_system_config.hpp>

#include "actors/cluster/cluster_config.hpp"
#include "actors/access_list.hpp"
#include "actors/supervisor.hpp"
#include "actors/swarm_config.hpp"
#include "net/admin_server.hpp"
#include "net/http_server.hpp"
#include "net/reachability_prober.hpp"
#include "net/gateway.hpp"
#include "net/udp_server.hpp"

namespace sk {

/// Everything the daemon reads from its configuration, validated.
struct daemon_settings {
  http_server_config http;
  /// What the gateway takes from [http] (request-timeout; lanes = I/O
  /// threads); the rest of its settings come from [http], [udp] and [access].
  struct {
    std::chrono::milliseconds request_timeout{5000};
    std::size_t lanes = 1;
  } bridge;
  /// Per-swarm settings, the self-healing ones included ([tracker],
  /// [clients], [health], [allocation], remediation.history-size).
  swarm_config swarm;
  /// The supervisor and remediation ([supervisor], [remediation]).
  supervisor_config supervisor;
  /// `udp.enable`: serve the UDP tracker at all.
  bool udp_enabled = true;
  /// The UDP tracker; `bind` already falls back to http.bind.
  udp_config udp;
  /// `probe.enable`: run the reachability prober (swarms probe only then;
  /// the per-swarm decisions are in `swarm.probe`).
  bool probe_enabled = false;
  /// The prober ([probe]); `cooldown` is probe.reprobe-after.
  prober_config probe;
  /// `admin.port` != 0: run the admin API (then `admin.token` is set).
  bool admin_enabled = false;
  /// The admin API ([admin]); the token already read from token-file.
  admin_config admin;
  /// The cluster ([cluster]); off unless `cluster.port` is set (then the
  /// secret is read from secret-file, and udp.connection-id-key, when
  /// empty, is derived from it).
  cluster::cluster_config cluster;
  /// The info_hash access list ([access]); also in `http`, `udp` and
  /// `admin` (one shared object). Never null after a successful load.
  std::shared_ptr<access_control> access;
  /// spdlog level name: trace, debug, info, warn, error, critical, off.
  std::string log_level = "info";
  /// How long SIGINT/SIGTERM waits for open requests before stopping.
  std::chrono::milliseconds drain_timeout{10000};
};

/// The CAF config with swarmkeeper's options registered.
class swarmkeeper_config : public caf::actor_system_config {
 public:
  swarmkeeper_config();

  /// Exposes the option set (validation walks it).
  const caf::config_option_set& options() const noexcept { return custom_options_; }
};

/// What `load_config` decided.
enum class load_action {
  run,         ///< settings are valid: start the daemon
  exit_ok,     ///< --help or --dump-config was served: exit 0
  exit_error,  ///< a message went to `err`: exit non-zero
};

/// Parses `argv` (and the file named by `--config-file=FILE`) into `cfg` and
/// `out`. Writes help and `--dump-config` output to `out_stream`, every
/// problem to `err_stream` (all of them, one per line, each naming the
/// option).
load_action load_config(int argc, char** argv, swarmkeeper_config& cfg, daemon_settings& out,
                        std::ostream& out_stream, std::ostream& err_stream);

/// Every option of the option table with its effective value as text,
/// secrets (`udp.connection-id-key`, `admin.token`) shown as "<redacted>"
/// when set: what the admin API reports.
std::vector<std::pair<std::string, std::string>> redacted_config(const swarmkeeper_config& cfg);

/// The effective configuration in config-file syntax, every option with its
/// description as a comment (what `--dump-config` prints). Loading it back
/// with `--config-file` yields the same configuration.
std::string dump_config(const swarmkeeper_config& cfg);

}  // namespace sk
