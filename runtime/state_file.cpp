#include "runtime/state_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

namespace sk::state_file {

namespace {

constexpr char magic[8] = {'S', 'K', 'S', 'T', 'A', 'T', 'E', '\n'};
constexpr std::size_t header_size = 8 + 4 + 4 + 8;
constexpr std::size_t frame_size = 1 + 4;
constexpr std::uint32_t trailer_length = 16;

enum kind : std::uint8_t { k_swarm = 1, k_bans = 2, k_holds = 3, k_access = 4, k_trailer = 0xFF };

void put_u32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_u64(char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::uint32_t crc_update(std::uint32_t crc, const void* data, std::size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    const auto chunk = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    crc = static_cast<std::uint32_t>(::crc32(crc, p, chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

bool fsync_dir(const std::string& dir, std::string* error) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = errno_text("cannot open directory", dir);
    return false;
  }
  const bool ok = ::fsync(fd) == 0;
  if (!ok && error) *error = errno_text("cannot fsync directory", dir);
  ::close(fd);
  return ok;
}

template <class T>
bool decode(const char* data, std::size_t n, T& out) {
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), data, n};
  if (auto err = source(out)) return false;
  return source.remaining() == 0;
}

/// A swarm record of a file of version `v`.
bool decode_swarm(std::uint32_t v, const char* data, std::size_t n, swarm_snapshot& out) {
  if (v >= 3) return decode(data, n, out);
  swarm_snapshot_v2 old{out};
  return decode(data, n, old);
}

std::string utc_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace

std::string path_in(const std::string& dir) { return dir + "/" + file_name; }

writer::writer(std::string dir, std::FILE* f)
    : dir_(std::move(dir)), file_(f), crc_(static_cast<std::uint32_t>(::crc32(0L, Z_NULL, 0))) {}

writer::~writer() {
  if (file_) std::fclose(file_);
  if (!committed_) ::unlink((dir_ + "/" + temp_name).c_str());
}

std::unique_ptr<writer> writer::open(const std::string& dir, std::int64_t written_unix_ms,
                                     std::string* error) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    if (error) *error = errno_text("cannot create state directory", dir);
    return nullptr;
  }
  const std::string tmp = dir + "/" + temp_name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (error) *error = errno_text("cannot create", tmp);
    return nullptr;
  }
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    if (error) *error = errno_text("cannot open", tmp);
    ::close(fd);
    return nullptr;
  }
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  std::unique_ptr<writer> w{new writer(dir, f)};
  char header[header_size];
  std::memcpy(header, magic, sizeof magic);
  put_u32(header + 8, version);
  put_u32(header + 12, 0);
  put_u64(header + 16, static_cast<std::uint64_t>(written_unix_ms));
  if (!w->put(header, sizeof header)) {
    if (error) *error = errno_text("cannot write", tmp);
    return nullptr;
  }
  return w;
}

bool writer::put(const void* data, std::size_t n) {
  if (failed_) return false;
  if (std::fwrite(data, 1, n, file_) != n) {
    failed_ = true;
    return false;
  }
  crc_ = crc_update(crc_, data, n);
  bytes_ += n;
  return true;
}

template <class T>
bool writer::record(std::uint8_t k, const T& value) {
  buffer_.clear();
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buffer_};
  if (auto err = sink(const_cast<T&>(value))) {
    failed_ = true;
    return false;
  }
  if (buffer_.size() > UINT32_MAX) {
    failed_ = true;
    return false;
  }
  char frame[frame_size];
  frame[0] = static_cast<char>(k);
  put_u32(frame + 1, static_cast<std::uint32_t>(buffer_.size()));
  if (!put(frame, sizeof frame) || !put(buffer_.data(), buffer_.size())) return false;
  ++records_;
  return true;
}

bool writer::add(const swarm_snapshot& s) {
  if (!record(k_swarm, s)) return false;
  ++swarms_;
  peers_ += s.peers.size();
  return true;
}

bool writer::add(const std::vector<ban_rule>& bans) {
  std::vector<std::pair<std::string, std::string>> rules;
  rules.reserve(bans.size());
  for (const auto& r : bans) rules.emplace_back(r.prefix, r.reason);
  return record(k_bans, rules);
}

bool writer::add(const supervisor_holds& holds) { return record(k_holds, holds); }

bool writer::add(const access_record& access) {
  return record(k_access, std::make_pair(access.mode, access.hashes));
}

bool writer::commit(std::string* error) {
  const std::string tmp = dir_ + "/" + temp_name;
  char trailer[frame_size + trailer_length];
  trailer[0] = static_cast<char>(k_trailer);
  put_u32(trailer + 1, trailer_length);
  put_u64(trailer + 5, records_);
  put_u32(trailer + 13, crc_);
  put_u32(trailer + 17, 0);
  if (failed_ || std::fwrite(trailer, 1, sizeof trailer, file_) != sizeof trailer) {
    if (error) *error = errno_text("cannot write", tmp);
    return false;
  }
  bytes_ += sizeof trailer;
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    if (error) *error = errno_text("cannot flush", tmp);
    return false;
  }
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) {
    if (error) *error = errno_text("cannot close", tmp);
    return false;
  }
  if (::rename(tmp.c_str(), path_in(dir_).c_str()) != 0) {
    if (error) *error = errno_text("cannot rename " + tmp + " to", path_in(dir_));
    return false;
  }
  committed_ = true;
  return fsync_dir(dir_, error);
}

