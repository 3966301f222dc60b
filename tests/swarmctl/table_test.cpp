// swarmctl's layout: the width it fits (COLUMNS, the terminal, --raw),
// eliding with "…", and tables shrinking their widest columns first.

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/swarmctl/format.hpp"
#include "app/swarmctl/table.hpp"

namespace sk::swarmctl {
namespace {

using json = nlohmann::json;

const std::string ellipsis = "\xE2\x80\xA6";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

TEST(OutputWidth, ColumnsThenTerminalNoneWhenRaw) {
  EXPECT_EQ(output_width(false, "80", 200), 80u);
  EXPECT_EQ(output_width(false, "", 132), 132u);
  EXPECT_EQ(output_width(false, "", 0), 0u);
  EXPECT_EQ(output_width(true, "80", 132), 0u);
  // Nonsense COLUMNS falls back to the terminal.
  for (const char* bad : {"x", "-5", "0", "19", "99999999", "80x"})
    EXPECT_EQ(output_width(false, bad, 100), 100u) << bad;
}

TEST(Elide, CutsToWidthWithAnEllipsis) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("ab" + ellipsis), 3u);
  EXPECT_EQ(elide("abcdef", 6), "abcdef");
  EXPECT_EQ(elide("abcdef", 4), "abc" + ellipsis);
  EXPECT_EQ(display_width(elide("abcdef", 4)), 4u);
  EXPECT_EQ(elide("abcdef", 1), ellipsis);
  EXPECT_EQ(elide("abcdef", 0), "");
  // A multi-byte character is never split.
  EXPECT_EQ(elide("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9" + ellipsis);
  EXPECT_EQ(fit_lines("short\n" + std::string(30, 'x') + "\n\nend", 10),
            "short\n" + std::string(9, 'x') + ellipsis + "\n\nend");
  EXPECT_EQ(fit_lines("unchanged " + std::string(100, 'y'), 0),
            "unchanged " + std::string(100, 'y'));
}

TEST(TextTable, ShrinksTheWidestColumnsToFit) {
  const std::string h(40, 'a');
  text_table t{{hash_column(), {"N", text_table::align::right}, {"NOTE"}}};
  t.add({h, "123456", "a rather long free-text note that does not fit"});
  t.add({std::string(40, 'b'), "7", "short"});
  const std::string wide = t.render();
  EXPECT_EQ(lines(wide)[1], h + "  123456  a rather long free-text note that does not fit");
  for (std::size_t width : {80u, 60u, 40u, 30u}) {
    const auto text = t.render(width);
    for (const auto& l : lines(text)) EXPECT_LE(display_width(l), width) << width << ": " << l;
    // Numbers are never cut.
    EXPECT_NE(text.find("123456"), std::string::npos) << text;
  }
  // At 36 columns the hash is at its floor, still a usable prefix: 12
  // digits and "…" (13 + 2 + 6 + 2 + 13).
  const auto narrow = lines(t.render(36));
  EXPECT_EQ(narrow[1].substr(0, 12 + ellipsis.size()), std::string(12, 'a') + ellipsis)
      << narrow[1];
  // Too narrow for the minimums: the columns stop at their floor.
  const auto tiny = lines(t.render(10));
  EXPECT_GT(display_width(tiny[1]), 10u);
}

TEST(TextTable, HashColumnsKeepRowsApart) {
  // Two hashes sharing 20 digits: cut to 12 they would look the same.
  const std::string a = std::string(20, 'c') + std::string(20, '1');
  const std::string b = std::string(20, 'c') + std::string(20, '2');
  text_table t{{hash_column(), {"NOTE"}}};
  t.add({a, std::string(60, 'n')});
  t.add({b, "x"});
  const auto l = lines(t.render(40));
  ASSERT_EQ(l.size(), 3u);
  const std::string shown_a = l[1].substr(0, l[1].find(ellipsis));
  const std::string shown_b = l[2].substr(0, l[2].find(ellipsis));
  EXPECT_NE(shown_a, shown_b) << l[1] << "\n" << l[2];
  EXPECT_EQ(shown_a, a.substr(0, 21)) << l[1];
  EXPECT_LE(display_width(l[1]), 40u) << l[1];
}

TEST(TextTable, RenderSwarmsFitsEightyColumns) {
  json swarms = json::array();
  for (int i = 0; i < 3; ++i)
    swarms.push_back({{"hash", std::string(40, static_cast<char>('a' + i))},
                      {"peers", 12345},
                      {"seeders", 12000},
                      {"leechers", 345},
                      {"health", "unevaluated"},
                      {"reasons", {"few-seeders", "stalled", "low-completion-rate"}},
                      {"announce_rate", 0.25},
                      {"policy", "contribution-weighted"}});
  const json page = {{"total", 3}, {"offset", 0}, {"swarms", swarms}};
  style st;
  st.width = 80;
  const std::string text = render_swarms(page, st);
  for (const auto& l : lines(text)) EXPECT_LE(display_width(l), 80u) << l;
  EXPECT_NE(text.find("12345"), std::string::npos) << text;
  EXPECT_NE(text.find(ellipsis), std::string::npos) << text;
  // Unlimited: whole hashes, whole cells.
  const std::string full = render_swarms(page);
  EXPECT_NE(full.find(std::string(40, 'a')), std::string::npos);
  EXPECT_NE(full.find("few-seeders,stalled,low-completion-rate"), std::string::npos);
}

}  // namespace
}  // namespace sk::swarmctl
