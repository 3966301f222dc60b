// libFuzzer target: the operator input the admin API and the config hand to
// actors/: ban prefixes (POST /api/bans {"prefix": ...}, DELETE
// /api/bans/<prefix>), ban specs (`clients.banned`), access files and modes
// (/api/access, `[access] file`), and the peer_id client identification the
// admin API shows for every peer.
//
// Invariants checked besides "no sanitizer report":
// - parse_ban_prefix accepts only 1..20 bytes, and escape_ban_prefix is its
//   inverse in both directions (escape(parse(x)) parses back to the same
//   bytes, parse(escape(raw)) == raw);
// - every rule of an accepted ban spec meets the documented limits, and the
//   list's longest-prefix match finds it for a peer_id starting with it;
// - an accepted access file re-serialises (to_text) to a file that parses to
//   the same set; an access mode parses only from its own name;
// - identify_client never fails and reports "unknown" with no code exactly
//   when no convention matched.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tracker/access_list.hpp"
#include "tracker/client_id.hpp"
#include "fuzz_check.hpp"

namespace {

void check_prefix(std::string_view text) {
  std::string error;
  const auto prefix = sk::parse_ban_prefix(text, &error);
  if (!prefix) {
    FUZZ_CHECK(!error.empty());
    return;
  }
  FUZZ_CHECK(!prefix->empty() && prefix->size() <= sk::peer_id::size);
  const std::string shown = sk::escape_ban_prefix(*prefix);
  const auto back = sk::parse_ban_prefix(shown, nullptr);
  FUZZ_CHECK(back && *back == *prefix);
}

void check_raw_prefix(std::string_view raw) {
  if (raw.empty() || raw.size() > sk::peer_id::size) return;
  const auto back = sk::parse_ban_prefix(sk::escape_ban_prefix(raw), nullptr);
  FUZZ_CHECK(back && *back == raw);
}

bool control_free(std::string_view s) {
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) return false;
  }
  return true;
}

void check_ban_spec(std::string_view spec) {
  std::string error;
  const auto list = sk::client_ban_list::parse(spec, &error);
  if (!list) {
    FUZZ_CHECK(!error.empty());
    return;
  }
  for (const auto& rule : list->rules()) {
    FUZZ_CHECK(!rule.prefix.empty() && rule.prefix.size() <= sk::peer_id::size);
    FUZZ_CHECK(!rule.reason.empty() && rule.reason.size() <= sk::client_ban_list::max_reason_length);
    FUZZ_CHECK(control_free(rule.reason));
    sk::peer_id id;
    id.bytes.fill(0xee);
    std::memcpy(id.bytes.data(), rule.prefix.data(), rule.prefix.size());
    const sk::ban_rule* hit = list->match(id);
    FUZZ_CHECK(hit != nullptr && hit->prefix.size() >= rule.prefix.size());
    FUZZ_CHECK(std::memcmp(id.bytes.data(), hit->prefix.data(), hit->prefix.size()) == 0);
  }
}

void check_access(std::string_view text) {
  std::string error;
  const auto list = sk::access_list::parse(text, &error);
  if (!list) {
    FUZZ_CHECK(error.rfind("line ", 0) == 0);
  } else {
    const auto back = sk::access_list::parse(list->to_text(), nullptr);
    FUZZ_CHECK(back && back->sorted() == list->sorted());
  }
  if (const auto mode = sk::parse_access_mode(text)) FUZZ_CHECK(sk::to_string(*mode) == text);
}

void check_client(std::string_view bytes) {
  sk::peer_id id;
  std::memcpy(id.bytes.data(), bytes.data(), std::min(bytes.size(), sk::peer_id::size));
  const sk::client_info info = sk::identify_client(id);
  FUZZ_CHECK(!info.to_string().empty());
  if (info.style == sk::client_info::style::unknown)
    FUZZ_CHECK(info.code.empty() && info.name == "unknown");
  else
    FUZZ_CHECK(!info.code.empty() && !info.name.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_prefix(input);
  check_raw_prefix(input);
  check_ban_spec(input);
  check_access(input);
  check_client(input);
  return 0;
}
