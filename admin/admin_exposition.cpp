#include "admin/admin_exposition.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>

namespace sk::admin_api {

namespace {

const char* type_name(metric_type t) noexcept {
  switch (t) {
    case metric_type::counter:
      return "counter";
    case metric_type::gauge:
      return "gauge";
    case metric_type::histogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

void exposition::family::sample(std::string_view labels, double value) {
  out_->write(index_, {}, labels, value);
}

void exposition::family::series(std::string_view suffix, std::string_view labels, double value) {
  out_->write(index_, suffix, labels, value);
}

exposition::family exposition::add(std::string_view name, metric_type type, std::string_view help) {
  for (const auto& n : names_)
    if (n == name) throw std::logic_error("metric family " + n + " defined twice");
  names_.emplace_back(name);
  text_.append("# HELP ").append(name).append(" ").append(help).append("\n");
  text_.append("# TYPE ").append(name).append(" ").append(type_name(type)).append("\n");
  return family{*this, names_.size() - 1};
}

void exposition::write(std::size_t index, std::string_view suffix, std::string_view labels,
                       double value) {
  // Samples follow their own HELP/TYPE lines: only the newest family writes.
  if (index + 1 != names_.size())
    throw std::logic_error("sample of metric family " + names_[index] + " after another family");
  text_.append(names_[index]).append(suffix);
  if (!labels.empty()) text_.append("{").append(labels).append("}");
  text_.append(" ").append(format(value)).append("\n");
}

std::string exposition::format(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<std::int64_t>(v));
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string label(std::string_view name, std::string_view value) {
  std::string out(name);
  out += "=\"";
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  out += '"';
  return out;
}

}  // namespace sk::admin_api
