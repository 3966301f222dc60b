#pragma once
/// swarmctl's human-readable output, all pure (unit-tested on JSON values):
/// an aligned text table, small value formatters, and one renderer per API
/// answer. Renderers read the answer defensively: a missing or differently
/// typed field prints as "-" instead of throwing, so a newer or older
/// daemon never crashes the client (use --json to see everything).

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sk::swarmctl {

/// A text table: a header row, then rows; columns padded to their widest
/// cell and separated by two spaces; numeric columns right-aligned. No
/// trailing blanks on any line.
class text_table {
 public:
  enum class align { left, right };
  struct column {
    std::string title;
    align alignment = align::left;
  };

  explicit text_table(std::vector<column> columns);
  /// Adds one row; missing cells are empty, extra cells are an error
  /// (std::invalid_argument).
  void add(std::vector<std::string> cells);
  std::size_t rows() const noexcept { return rows_.size(); }
  /// The table, one line per row, each ending in '\n'.
  std::string render() const;

 private:
  std::vector<column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// -- value formatting -----------------------------------------------------------

/// `key` of `j` as text: strings as they are, numbers printed (integers
/// without a decimal point, others with up to 3 significant decimals),
/// booleans "yes"/"no", null or missing "-", arrays joined by ",".
std::string field(const nlohmann::json& j, const char* key);
/// A JSON value as in `field`.
std::string value_text(const nlohmann::json& v);
/// A number of seconds as "2d 03h", "1h 02m", "4m 05s", "12s", "0.4s"; "-"
/// when not a number.
std::string duration_text(const nlohmann::json& seconds);
/// A byte count as "512 B", "3.2 KiB", "18.0 MiB", "1.1 GiB"; "-" when not
/// a number.
std::string bytes_text(const nlohmann::json& bytes);
/// A fraction 0..1 as "42%"; "-" for null.
std::string percent_text(const nlohmann::json& fraction);

// -- renderers (one per API answer) -----------------------------------------------

/// GET /api/node. `with_config` adds the effective configuration.
std::string render_node(const nlohmann::json& j, bool with_config);
/// GET /api/swarms.
std::string render_swarms(const nlohmann::json& j);
/// GET /api/swarms/<hash>.
std::string render_swarm(const nlohmann::json& j);
/// GET /api/remediations.
std::string render_remediations(const nlohmann::json& j);
/// GET /api/events.
std::string render_events(const nlohmann::json& j);
/// GET /api/bans.
std::string render_bans(const nlohmann::json& j);
/// GET /api/access.
std::string render_access(const nlohmann::json& j);
/// GET /api/cluster: the members table, then the migrations table.
std::string render_members(const nlohmann::json& j);

/// Every info_hash an answer names (string values of the keys "hash" and
/// "swarm" that are 40 hex digits), lower-cased; what the shell completes.
void collect_hashes(const nlohmann::json& j, std::set<std::string>& out);

}  // namespace sk::swarmctl
