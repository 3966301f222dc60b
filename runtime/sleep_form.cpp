/// A sleeping swarm's bytes (`pack_snapshot`, `unpack_snapshot`): the form a
/// quiet swarm takes in its directory shard, made when it falls asleep and
/// read when the next message wakes it. Under clients' pace most announces
/// find their swarm asleep, so each pays one sleep and one wake; this form is
/// built for that, where the state file's record (`encode_snapshot`) is
/// built to be read by a later version.
///
/// Inner layout (never leaves the process, so it carries no version):
///
///   varint  size of the rare fields
///   bytes   the rare fields in CAF's binary encoding: knobs, remediation
///           history, remediation under way, last health report
///   bytes   hash (20), PRNG seed and lineage (8 each, native order)
///   varints counters (count first), downloaded
///   u8      evaluated
///   varints the health window: bucket ages (zigzag) and counts (count
///           first each), torrent size, watched (zigzag), raw state (u8),
///           raw reasons, better streak, absent streaks (count first)
///   varint  peer count
///   peer*   each as below
///
/// A peer:
///
///   u8      bits: 1 IPv6, 2 progress set (else -1), 4 completed set,
///           8 key as 8 upper-case hex digits, 16 as 8 lower-case ones
///   u8      how many leading bytes its id shares with the peer before
///   bytes   the rest of the id
///   bytes   address (4 or 16), port (2, big-endian)
///   varint  left, uploaded, downloaded
///   key     4 bytes (hex forms), else varint length and the bytes
///   zigzag  last announce age; first seen, last progress and (if set)
///           completed ages as differences from it
///   varint  announces, announces without progress, early announces, strikes
///   f32     progress (if set)
///   u8      flags
///
/// Then the whole is compressed by zstd against a dictionary: the inner
/// form of a typical young swarm, made once per process, which holds what
/// most swarms share (knobs, empty history, the report's and the window's
/// usual values) so that it costs a few bytes. Level -1: it leaves the
/// literals (peer ids and addresses, which are random) as they are, where
/// level 1 spends more time building their Huffman table than the rest of
/// the compression and saves nothing on a ten-peer swarm.

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "protocol/text.hpp"
#include "runtime/swarm_snapshot.hpp"

namespace sk {

namespace {

/// The fields of a snapshot that are rarely other than their defaults (the
/// knobs, the remediation history, a remediation under way) and the last
/// health report, for CAF's serializer.
struct snapshot_rare {
  swarm_snapshot& s;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot_rare& x) {
  return f(caf::meta::type_name("swarm_rare"), x.s.knobs, x.s.history, x.s.remediation,
           x.s.health.last);
}

enum peer_bits : std::uint8_t {
  bit_v6 = 1,
  bit_progress = 2,
  bit_completed = 4,
  bit_key_upper_hex = 8,
  bit_key_lower_hex = 16,
};

/// Appends to a buffer that grows by doubling and is cut to the written
/// size by `finish`: one bounds check per field instead of one per byte.
class writer {
 public:
  explicit writer(std::vector<char>& buf) : buf_(buf), n_(buf.size()) {}

  void byte(std::uint8_t b) {
    need(1);
    buf_[n_++] = static_cast<char>(b);
  }
  void bytes(const void* p, std::size_t k) {
    need(k);
    if (k != 0) std::memcpy(buf_.data() + n_, p, k);
    n_ += k;
  }
  void varint(std::uint64_t v) {
    need(10);
    while (v >= 0x80) {
      buf_[n_++] = static_cast<char>(static_cast<std::uint8_t>(v) | 0x80);
      v >>= 7;
    }
    buf_[n_++] = static_cast<char>(v);
  }
  void finish() { buf_.resize(n_); }

