#pragma once
/// A writer of the Prometheus text exposition format 0.0.4 that keeps each
/// metric family in one place:
///
///   # HELP <name> <help>
///   # TYPE <name> counter|gauge|histogram
///   <name>{<labels>} <value>           one line per sample, right after
///   <name>_bucket{...,le="..."} <v>    (histograms: _bucket, _sum, _count)
///
/// A family is started once (`add`); starting a name a second time, or
/// writing a family's sample after another family started, throws
/// std::logic_error: the exposition would be invalid (Prometheus rejects a
/// repeated family) and a metric must be defined exactly once.

#include <string>
#include <string_view>
#include <vector>

namespace sk::admin_api {

enum class metric_type { counter, gauge, histogram };

class exposition {
 public:
  /// Writes the samples of one family (a small handle; the exposition must
  /// outlive it).
  class family {
   public:
    /// `name{labels} value`; no braces when `labels` is empty.
    void sample(std::string_view labels, double value);
    /// `name<suffix>{labels} value`, for a histogram's series (`_bucket`,
    /// `_sum`, `_count`).
    void series(std::string_view suffix, std::string_view labels, double value);

   private:
    friend class exposition;
    family(exposition& out, std::size_t index) : out_(&out), index_(index) {}
    exposition* out_;
    std::size_t index_;
  };

  /// Starts family `name` (HELP and TYPE lines).
  family add(std::string_view name, metric_type type, std::string_view help);

  /// The text so far.
  const std::string& text() const noexcept { return text_; }
  /// The families started so far, in order.
  const std::vector<std::string>& families() const noexcept { return names_; }

  /// A sample value: integers without a fraction, NaN, +Inf, -Inf, else 17
  /// significant digits (enough to read the same double back).
  static std::string format(double v);

 private:
  void write(std::size_t index, std::string_view suffix, std::string_view labels, double value);

  std::string text_;
  std::vector<std::string> names_;
};

/// `name="value"` with the value escaped as the format asks (backslash,
/// double quote, line feed).
std::string label(std::string_view name, std::string_view value);

}  // namespace sk::admin_api