read_result read_bytes(const std::vector<char>& bytes, const sink& out) {
  read_result r;
  r.status = read_result::outcome::refused;
  r.bytes = bytes.size();
  auto refuse = [&](std::string why) {
    r.problem = std::move(why);
    r.swarms = r.peers = 0;
    return r;
  };
  if (bytes.empty()) return refuse("the file is empty");
  if (bytes.size() < header_size || std::memcmp(bytes.data(), magic, sizeof magic) != 0)
    return refuse("not a swarmkeeper state file (bad magic)");
  const std::uint32_t v = get_u32(bytes.data() + 8);
  if (v < oldest_version || v > version)
    return refuse("state file version " + std::to_string(v) + ", this build reads versions " +
                  std::to_string(oldest_version) + " to " + std::to_string(version));
  r.written_unix_ms = static_cast<std::int64_t>(get_u64(bytes.data() + 16));

  // Pass 1: framing, trailer, CRC, and that every record decodes.
  struct span {
    std::uint8_t kind;
    std::size_t at;
    std::size_t length;
  };
  std::vector<span> records;
  std::size_t at = header_size;
  bool trailer_seen = false;
  std::uint64_t peers = 0, swarms = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < frame_size) return refuse("truncated (a record frame is cut)");
    const auto k = static_cast<std::uint8_t>(bytes[at]);
    const std::size_t length = get_u32(bytes.data() + at + 1);
    if (bytes.size() - at - frame_size < length) return refuse("truncated (a record is cut)");
    if (k == k_trailer) {
      if (length != trailer_length) return refuse("bad trailer");
      const char* t = bytes.data() + at + frame_size;
      const std::uint64_t count = get_u64(t);
      const std::uint32_t crc = get_u32(t + 8);
      const std::uint32_t computed = crc_update(
          static_cast<std::uint32_t>(::crc32(0L, Z_NULL, 0)), bytes.data(), at);
      if (crc != computed) return refuse("checksum mismatch (the file was changed or damaged)");
      if (count != records.size()) return refuse("record count mismatch");
      if (get_u32(t + 12) != 0) return refuse("bad trailer");
      if (at + frame_size + length != bytes.size()) return refuse("bytes after the trailer");
      trailer_seen = true;
      break;
    }
    records.push_back({k, at + frame_size, length});
    at += frame_size + length;
  }
  if (!trailer_seen) return refuse("truncated (no trailer)");
  for (const auto& s : records) {
    const char* p = bytes.data() + s.at;
    switch (s.kind) {
      case k_swarm: {
        swarm_snapshot snap;
        if (!decode_swarm(v, p, s.length, snap)) return refuse("a swarm record does not decode");
        ++swarms;
        peers += snap.peers.size();
        break;
      }
      case k_bans: {
        std::vector<std::pair<std::string, std::string>> rules;
        if (!decode(p, s.length, rules)) return refuse("the ban list record does not decode");
        break;
      }
      case k_holds: {
        supervisor_holds h;
        if (!decode(p, s.length, h)) return refuse("the holds record does not decode");
        break;
      }
      case k_access: {
        if (v < 2) return refuse("unknown record kind 4 in a version 1 file");
        std::pair<std::string, std::vector<info_hash>> a;
        if (!decode(p, s.length, a)) return refuse("the access list record does not decode");
        break;
      }
      default:
        return refuse("unknown record kind " + std::to_string(s.kind));
    }
  }

  // Pass 2: everything checked; hand the records out.
  if (out.begin) out.begin(r.written_unix_ms);
  for (const auto& s : records) {
    const char* p = bytes.data() + s.at;
    if (s.kind == k_swarm) {
      swarm_snapshot snap;
      decode_swarm(v, p, s.length, snap);
      // Bits that decode to an infinity or NaN are no progress or rate any
      // swarm computed: made finite like every write makes them.
      make_finite(snap);
      if (out.swarm) out.swarm(std::move(snap));
    } else if (s.kind == k_bans) {
      std::vector<std::pair<std::string, std::string>> rules;
      decode(p, s.length, rules);
      std::vector<ban_rule> bans;
      bans.reserve(rules.size());
      for (auto& [prefix, reason] : rules) bans.push_back({std::move(prefix), std::move(reason)});
      if (out.bans) out.bans(std::move(bans));
    } else if (s.kind == k_holds) {
      supervisor_holds h;
      decode(p, s.length, h);
      if (out.holds) out.holds(std::move(h));
    } else if (s.kind == k_access) {
      std::pair<std::string, std::vector<info_hash>> a;
      decode(p, s.length, a);
      if (out.access) out.access(access_record{std::move(a.first), std::move(a.second)});
    }
  }
  r.status = read_result::outcome::loaded;
  r.swarms = swarms;
  r.peers = peers;
  return r;
}

read_result read(const std::string& dir, const sink& out) {
  const std::string path = path_in(dir);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return {};  // absent: a first start
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    read_result r;
    r.status = read_result::outcome::refused;
    r.problem = errno_text("cannot open", path);
    return r;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    read_result r;
    r.status = read_result::outcome::refused;
    r.problem = "cannot read " + path;
    return r;
  }
  return read_bytes(bytes, out);
}

std::string move_aside(const std::string& dir, std::string* error) {
  const std::string from = path_in(dir);
  const std::string base = from + ".bad-" + utc_stamp();
  std::string to = base;
  struct stat st {};
  for (int n = 1; ::stat(to.c_str(), &st) == 0; ++n) to = base + "-" + std::to_string(n);
  if (::rename(from.c_str(), to.c_str()) != 0) {
    if (error) *error = errno_text("cannot move aside", from);
    return {};
  }
  return to;
}

}  // namespace sk::state_file