 private:
  void need(std::size_t k) {
    if (n_ + k > buf_.size()) buf_.resize(std::max({buf_.size() * 2, n_ + k, std::size_t{512}}));
  }
  std::vector<char>& buf_;
  std::size_t n_;
};

std::uint64_t zigzag(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

std::int64_t unzigzag(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

/// Differences of ages and their sums back, modulo 2^64: any two ages
/// round-trip, and damaged bytes cannot overflow a signed value.
std::int64_t wrapping_sub(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

std::int64_t wrapping_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

/// `key` as 4 bytes when it is 8 hex digits of one case (what most clients
/// send; digits alone count as upper case); the case's bit, or 0.
std::uint8_t hex_key(const std::string& key, std::uint8_t (&out)[4]) noexcept {
  if (key.size() != 8) return 0;
  bool upper = false;
  bool lower = false;
  for (std::size_t i = 0; i < 8; ++i) {
    const char c = key[i];
    const int d = hex_digit(c);
    if (d < 0) return 0;
    upper = upper || (c >= 'A' && c <= 'F');
    lower = lower || (c >= 'a' && c <= 'f');
    out[i / 2] = static_cast<std::uint8_t>(i % 2 == 0 ? d << 4 : out[i / 2] | d);
  }
  if (upper && lower) return 0;
  return lower ? bit_key_lower_hex : bit_key_upper_hex;
}

void put_peer(writer& out, const peer_snapshot& p, const peer_snapshot* before) {
  std::uint8_t bits = 0;
  if (p.ep.ip.v6) bits |= bit_v6;
  static const float unset = -1.0f;
  const bool progress = std::memcmp(&p.progress, &unset, sizeof unset) != 0;
  if (progress) bits |= bit_progress;
  if (p.completed_age_ms != -1) bits |= bit_completed;
  std::uint8_t key4[4];
  bits |= hex_key(p.key, key4);
  out.byte(static_cast<std::uint8_t>(bits));

  std::size_t shared = 0;
  if (before != nullptr)
    while (shared < peer_id::size && p.id.bytes[shared] == before->id.bytes[shared]) ++shared;
  out.byte(static_cast<std::uint8_t>(shared));
  out.bytes(p.id.bytes.data() + shared, peer_id::size - shared);

  out.bytes(p.ep.ip.bytes.data(), p.ep.ip.v6 ? 16 : 4);
  out.byte(static_cast<std::uint8_t>(p.ep.port >> 8));
  out.byte(static_cast<std::uint8_t>(p.ep.port & 0xff));

  out.varint(p.left);
  out.varint(p.uploaded);
  out.varint(p.downloaded);

  if ((bits & (bit_key_upper_hex | bit_key_lower_hex)) != 0) {
    out.bytes(key4, 4);
  } else {
    out.varint(p.key.size());
    out.bytes(p.key.data(), p.key.size());
  }

  const std::int64_t last = p.last_announce_age_ms;
  out.varint(zigzag(last));
  out.varint(zigzag(wrapping_sub(p.first_seen_age_ms, last)));
  out.varint(zigzag(wrapping_sub(p.last_progress_age_ms, last)));
  if (p.completed_age_ms != -1) out.varint(zigzag(wrapping_sub(p.completed_age_ms, last)));

  out.varint(p.announces);
  out.varint(p.announces_without_progress);
  out.varint(p.early_announces);
  out.varint(p.strikes);
  if (progress) out.bytes(&p.progress, sizeof p.progress);
  out.byte(static_cast<std::uint8_t>(p.flags));
}

/// Reads the inner form; every read is bounds-checked, and any fault makes
/// the reader false for good.
class reader {
 public:
  reader(const char* p, std::size_t n) noexcept : p_(p), end_(p + n) {}

  bool ok() const noexcept { return ok_; }
  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - p_); }

  const char* take(std::size_t n) noexcept {
    if (!ok_ || remaining() < n) {
      ok_ = false;
      return nullptr;
    }
    const char* at = p_;
    p_ += n;
    return at;
  }

  std::uint8_t byte() noexcept {
    const char* at = take(1);
    return at != nullptr ? static_cast<std::uint8_t>(*at) : 0;
  }

  void copy(void* into, std::size_t n) noexcept {
    if (const char* at = take(n)) std::memcpy(into, at, n);
  }

  std::uint64_t varint() noexcept {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      if (!ok_) return 0;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    ok_ = false;  // longer than any 64-bit value
    return 0;
  }

  template <class T>
  bool varint_into(T& v) noexcept {
    const std::uint64_t x = varint();
    v = static_cast<T>(x);
    if (static_cast<std::uint64_t>(v) != x) ok_ = false;
    return ok_;
  }

 private:
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

bool get_peer(reader& in, peer_snapshot& p, const peer_snapshot* before) {
  const std::uint8_t bits = in.byte();
  if ((bits & ~0x1f) != 0 || (bits & bit_key_upper_hex && bits & bit_key_lower_hex)) return false;

  const std::uint8_t shared = in.byte();
  if (shared > peer_id::size || (before == nullptr && shared != 0)) return false;
  if (shared > 0) std::memcpy(p.id.bytes.data(), before->id.bytes.data(), shared);
  in.copy(p.id.bytes.data() + shared, peer_id::size - shared);

  p.ep.ip = ip_address{};
  p.ep.ip.v6 = (bits & bit_v6) != 0;
  in.copy(p.ep.ip.bytes.data(), p.ep.ip.v6 ? 16 : 4);
  std::uint8_t port[2] = {0, 0};
  in.copy(port, 2);
  p.ep.port = static_cast<std::uint16_t>(port[0] << 8 | port[1]);

  in.varint_into(p.left);
  in.varint_into(p.uploaded);
  in.varint_into(p.downloaded);

  if ((bits & (bit_key_upper_hex | bit_key_lower_hex)) != 0) {
    std::uint8_t key4[4] = {0, 0, 0, 0};
    in.copy(key4, 4);
    const char* digits = (bits & bit_key_upper_hex) != 0 ? "0123456789ABCDEF" : "0123456789abcdef";
    p.key.resize(8);
    for (std::size_t i = 0; i < 4; ++i) {
      p.key[2 * i] = digits[key4[i] >> 4];
      p.key[2 * i + 1] = digits[key4[i] & 0xf];
    }
  } else {
    std::size_t n = 0;
    if (!in.varint_into(n)) return false;
    const char* at = in.take(n);
    if (at == nullptr) return false;
    p.key.assign(at, n);
  }

  const std::int64_t last = unzigzag(in.varint());
  p.last_announce_age_ms = last;
  p.first_seen_age_ms = wrapping_add(last, unzigzag(in.varint()));
  p.last_progress_age_ms = wrapping_add(last, unzigzag(in.varint()));
  p.completed_age_ms = (bits & bit_completed) != 0 ? wrapping_add(last, unzigzag(in.varint())) : -1;

  in.varint_into(p.announces);
  in.varint_into(p.announces_without_progress);
  in.varint_into(p.early_announces);
  in.varint_into(p.strikes);
  p.progress = -1.0f;
  if ((bits & bit_progress) != 0) in.copy(&p.progress, sizeof p.progress);
  p.flags = in.byte();
  return in.ok();
}

/// Scratch buffers grown past this are given back after use, so one huge
/// swarm does not keep a thread's buffers large.
constexpr std::size_t keep_scratch = 64 * 1024;

void trim(std::vector<char>& v) {
  if (v.capacity() > keep_scratch) std::vector<char>().swap(v);
}

template <class Int>
void put_varints(writer& out, const std::vector<Int>& v) {
  out.varint(v.size());
  for (const Int x : v) {
    if constexpr (std::is_signed_v<Int>)
      out.varint(zigzag(x));
    else
      out.varint(x);
  }
}

/// The inner form of `s` appended to `out`; false when CAF cannot encode the
/// rare fields.
bool encode_inner(const swarm_snapshot& s, std::vector<char>& buf) {
  thread_local std::vector<char> rare;
  rare.clear();
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), rare};
  snapshot_rare view{const_cast<swarm_snapshot&>(s)};
  if (auto err = sink(view)) {
    trim(rare);
    return false;
  }
  const auto& h = s.health;
  writer out(buf);
  out.varint(rare.size());
  out.bytes(rare.data(), rare.size());
  trim(rare);
  out.bytes(s.hash.bytes.data(), info_hash::size);
  out.bytes(&s.seed, sizeof s.seed);
  out.bytes(&s.lineage, sizeof s.lineage);
  put_varints(out, s.counters);
  out.varint(s.downloaded);
  out.byte(static_cast<std::uint8_t>(s.evaluated ? 1 : 0));
  put_varints(out, h.bucket_ages);
  put_varints(out, h.bucket_counts);
  out.varint(h.torrent_size);
  out.varint(zigzag(h.watched_ms));
  out.byte(static_cast<std::uint8_t>(h.raw_state));
  out.varint(h.raw_reasons);
  out.varint(h.better_streak);
  put_varints(out, h.absent_streak);
  out.varint(s.peers.size());
  const peer_snapshot* before = nullptr;
  for (const auto& p : s.peers) {
    put_peer(out, p, before);
    before = &p;
  }
  out.finish();
  return true;
}

/// A vector `put_varints` wrote; false when its count exceeds the bytes
/// left (each element takes at least one).
template <class Int>
bool get_varints(reader& in, std::vector<Int>& v) {
  std::size_t n = 0;
  if (!in.varint_into(n) || n > in.remaining()) return false;
  v.resize(n);
  for (auto& x : v) {
    if constexpr (std::is_signed_v<Int>)
      x = static_cast<Int>(unzigzag(in.varint()));
    else
      in.varint_into(x);
  }
  return in.ok();
}

bool decode_inner(const char* data, std::size_t size, swarm_snapshot& out) {
  reader in(data, size);
  std::size_t rare_size = 0;
  if (!in.varint_into(rare_size)) return false;
  const char* rare = in.take(rare_size);
  if (rare == nullptr) return false;
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), rare, rare_size};
  snapshot_rare view{out};
  if (auto err = source(view)) return false;
  if (source.remaining() != 0) return false;
  auto& h = out.health;
  in.copy(out.hash.bytes.data(), info_hash::size);
  in.copy(&out.seed, sizeof out.seed);
  in.copy(&out.lineage, sizeof out.lineage);
  if (!get_varints(in, out.counters)) return false;
  in.varint_into(out.downloaded);
  const std::uint8_t evaluated = in.byte();
  if (evaluated > 1) return false;
  out.evaluated = evaluated == 1;
  if (!get_varints(in, h.bucket_ages) || !get_varints(in, h.bucket_counts)) return false;
  in.varint_into(h.torrent_size);
  h.watched_ms = unzigzag(in.varint());
  h.raw_state = in.byte();
  in.varint_into(h.raw_reasons);
  in.varint_into(h.better_streak);
  if (!get_varints(in, h.absent_streak)) return false;
  std::size_t n = 0;
  if (!in.varint_into(n)) return false;
  // Every peer takes at least 20 bytes (header, id length, 4-byte address,
  // port, eleven varints, flags): a count the bytes cannot hold is refused
  // before anything is allocated for it.
  if (n > in.remaining() / 20) return false;
  out.peers.clear();
  out.peers.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!get_peer(in, out.peers[i], i == 0 ? nullptr : &out.peers[i - 1])) return false;
  if (in.remaining() != 0) return false;
  make_finite(out);
  return true;
}

