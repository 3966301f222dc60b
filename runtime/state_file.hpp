#pragma once
/// The state file of one node (`state.dir`): every swarm this node owns,
/// the ban list, the supervisor's operator holds and (without an access
/// file) the access list, written on SIGTERM and
/// every `state.snapshot-period`, read once at start.
///
/// Layout (integers little-endian):
///
///   header   "SKSTATE\n"  u32 version  u32 0  i64 written (Unix ms)
///   record   u8 kind  u32 length  payload     (CAF binary serialization)
///   ...
///   trailer  u8 0xFF  u32 16  u64 records  u32 crc32  u32 0
///
/// The CRC-32 (zlib) covers every byte before the trailer. A file is
/// trusted only whole: the reader checks the framing, the trailer, the CRC
/// and that every record decodes before it hands out the first one. Writes
/// go to a temporary file that is fsynced, renamed over the old one, and
/// the directory fsynced, so a crash leaves the old file or the new one.
/// A file that fails any check is moved aside (never deleted).

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/supervisor_interface.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "tracker/client_id.hpp"

namespace sk {

namespace state_file {

/// The version this build writes, and the oldest it still reads. Record
/// kinds: 1 a swarm, 2 the ban list, 3 the supervisor's holds (since 1);
/// 4 the access list (since 2). Since 3 a swarm record ends with the
/// remediation under way and the lineage (`swarm_snapshot::remediation`,
/// `lineage`); versions 1 and 2 are read with their shorter swarm record
/// (`swarm_snapshot_v2`: lineage 0).
constexpr std::uint32_t version = 3;
constexpr std::uint32_t oldest_version = 1;
/// The file inside the state directory, and its temporary sibling.
constexpr const char* file_name = "swarmkeeper.state";
constexpr const char* temp_name = "swarmkeeper.state.tmp";

std::string path_in(const std::string& dir);

/// The access list as the admin API left it, kept for a node that has no
/// access file (with one, the file holds every change): the mode it was
/// made for and its hashes.
struct access_record {
  std::string mode;
  std::vector<info_hash> hashes;
};

/// Streams one state file. Not thread-safe.
class writer {
 public:
  /// Opens the temporary file in `dir` (created if missing, mode 0700).
  /// Null with `error` set when that fails.
  static std::unique_ptr<writer> open(const std::string& dir, std::int64_t written_unix_ms,
                                      std::string* error);
  ~writer();
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;

  bool add(const swarm_snapshot& s);
  bool add(const std::vector<ban_rule>& bans);
  bool add(const supervisor_holds& holds);
  bool add(const access_record& access);

  /// Trailer, fsync, rename over the state file, fsync of the directory.
  /// False with `error` set (the old state file stays).
  bool commit(std::string* error);

  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t swarms() const noexcept { return swarms_; }
  std::uint64_t peers() const noexcept { return peers_; }

 private:
  writer(std::string dir, std::FILE* f);
  bool put(const void* data, std::size_t n);
  template <class T>
  bool record(std::uint8_t kind, const T& value);

  std::string dir_;
  std::FILE* file_;
  std::vector<char> buffer_;
  std::uint32_t crc_;
  std::uint64_t bytes_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t swarms_ = 0;
  std::uint64_t peers_ = 0;
  bool failed_ = false;
  bool committed_ = false;
};

/// What reading found.
struct read_result {
  enum class outcome {
    /// No state file: a first start.
    absent,
    /// Every record checked and handed out.
    loaded,
    /// The file failed a check (`problem` says which); nothing was handed
    /// out.
    refused,
  };
  outcome status = outcome::absent;
  std::string problem;
  std::int64_t written_unix_ms = 0;
  std::uint64_t bytes = 0;
  std::uint64_t swarms = 0;
  std::uint64_t peers = 0;
};

/// Where `read` hands the records of a file it checked.
struct sink {
  /// Once the whole file is checked, before the first record: when the
  /// file was written (Unix ms).
  std::function<void(std::int64_t written_unix_ms)> begin;
  std::function<void(swarm_snapshot&&)> swarm;
  std::function<void(std::vector<ban_rule>&&)> bans;
  std::function<void(supervisor_holds&&)> holds;
  std::function<void(access_record&&)> access;
};

/// Reads the state file of `dir` (see the layout above): checks it whole
/// first, then hands every record to `out` in file order.
read_result read(const std::string& dir, const sink& out);

/// Checks and decodes a file image in memory (what `read` does after
/// loading the file; the fuzz target's entry point).
read_result read_bytes(const std::vector<char>& bytes, const sink& out);

/// Moves a refused state file aside, next to it, as
/// `swarmkeeper.state.bad-<UTC time>[-n]`. The new path, or empty with
/// `error` set.
std::string move_aside(const std::string& dir, std::string* error);

}  // namespace state_file

}  // namespace sk
