#pragma once
/// Client identification from the peer_id, and the operator's list of banned
/// peer_id prefixes.
///
/// Plain C++17 (no CAF, no clock). Both are called per announce, so neither
/// allocates more than the few short strings of a `client_info`, and
/// `client_ban_list::match` allocates nothing.
///
/// peer_id layouts recognised (BEP 20 and the client conventions it lists):
///
///   Azureus   - X X v v v v - r r r r r r r r r r r r      "-qB4520-..."
///             0 1 2 3 4 5 6 7                              code = bytes 1..2
///   Shadow    L v v v v v - - - r r r r r r r r r r r      "S58B-----..."
///             0 1 ....... 6 7 8                            L in A..Z; the
///             version (1..5 chars of 0-9A-Za-z.) padded with '-' to byte 5
///   Mainline  M 4 - 3 - 6 - - r r r ...                    "M4-3-6--..."
///             L digits '-' digits '-' digits '-'           (L in A..Z)
///   special   "exbc" / "FUTB" / "xUTB" + 2 version bytes   old BitComet
///             "TIX" + 4 digits                             Tixati "TIX0283"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/snapshot_cell.hpp"
#include "protocol/types.hpp"

namespace sk {

/// What the peer_id says about the client. Best effort: a peer_id is chosen by
/// the client, so this is a claim, never proof (ban rules match raw bytes for
/// the same reason: there is nothing more trustworthy to match).
struct client_info {
  /// Which peer_id convention matched.
  enum class style : std::uint8_t {
    azureus,   ///< "-XXvvvv-"
    shadow,    ///< letter, version chars, '-' padding, "---"
    mainline,  ///< "M4-3-6--"
    special,   ///< a client-specific layout (old BitComet "exbc", Tixati "TIX")
    unknown,   ///< none of the above (random bytes, or a client we cannot parse)
  } style = style::unknown;
  /// The enum's type under a name the member does not hide (for variables and
  /// parameters; `client_info::style::azureus` works as is for values).
  using style_type = enum style;
  /// The client code as it appears in the peer_id: "qB", "TR", "UT", "lt",
  /// "LT", "M", "S", "BC", "TIX" ...; empty when `style` is unknown.
  std::string code;
  /// Dotted version decoded from the peer_id ("4.5.2", "0.13.8", "3.5.5W");
  /// empty when unknown. Azureus-style version characters are decoded as
  /// 0-9 -> 0..9 and A-Z / a-z -> 10..35 (so libtorrent/rakshasa's hex-like
  /// "-lt0D80-" is 0.13.8); the fourth character is appended only when it is
  /// not '0' (a digit becomes ".d", a letter a build suffix "W").
  /// Transmission before 4.0 is the exception it documents: major, two-digit
  /// minor, status ("-TR2940-" is 2.94; 'Z' or 'X' adds "+").
  std::string version;
  /// Human name when the code is in the table of well-known clients
  /// ("qBittorrent", "Transmission", "libtorrent (Rasterbar)",
  /// "libTorrent (rakshasa)", "uTorrent", ...), else the code; "unknown" when
  /// `style` is unknown.
  std::string name;

  /// "qBittorrent 4.5.2" (name, a space and the version when known): logs and
  /// the admin API.
  std::string to_string() const;
};

/// Identifies the client that made `id`. Never fails and never reads outside
/// the 20 bytes: anything unrecognised is `style::unknown`.
client_info identify_client(const peer_id& id);

/// One banned peer_id prefix and the text the client is refused with.
struct ban_rule {
  /// Raw peer_id bytes (1..20), compared bytewise with the start of the
  /// peer_id: "-XX0001-" bans one version, "-XX" every version.
  std::string prefix;
  /// The `failure reason` shown to the user (non-empty, printable).
  std::string reason;
};

/// The operator's banned peer_id prefixes, each with its reason.
///
/// Matching is by raw prefix, longest rule wins (so "-XX=old client;
/// -XX0105-=known bad version" reports the more specific reason). The list is
/// small (an operator writes it by hand), so `match` is a linear scan: O(rules
/// × prefix length), no allocation.
class client_ban_list {
 public:
  /// Longest `reason` accepted (it travels in every refused reply).
  static constexpr std::size_t max_reason_length = 256;

