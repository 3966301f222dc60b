#pragma once
/// The operator's list of info_hashes the tracker serves (allow mode) or
/// refuses (deny mode): `[access] mode = off|allow|deny`, `file = PATH`.
///
/// Two parts:
/// - `access_list`: the set itself and its file format (pure, no I/O but
///   what `load_access_file` / `save_access_file` do).
/// - `access_control`: the node-wide live state every front end checks
///   before routing (a refused hash never reaches the directory, so it never
///   spawns a swarm). Mode off costs one relaxed atomic load and a branch;
///   allow/deny cost one acquire load (the list's version) and a hash-set
///   lookup (see snapshot_cell.hpp).
///
/// File format: one info_hash per line as 40 hex digits (either case);
/// blank lines and lines whose first non-blank character is '#' are
/// ignored; spaces and tabs around a hash are allowed; anything else is an
/// error naming the line ("line 7: 'abc' is not 40 hex digits").
///
///   # torrents of the 2026 release
///   0123456789abcdef0123456789abcdef01234567
///   89ABCDEF0123456789ABCDEF0123456789ABCDEF

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "tracker/snapshot_cell.hpp"
#include "protocol/types.hpp"

namespace sk {

/// `[access] mode`.
enum class access_mode : std::uint8_t {
  off,    ///< every hash is served (the default)
  allow,  ///< only listed hashes are served
  deny,   ///< listed hashes are refused
};

/// "off", "allow", "deny".
const char* to_string(access_mode m) noexcept;
/// Inverse of `to_string`; nullopt for anything else.
std::optional<access_mode> parse_access_mode(std::string_view text) noexcept;

/// A set of info_hashes with the file format above.
class access_list {
 public:
  bool contains(const info_hash& h) const noexcept { return set_.count(h) != 0; }
  /// False when already listed.
  bool add(const info_hash& h) { return set_.insert(h).second; }
  /// False when not listed.
  bool remove(const info_hash& h) { return set_.erase(h) != 0; }
  std::size_t size() const noexcept { return set_.size(); }
  /// Every hash, sorted (stable files and API answers).
  std::vector<info_hash> sorted() const;

  /// Parses file content; nullopt and one sentence in `error` naming the
  /// first bad line (1-based).
  static std::optional<access_list> parse(std::string_view text, std::string* error);
  /// File content: a comment line, then one lower-case hash per line, sorted.
  std::string to_text() const;

 private:
  std::unordered_set<info_hash, id20_hasher> set_;
};

/// Reads and parses `path`; errors name the file (and line).
std::optional<access_list> load_access_file(const std::string& path, std::string* error);
/// Writes `list` to `path` atomically: a temporary file next to it, fsync,
/// rename over the original (a crash leaves the old or the new file, never
/// half of one). False with `error` set on failure (the old file stays).
bool save_access_file(const std::string& path, const access_list& list, std::string* error);

/// The node-wide access state. Thread-safe; `allowed` is the hot path.
class access_control {
 public:
  /// Mode and file are fixed for the process (config); the list changes.
  access_control(access_mode mode, std::string file, access_list initial = {});

  access_mode mode() const noexcept { return mode_.load(std::memory_order_relaxed); }
  const std::string& file() const noexcept { return file_; }

  /// Whether announces and scrapes of `h` are served. Any thread. Off: one
  /// relaxed load and a branch.
  bool allowed(const info_hash& h) const noexcept {
    const access_mode m = mode_.load(std::memory_order_relaxed);
    if (m == access_mode::off) return true;
    return check(m, h);
  }

  /// The current list (a snapshot).
  std::shared_ptr<const access_list> snapshot() const { return cell_.load(); }

  /// What `set_allowed` and `reload` report.
  struct change_result {
    bool ok = false;
    /// Why not (mode off, no file, file error); empty when ok.
    std::string error;
  };

  /// Makes `h` served (`allow` true) or refused: in allow mode adds/removes
  /// it, in deny mode removes/adds it; then, when a file is configured,
  /// writes the list back (atomically) so a reload keeps the change. Fails
  /// in mode off. A failed write keeps the change in memory and reports it.
  change_result set_allowed(const info_hash& h, bool allow);
  /// Re-reads the file (SIGHUP, the admin API). On any error the old list
  /// stays in force and the error is returned. Fails without a file.
  change_result reload();
  /// Puts `list` in force whole (the state file's list, for a node without
  /// an access file); writes nothing.
  void restore(access_list list);

  /// Announces / scrape hashes refused so far (the front ends count).
  std::atomic<std::uint64_t> refused_http_announces{0};
  std::atomic<std::uint64_t> refused_http_scrapes{0};
  std::atomic<std::uint64_t> refused_udp_announces{0};
  std::atomic<std::uint64_t> refused_udp_scrapes{0};

 private:
  bool check(access_mode m, const info_hash& h) const noexcept;

  std::atomic<access_mode> mode_;
  const std::string file_;
  std::mutex write_mutex_;  ///< writers only (admin actor, SIGHUP)
  snapshot_cell<access_list> cell_;
};

}  // namespace sk
