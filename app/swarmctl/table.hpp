#pragma once
/// swarmctl's text layout and units, all pure: how wide the output may be,
/// an aligned text table that fits that width by eliding cells with "…",
/// a "key: value" block, and the formatters of values for humans (bytes in
/// KiB/MiB/GiB, durations as "1h 5m", rates as "/s") or, with --raw, exact.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sk::swarmctl {

/// How values are shown and how wide lines may be.
struct style {
  /// Widest line in columns; 0: no limit (a pipe, --raw).
  std::size_t width = 0;
  /// Exact numbers (bytes, seconds, rates as the API sent them).
  bool raw = false;
};

/// The width to fit: none with `raw`; else COLUMNS when it is a number from
/// 20 to 10000; else the terminal's width when `tty_width` is not 0; else
/// none. `columns` is the value of COLUMNS (empty: unset).
std::size_t output_width(bool raw, std::string_view columns, std::size_t tty_width);

/// Display columns of UTF-8 text (one per code point; swarmctl prints no
/// wide characters of its own).
std::size_t display_width(std::string_view text);

/// `text` cut to `width` columns, its last one "…" when anything was cut.
std::string elide(std::string_view text, std::size_t width);

/// Every line of `text` cut to `width` columns (0: unchanged).
std::string fit_lines(std::string_view text, std::size_t width);

/// A text table: a header row, then rows; columns padded to their widest
/// cell and separated by two spaces; numeric columns right-aligned. No
/// trailing blanks on any line. Rendered into a width, the widest
/// shrinkable column gives up a column at a time, down to its minimum,
/// and its cells end in "…".
class text_table {
 public:
  enum class align { left, right };
  struct column {
    std::string title;
    align alignment = align::left;
    /// Narrowest the column may become; 0: left-aligned columns down to
    /// their title (at least 5), right-aligned (numbers) never shrink.
    std::size_t min_width = 0;
    /// Never so narrow that two different cells look the same: the floor
    /// is raised until every cell's visible prefix is unique in the table.
    bool distinct_prefixes = false;
  };

  explicit text_table(std::vector<column> columns);
  /// Adds one row; missing cells are empty, extra cells are an error
  /// (std::invalid_argument).
  void add(std::vector<std::string> cells);
  std::size_t rows() const noexcept { return rows_.size(); }
  /// The table, one line per row, each ending in '\n'; `width` 0: as wide
  /// as its cells.
  std::string render(std::size_t width = 0) const;

 private:
  std::vector<column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// An info_hash column: shrinks to 13 columns (12 hex digits and "…", a
/// prefix the commands accept), or wider when two rows share a longer
/// prefix.
text_table::column hash_column(std::string title = "HASH");

/// A "key: value" block with aligned values.
class key_values {
 public:
  void add(std::string key, std::string value) {
    rows_.emplace_back(std::move(key), std::move(value));
  }
  std::string render() const;

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

// -- values ---------------------------------------------------------------------------

/// `key` of `j` as text: strings as they are, numbers printed (integers
/// without a decimal point, others with up to 3 significant decimals),
/// booleans "yes"/"no", null or missing "-", arrays joined by ",".
std::string field(const nlohmann::json& j, const char* key);
/// A JSON value as in `field`.
std::string value_text(const nlohmann::json& v);
/// A number exactly as the API sent it; "-" when not a number.
std::string exact_text(const nlohmann::json& v);
/// A number of seconds as "2d 3h", "1h 5m", "4m 5s", "12s", "0.4s"; "-"
/// when not a number. Raw: the seconds.
std::string duration_text(const nlohmann::json& seconds, const style& st = {});
/// A byte count as "512 B", "3.2 KiB", "18.0 MiB", "1.1 GiB"; "-" when not
/// a number. Raw: the bytes.
std::string bytes_text(const nlohmann::json& bytes, const style& st = {});
/// An amount per second as "0.02/s", "3.50/s", "12.5/s", "140/s"; `unit`
/// replaces "/s" (e.g. "/h"). Raw: the number.
std::string rate_text(const nlohmann::json& rate, const style& st = {}, const char* unit = "/s");
/// A fraction 0..1 as "42%"; "-" for null. Raw: the fraction.
std::string percent_text(const nlohmann::json& fraction, const style& st = {});

}  // namespace sk::swarmctl