/// The dictionary both directions use, made once per process from the inner
/// form of a young swarm of the default configuration: three peers (a
/// seeder and two leechers) that announced once, health evaluated once.
class sleep_dictionary {
 public:
  static const sleep_dictionary& get() {
    static const sleep_dictionary d;
    return d;
  }

  ZSTD_CDict* compress() const noexcept { return cdict_.get(); }
  ZSTD_DDict* decompress() const noexcept { return ddict_.get(); }

 private:
  struct free_cdict {
    void operator()(ZSTD_CDict* d) const noexcept { ZSTD_freeCDict(d); }
  };
  struct free_ddict {
    void operator()(ZSTD_DDict* d) const noexcept { ZSTD_freeDDict(d); }
  };

  sleep_dictionary() {
    // A swarm of the default configuration as it is when it falls asleep:
    // peers that announced a few minutes apart, a health tick run since.
    info_hash h;
    h.bytes.fill(0x5a);
    const swarm_config cfg;
    swarm_core core(h, cfg, 0x9e3779b97f4a7c15ULL);
    const health_time t0 = health_time{} + std::chrono::hours(24);
    for (std::uint32_t i = 0; i < 3; ++i) {
      swarm_announce a;
      a.request.hash = h;
      std::memcpy(a.request.id.bytes.data(), "-qB4650-", 8);
      for (std::size_t k = 8; k < peer_id::size; ++k)
        a.request.id.bytes[k] = static_cast<std::uint8_t>(k * 37 + i * 101);
      a.request.port = static_cast<std::uint16_t>(6881 + i);
      a.request.left = i == 0 ? 0 : 1000000;
      a.request.numwant = 50;
      a.request.event = announce_event::started;
      a.request.key = "0A1B2C3D";
      a.peer.ip = ip_address::make_v4(0x0a000001u + i);
      a.peer.port = a.request.port;
      announce_result r;
      core.announce(a, t0 + std::chrono::seconds(100 * i), r);
    }
    core.tick(t0 + std::chrono::seconds(300));
    const swarm_snapshot s = take_snapshot(core, t0 + std::chrono::seconds(360));
    encode_inner(s, bytes_);
    cdict_.reset(ZSTD_createCDict(bytes_.data(), bytes_.size(), -1));
    ddict_.reset(ZSTD_createDDict(bytes_.data(), bytes_.size()));
  }

