#pragma once
/// A declarative routing table: rows of (method, path pattern) → handler.
///
/// A pattern is a path of literal segments and `{name}` parameters:
/// "/api/swarms/{hash}/policy". Paths and patterns are compared segment by
/// segment after splitting on '/' and dropping empty segments, so
/// "/api//node/" is "/api/node". A parameter matches any one segment, raw
/// (not percent-decoded: the handler decides what the segment means).
///
///   match(method, path)
///     no row's pattern matches the path ─────────▶ not_found        (404)
///     patterns match, none for this method ──────▶ method_not_allowed (405;
///                                                  `allowed` lists theirs)
///     else the first row (table order) whose pattern and method match
///                                              ─▶ found, with its parameters
///
/// Methods compare exactly (HTTP methods are case-sensitive).

#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

namespace sk::admin_api {

/// The non-empty segments of `path` ("/a//b/" is {"a", "b"}); views into it.
std::vector<std::string_view> split_path(std::string_view path);

/// The `{name}` segments of a matched pattern; values are views into the
/// matched path, which must outlive them.
class path_params {
 public:
  /// The value of parameter `name`, or nullptr when the pattern has none.
  const std::string_view* find(std::string_view name) const noexcept;
  std::size_t size() const noexcept { return values_.size(); }
  void add(std::string_view name, std::string_view value) { values_.emplace_back(name, value); }
  void clear() noexcept { values_.clear(); }

 private:
  std::vector<std::pair<std::string_view, std::string_view>> values_;
};

/// Whether `pattern` matches the segments of a path; on a match, `params`
/// holds its parameters (on a mismatch, its contents are unspecified).
bool match_pattern(std::string_view pattern, const std::vector<std::string_view>& segments,
                   path_params& params);

enum class route_outcome { found, not_found, method_not_allowed };

/// A routing table whose rows carry a `Handler` (a function pointer, a small
/// struct). Patterns and methods are string views: the table refers to
/// string literals, or to storage that outlives it.
template <class Handler>
class route_table {
 public:
  struct route {
    std::string_view method;
    std::string_view pattern;
    Handler handler;
  };

  struct match_result {
    route_outcome outcome = route_outcome::not_found;
    /// The row that matched (found only).
    const route* row = nullptr;
    path_params params;
    /// method_not_allowed: the methods the path takes, in table order, each
    /// once.
    std::vector<std::string_view> allowed;
  };

  route_table(std::initializer_list<route> routes) : routes_(routes) {}

  match_result match(std::string_view method, std::string_view path) const {
    match_result out;
    const auto segments = split_path(path);
    path_params params;
    for (const route& r : routes_) {
      params.clear();
      if (!match_pattern(r.pattern, segments, params)) continue;
      if (r.method == method) {
        out.outcome = route_outcome::found;
        out.row = &r;
        out.params = std::move(params);
        out.allowed.clear();
        return out;
      }
      bool listed = false;
      for (auto m : out.allowed) listed = listed || m == r.method;
      if (!listed) out.allowed.push_back(r.method);
    }
    out.outcome =
        out.allowed.empty() ? route_outcome::not_found : route_outcome::method_not_allowed;
    return out;
  }

  const std::vector<route>& routes() const noexcept { return routes_; }

 private:
  std::vector<route> routes_;
};

}  // namespace sk::admin_api
