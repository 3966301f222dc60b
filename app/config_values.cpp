// Option values as text (config-file syntax, ranges in words, the texts of
// messages) and the schema's checks of a value's type and range.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <caf/all.hpp>

#include "app/config.hpp"
#include "app/config_detail.hpp"

namespace sk {
namespace config {

namespace {

using detail::format_duration;
using detail::shown_value;

bool has_type(value_type t, const caf::config_value& v) {
  switch (t) {
    case value_type::integer:
      return (caf::get_if<std::int64_t>(&v) != nullptr);
    case value_type::boolean:
      return (caf::get_if<bool>(&v) != nullptr);
    case value_type::string:
      return (caf::get_if<std::string>(&v) != nullptr);
    case value_type::string_list: {
      if ((caf::get_if<std::string>(&v) != nullptr)) return true;  // a list of one
      auto list = caf::get_if<caf::config_value::list>(&v);
      return list != nullptr &&
             std::all_of(list->begin(), list->end(), [](const caf::config_value& x) {
               return (caf::get_if<std::string>(&x) != nullptr);
             });
    }
    case value_type::duration:
      return (caf::get_if<caf::timespan>(&v) != nullptr);
    case value_type::real:
      return (caf::get_if<double>(&v) != nullptr) || (caf::get_if<std::int64_t>(&v) != nullptr);
  }
  return false;
}


}  // namespace

std::string detail::format_duration(caf::timespan t) {
  struct unit {
    std::int64_t ns;
    const char* suffix;
  };
  static constexpr unit units[] = {{3600'000'000'000, "h"}, {60'000'000'000, "min"},
                                   {1'000'000'000, "s"},    {1'000'000, "ms"},
                                   {1'000, "us"},           {1, "ns"}};
  const std::int64_t n = t.count();
  if (n == 0) return "0s";
  for (const auto& u : units)
    if (n % u.ns == 0) return std::to_string(n / u.ns) + u.suffix;
  return std::to_string(n) + "ns";
}

std::string detail::type_word(value_type t) {
  switch (t) {
    case value_type::integer:
      return "integer";
    case value_type::boolean:
      return "switch (true or false)";
    case value_type::string:
      return "string";
    case value_type::string_list:
      return "list of strings";
    case value_type::duration:
      return "duration";
    case value_type::real:
      return "number";
  }
  return {};
}


std::string detail::shown_value(const option_def& o, const caf::config_value& v) {
  return o.secret ? std::string("a value (not shown: the option is a secret)") : format_value(v);
}

std::string detail::type_range_default(const option_def& o) {
  std::string out = type_word(o.type);
  const auto range = describe_range(o);
  if (!range.empty()) out += ", " + range;
  return out + ", default " + format_value(o.fallback);
}

std::string format_value(const caf::config_value& v) {
  if (auto t = caf::get_if<caf::timespan>(&v)) return format_duration(*t);
  if (auto d = caf::get_if<double>(&v)) {
    // Shortest text that reads back the same, always with a decimal point:
    // "10" would load back as an integer, which a real option rejects.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, *d);
    std::string text(buf, res.ptr);
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
  }
  if (auto list = caf::get_if<caf::config_value::list>(&v)) {
    std::string out = "[";
    for (const auto& item : *list) {
      if (out.size() > 1) out += ", ";
      out += format_value(item);
    }
    return out + "]";
  }
  return caf::to_string(v);
}

std::string describe_range(const option_def& o) {
  struct visitor {
    std::string operator()(const no_range&) const { return {}; }
    std::string operator()(const integer_range& r) const {
      std::string out = std::to_string(r.lo) + " to " + std::to_string(r.hi);
      return r.extra ? std::to_string(*r.extra) + " or " + out : out;
    }
    std::string operator()(const duration_range& r) const {
      std::string out = format_duration(r.lo) + " to " + format_duration(r.hi);
      return r.extra ? format_duration(*r.extra) + " or " + out : out;
    }
    std::string operator()(const real_range& r) const {
      return format_value(caf::config_value{r.lo}) + " to " + format_value(caf::config_value{r.hi});
    }
    std::string operator()(const choice_set& c) const {
      std::string out;
      for (const auto& n : c.names) out += (out.empty() ? "" : ", ") + n;
      return "one of " + out;
    }
  };
  return std::visit(visitor{}, o.range);
}

std::optional<std::string> check_value(const option_def& o, const caf::config_value& v,
                                       std::string_view as_key) {
  const auto key = as_key.empty() ? o.key() : std::string(as_key);
  if (!has_type(o.type, v))
    return key + ": expected " + expected_text(o.type) + ", got " + shown_value(o, v);
  const auto out_of_range = [&](const std::string& lo, const std::string& hi,
                                const std::optional<std::string>& extra, const std::string& got) {
    return key + " must be " + (extra ? *extra + " or " : std::string()) + "between " + lo +
           " and " + hi + " (got " + got + ")";
  };
  if (auto r = std::get_if<integer_range>(&o.range)) {
    const auto x = *caf::get_if<std::int64_t>(&v);
    if ((x < r->lo || x > r->hi) && x != r->extra)
      return out_of_range(std::to_string(r->lo), std::to_string(r->hi),
                          r->extra ? std::optional<std::string>{std::to_string(*r->extra)}
                                   : std::nullopt,
                          std::to_string(x));
  } else if (auto r = std::get_if<duration_range>(&o.range)) {
    const auto x = *caf::get_if<caf::timespan>(&v);
    if ((x < r->lo || x > r->hi) && x != r->extra)
      return out_of_range(format_duration(r->lo), format_duration(r->hi),
                          r->extra ? std::optional<std::string>{format_duration(*r->extra)}
                                   : std::nullopt,
                          format_duration(x));
  } else if (auto r = std::get_if<real_range>(&o.range)) {
    const double x = (caf::get_if<double>(&v) != nullptr)
                         ? *caf::get_if<double>(&v)
                         : static_cast<double>(*caf::get_if<std::int64_t>(&v));
    if (!(x >= r->lo && x <= r->hi))
      return out_of_range(format_value(caf::config_value{r->lo}),
                          format_value(caf::config_value{r->hi}), std::nullopt,
                          format_value(caf::config_value{x}));
  } else if (auto c = std::get_if<choice_set>(&o.range)) {
    const auto& x = *caf::get_if<std::string>(&v);
    if (std::find(c->names.begin(), c->names.end(), x) == c->names.end())
      return key + ": '" + (o.secret ? std::string("(not shown)") : x) + "' is not " +
             describe_range(o);
  }
  return std::nullopt;
}

std::string expected_text(value_type t) {
  switch (t) {
    case value_type::integer:
      return "an integer";
    case value_type::boolean:
      return "true or false";
    case value_type::string:
      return "a quoted string";
    case value_type::string_list:
      return "a list of strings such as [\"a\", \"b\"]";
    case value_type::duration:
      return "a duration such as 30min, 45s or 500ms";
    case value_type::real:
      return "a number with a decimal point, such as 0.5";
  }
  return {};
}


}  // namespace config
}  // namespace sk