  std::vector<char> bytes_;
  std::unique_ptr<ZSTD_CDict, free_cdict> cdict_;
  std::unique_ptr<ZSTD_DDict, free_ddict> ddict_;
};

/// Per-thread zstd contexts and scratch buffers: a swarm sleeps and wakes on
/// whichever scheduler thread runs it, and a context's setup costs more than
/// compressing a few hundred bytes.
struct sleep_codec {
  struct free_cctx {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
  };
  struct free_dctx {
    void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
  };

  sleep_codec() : cctx(ZSTD_createCCtx()), dctx(ZSTD_createDCtx()) {
    const auto& dict = sleep_dictionary::get();
    ok = cctx && dctx && dict.compress() != nullptr && dict.decompress() != nullptr &&
         !ZSTD_isError(ZSTD_CCtx_refCDict(cctx.get(), dict.compress())) &&
         // The caller keeps the inner size; the frame need not.
         !ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_contentSizeFlag, 0)) &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 0)) &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_dictIDFlag, 0));
  }

  static sleep_codec& local() {
    thread_local sleep_codec codec;
    return codec;
  }

  std::unique_ptr<ZSTD_CCtx, free_cctx> cctx;
  std::unique_ptr<ZSTD_DCtx, free_dctx> dctx;
  std::vector<char> inner;
  std::vector<char> packed;
  bool ok = false;
};

}  // namespace

