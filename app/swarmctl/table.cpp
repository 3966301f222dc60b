#include "app/swarmctl/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace sk::swarmctl {

using json = nlohmann::json;

namespace {

/// The ellipsis, U+2026 in UTF-8: one display column.
constexpr std::string_view ellipsis = "\xE2\x80\xA6";

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// Byte length of the first `columns` code points of `text`.
std::size_t prefix_bytes(std::string_view text, std::size_t columns) {
  std::size_t i = 0, seen = 0;
  while (i < text.size()) {
    if (!is_continuation(text[i])) {
      if (seen == columns) break;
      ++seen;
    }
    ++i;
  }
  return i;
}

}  // namespace

std::size_t output_width(bool raw, std::string_view columns, std::size_t tty_width) {
  if (raw) return 0;
  if (!columns.empty() && columns.size() <= 5 &&
      std::all_of(columns.begin(), columns.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const auto v = static_cast<std::size_t>(std::stoul(std::string(columns)));
    if (v >= 20 && v <= 10000) return v;
  }
  return tty_width;
}

std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (char c : text)
    if (!is_continuation(c)) ++n;
  return n;
}

std::string elide(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return {};
  std::string out(text.substr(0, prefix_bytes(text, width - 1)));
  out += ellipsis;
  return out;
}

std::string fit_lines(std::string_view text, std::size_t width) {
  if (width == 0) return std::string(text);
  std::string out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    out += elide(text.substr(0, nl), width);
    if (nl == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(nl + 1);
  }
  return out;
}

// -- text_table -------------------------------------------------------------------

text_table::text_table(std::vector<column> columns) : columns_(std::move(columns)) {}

text_table::column hash_column(std::string title) {
  return {std::move(title), text_table::align::left, 13, true};
}

namespace {

/// Columns that keep `cells` apart: one more than the longest prefix two
/// different cells share, plus the ellipsis.
std::size_t distinguishing_width(std::vector<std::string> cells) {
  std::sort(cells.begin(), cells.end());
  std::size_t need = 0;
  for (std::size_t i = 1; i < cells.size(); ++i) {
    const std::string& a = cells[i - 1];
    const std::string& b = cells[i];
    if (a == b) continue;
    std::size_t common = 0;
    while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
    need = std::max(need, display_width(std::string_view(a).substr(0, common)) + 2);
  }
  return need;
}

}  // namespace