  /// Adds a rule. False (and nothing changes) when `prefix` is empty or longer
  /// than 20 bytes, `reason` is empty, longer than `max_reason_length` or has
  /// control characters, or the prefix is already listed.
  bool add(std::string prefix, std::string reason);
  /// Removes the rule with exactly this prefix; false if there is none.
  bool remove(std::string_view prefix);
  /// The rule with the longest prefix that `id` starts with; nullptr when no
  /// rule matches. The pointer is valid until the list is next changed.
  const ban_rule* match(const peer_id& id) const noexcept;
  /// Every rule, in the order added.
  const std::vector<ban_rule>& rules() const noexcept { return rules_; }
  bool empty() const noexcept { return rules_.empty(); }
  std::size_t size() const noexcept { return rules_.size(); }

  /// Parses an operator's spec (a config value).
  ///
  /// Format: rules separated by ';', each `prefix=reason`:
  ///
  ///     -XX0001-=XX 0.0.1 corrupts data;-YY=YY clients are not allowed
  ///
  /// - The prefix is everything before the first '='. It may use `%XX`
  ///   escapes (two hex digits) for any byte, so binary prefixes and the
  ///   characters '%', '=', ';' can be written ("exbc%00" , "%3D"). After
  ///   unescaping it must be 1..20 bytes.
  /// - The reason is the rest of the rule, taken literally (no escapes; it
  ///   cannot contain ';'); it must be non-empty, at most
  ///   `max_reason_length` bytes, without control characters.
  /// - Spaces and tabs around a prefix and around a reason are dropped
  ///   (write `%20` for a prefix that starts or ends with a space); empty
  ///   rules (";;", a trailing ';', an all-blank spec) are skipped, so ""
  ///   is a valid, empty list.
  /// - A prefix given twice is an error, even with the same reason.
  ///
  /// Returns nullopt on the first bad rule and, if `error` is not null, sets
  /// it to one sentence naming the rule (1-based) and the problem, e.g.
  /// `ban rule 2 ("-YY"): missing '=reason'`.
  static std::optional<client_ban_list> parse(std::string_view spec, std::string* error);

 private:
  std::vector<ban_rule> rules_;
};

/// A ban prefix in the spec's notation: bytes outside printable ASCII, '%',
/// '"', '=' and ';' as `%XX`, everything else as is ("-XX0001-",
/// "exbc%00"). What the admin API shows; `parse_ban_prefix` reads it back.
std::string escape_ban_prefix(std::string_view raw);

/// Reads a prefix in the spec's notation (`%XX` escapes, no trimming):
/// nullopt with one sentence in `error` when an escape is bad or the result
/// is empty or longer than 20 bytes.
std::optional<std::string> parse_ban_prefix(std::string_view text, std::string* error);

/// The node-wide ban list every swarm reads: seeded from `clients.banned`,
/// changed at run time by the admin API. Swarms see a change at their next
/// announce, without a lock on the announce path (see snapshot_cell.hpp:
/// one acquire load per announce while nothing changes).
class live_ban_list {
 public:
  /// Why `add` refused.
  enum class add_result : std::uint8_t { added, invalid, exists };

  explicit live_ban_list(client_ban_list initial = {})
      : cell_(std::make_shared<const client_ban_list>(std::move(initial))) {}

  /// The current list (a snapshot: later changes do not touch it).
  std::shared_ptr<const client_ban_list> snapshot() const { return cell_.load(); }
  /// The cell readers cache (`snapshot_reader<client_ban_list>`).
  const snapshot_cell<client_ban_list>& cell() const noexcept { return cell_; }

  /// Adds a rule (raw prefix bytes); `invalid` when `client_ban_list::add`
  /// would refuse it for its prefix or reason, `exists` for a listed prefix.
  add_result add(std::string prefix, std::string reason);
  /// Removes the rule with exactly this raw prefix; false if none.
  bool remove(std::string_view prefix);

  /// Announces refused by this list (every swarm together).
  std::uint64_t refusals() const noexcept { return refusals_.load(std::memory_order_relaxed); }
  void count_refusal() noexcept { refusals_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::mutex write_mutex_;  ///< writers only; readers never take it
  snapshot_cell<client_ban_list> cell_;
  std::atomic<std::uint64_t> refusals_{0};
};

}  // namespace sk
