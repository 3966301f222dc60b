// libFuzzer target: the state file loader (runtime/state_file.hpp:
// read_bytes), the bytes a daemon reads back at start.
//
// Two kinds of input:
// - one that starts with the file's magic is a whole file, as found on disk;
// - anything else is the record region only: the harness puts a valid
//   header in front and a valid trailer (record count and CRC-32) behind,
//   so the fuzzer gets past the checksum into the framing and the CAF
//   decoding of every record kind.
//
// Invariants checked besides "no sanitizer report":
// - a file is loaded or refused; refused hands out nothing and says why;
// - loaded hands out exactly the swarms and peers it reports, and writing
//   those records again gives a file that loads to the same counts.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "fuzz_check.hpp"
#include "runtime/state_file.hpp"

namespace {

using sk::state_file::read_result;

void put_u32(std::vector<char>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u64(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/// Header + `region` + a trailer whose count and CRC match the region's
/// frames as far as they go.
std::vector<char> seal(const std::uint8_t* data, std::size_t size) {
  std::vector<char> out = {'S', 'K', 'S', 'T', 'A', 'T', 'E', '\n'};
  put_u32(out, sk::state_file::version);
  put_u32(out, 0);
  put_u64(out, 1'700'000'000'000);
  std::uint64_t records = 0;
  for (std::size_t at = 0; at + 5 <= size;) {
    std::uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= std::uint32_t{data[at + 1 + i]} << (8 * i);
    if (size - at - 5 < len) break;
    ++records;
    at += 5 + len;
  }
  out.insert(out.end(), data, data + size);
  const auto crc = static_cast<std::uint32_t>(
      ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(out.data()),
              static_cast<uInt>(out.size())));
  out.push_back(static_cast<char>(0xFF));
  put_u32(out, 16);
  put_u64(out, records);
  put_u32(out, crc);
  put_u32(out, 0);
  return out;
}

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(base) + "/sk-state-fuzz-" + std::to_string(getpid());
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const char magic[8] = {'S', 'K', 'S', 'T', 'A', 'T', 'E', '\n'};
  std::vector<char> file;
  if (size >= 8 && std::memcmp(data, magic, 8) == 0)
    file.assign(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size);
  else
    file = seal(data, size);

  std::vector<sk::swarm_snapshot> swarms;
  std::vector<sk::ban_rule> bans;
  sk::supervisor_holds holds;
  int calls = 0;
  sk::state_file::sink out;
  out.swarm = [&](sk::swarm_snapshot&& s) {
    ++calls;
    swarms.push_back(std::move(s));
  };
  out.bans = [&](std::vector<sk::ban_rule>&& b) {
    ++calls;
    bans = std::move(b);
  };
  out.holds = [&](sk::supervisor_holds&& h) {
    ++calls;
    holds = std::move(h);
  };
  const read_result r = sk::state_file::read_bytes(file, out);
  if (r.status == read_result::outcome::refused) {
    FUZZ_CHECK(calls == 0);
    FUZZ_CHECK(!r.problem.empty());
    return 0;
  }
  FUZZ_CHECK(r.status == read_result::outcome::loaded);
  FUZZ_CHECK(r.swarms == swarms.size());
  std::uint64_t peers = 0;
  for (const auto& s : swarms) peers += s.peers.size();
  FUZZ_CHECK(r.peers == peers);

  // Written again, the records load to the same counts.
  std::string error;
  auto w = sk::state_file::writer::open(scratch_dir(), 1, &error);
  FUZZ_CHECK(w != nullptr);
  for (const auto& s : swarms) FUZZ_CHECK(w->add(s));
  FUZZ_CHECK(w->add(bans));
  FUZZ_CHECK(w->add(holds));
  FUZZ_CHECK(w->commit(&error));
  std::size_t again = 0;
  sk::state_file::sink count;
  count.swarm = [&](sk::swarm_snapshot&&) { ++again; };
  const read_result back = sk::state_file::read(scratch_dir(), count);
  FUZZ_CHECK(back.status == read_result::outcome::loaded);
  FUZZ_CHECK(again == swarms.size());
  FUZZ_CHECK(back.peers == r.peers);
  return 0;
}