void text_table::add(std::vector<std::string> cells) {
  if (cells.size() > columns_.size())
    throw std::invalid_argument("text_table: row has more cells than columns");
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string text_table::render(std::size_t limit) const {
  const std::size_t n = columns_.size();
  std::vector<std::size_t> width(n), floor(n);
  for (std::size_t c = 0; c < n; ++c) width[c] = display_width(columns_[c].title);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < n; ++c) width[c] = std::max(width[c], display_width(row[c]));
  for (std::size_t c = 0; c < n; ++c) {
    const column& col = columns_[c];
    if (col.min_width > 0)
      floor[c] = std::min(width[c], col.min_width);
    else if (col.alignment == align::right)
      floor[c] = width[c];
    else
      floor[c] = std::min(width[c], std::max<std::size_t>(display_width(col.title), 5));
    if (col.distinct_prefixes) {
      std::vector<std::string> cells;
      for (const auto& row : rows_) cells.push_back(row[c]);
      floor[c] = std::min(width[c], std::max(floor[c], distinguishing_width(std::move(cells))));
    }
  }
  if (limit > 0) {
    std::size_t total = n == 0 ? 0 : 2 * (n - 1);
    for (auto w : width) total += w;
    // The widest column that can still give up a column pays first, so
    // wide free-text and hash columns shrink before narrow ones.
    while (total > limit) {
      std::size_t pick = n;
      for (std::size_t c = 0; c < n; ++c)
        if (width[c] > floor[c] && (pick == n || width[c] > width[pick])) pick = c;
      if (pick == n) break;  // nothing left to shrink; lines stay longer
      --width[pick];
      --total;
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < n; ++c) {
      const std::string cell = elide(cells[c], width[c]);
      const std::size_t pad = width[c] - display_width(cell);
      if (c > 0) l += "  ";
      if (columns_[c].alignment == align::right) {
        l.append(pad, ' ');
        l += cell;
      } else {
        l += cell;
        l.append(pad, ' ');
      }
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l;
    out += '\n';
  };
  std::vector<std::string> titles;
  for (const auto& c : columns_) titles.push_back(c.title);
  line(titles);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string key_values::render() const {
  std::size_t w = 0;
  for (const auto& r : rows_) w = std::max(w, r.first.size());
  std::string out;
  for (const auto& [k, v] : rows_) {
    out += k + ":";
    out.append(w - k.size() + 1, ' ');
    out += v;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

// -- values -------------------------------------------------------------------------

namespace {

std::string number_text(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::ostringstream os;
    os << static_cast<long long>(v);
    return os.str();
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

const json& member(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

/// A finite, non-negative number from `v`, or nullopt.
bool non_negative(const json& v, double& out) {
  if (!v.is_number()) return false;
  out = v.get<double>();
  return std::isfinite(out) && out >= 0;
}

}  // namespace

std::string value_text(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number()) return number_text(v.get<double>());
  if (v.is_array()) {
    std::string out;
    for (const auto& e : v) out += (out.empty() ? "" : ",") + value_text(e);
    return out;
  }
  return v.dump();
}

std::string field(const json& j, const char* key) { return value_text(member(j, key)); }

std::string exact_text(const json& v) { return v.is_number() ? v.dump() : "-"; }

std::string duration_text(const json& seconds, const style& st) {
  if (st.raw) return exact_text(seconds);
  double s = 0;
  if (!non_negative(seconds, s)) return "-";
  char buf[64];
  if (s < 10 && s != std::floor(s)) {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
    return buf;
  }
  const auto total = static_cast<long long>(s);
  const long long d = total / 86400, h = total % 86400 / 3600, m = total % 3600 / 60,
                  sec = total % 60;
  if (d > 0)
    std::snprintf(buf, sizeof buf, "%lldd %lldh", d, h);
  else if (h > 0)
    std::snprintf(buf, sizeof buf, "%lldh %lldm", h, m);
  else if (m > 0)
    std::snprintf(buf, sizeof buf, "%lldm %llds", m, sec);
  else
    std::snprintf(buf, sizeof buf, "%llds", sec);
  return buf;
}

std::string bytes_text(const json& bytes, const style& st) {
  if (st.raw) return exact_text(bytes);
  double b = 0;
  if (!non_negative(bytes, b)) return "-";
  if (b < 1024) return number_text(std::floor(b)) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = -1;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", b, units[u]);
  return buf;
}

std::string rate_text(const json& rate, const style& st, const char* unit) {
  if (st.raw) return exact_text(rate);
  double r = 0;
  if (!non_negative(rate, r)) return "-";
  char buf[64];
  if (r == 0)
    std::snprintf(buf, sizeof buf, "0%s", unit);
  else if (r >= 100)
    std::snprintf(buf, sizeof buf, "%.0f%s", r, unit);
  else if (r >= 10)
    std::snprintf(buf, sizeof buf, "%.1f%s", r, unit);
  else if (r >= 0.01)
    std::snprintf(buf, sizeof buf, "%.2f%s", r, unit);
  else
    std::snprintf(buf, sizeof buf, "%.1g%s", r, unit);
  return buf;
}

std::string percent_text(const json& fraction, const style& st) {
  if (st.raw) return exact_text(fraction);
  if (!fraction.is_number()) return "-";
  const double f = fraction.get<double>();
  if (!std::isfinite(f)) return "-";
  return number_text(std::round(f * 100)) + "%";
}

}  // namespace sk::swarmctl