std::vector<char> pack_snapshot(const swarm_snapshot& s, std::uint32_t& raw_size) {
  raw_size = 0;
  auto& c = sleep_codec::local();
  if (!c.ok) return {};
  c.inner.clear();
  if (!encode_inner(s, c.inner) || c.inner.empty() || c.inner.size() > UINT32_MAX) {
    trim(c.inner);
    return {};
  }
  c.packed.resize(ZSTD_compressBound(c.inner.size()));
  const std::size_t n = ZSTD_compress2(c.cctx.get(), c.packed.data(), c.packed.size(),
                                       c.inner.data(), c.inner.size());
  std::vector<char> out;
  if (!ZSTD_isError(n)) {
    raw_size = static_cast<std::uint32_t>(c.inner.size());
    out.assign(c.packed.begin(), c.packed.begin() + static_cast<std::ptrdiff_t>(n));
  }
  trim(c.inner);
  trim(c.packed);
  return out;
}

bool unpack_snapshot(const char* packed, std::size_t size, std::uint32_t raw_size,
                     swarm_snapshot& out) {
  if (size == 0 || raw_size == 0) return false;
  auto& c = sleep_codec::local();
  if (!c.ok) return false;
  c.inner.resize(raw_size);
  const std::size_t n = ZSTD_decompress_usingDDict(c.dctx.get(), c.inner.data(), raw_size, packed,
                                                   size, sleep_dictionary::get().decompress());
  const bool ok = !ZSTD_isError(n) && n == raw_size && decode_inner(c.inner.data(), n, out);
  trim(c.inner);
  return ok;
}

}  // namespace sk
