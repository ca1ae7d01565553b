// TextWriter: the Prometheus text exposition format, version 0.0.4
// (Content-Type: text/plain; version=0.0.4; charset=utf-8).
//
//   # HELP <name> <help, with \ and newline escaped>
//   # TYPE <name> counter|gauge|histogram|untyped
//   <name>{<label>="<value, with \ " and newline escaped>",...} <value>
//
// One family at a time: Family() starts it (its HELP and TYPE lines), then
// Sample() / HistogramSample() add its series. A histogram series becomes
// <name>_bucket{...,le="<bound>"} for each bound and le="+Inf", then
// <name>_sum and <name>_count. A family with no series still writes its
// HELP and TYPE (Prometheus accepts that), so a dashboard sees the family.
//
// Names are checked, not trusted: a metric name must match
// [a-zA-Z_:][a-zA-Z0-9_:]*, a label name [a-zA-Z_][a-zA-Z0-9_]* and not start
// with "__"; "le" is reserved in histograms; a family may appear once. A
// violation writes nothing for that call (so one bad series never corrupts
// the rest of the page) and is kept: the call returns false and status()
// holds the first violation (an InvalidArgument naming it). A page built from
// constant names checks status() once, at the end, instead of every call.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/common/status.h"
#include "canal/metrics/metric.h"

namespace canal::metrics {

enum class MetricType : uint8_t { kCounter, kGauge, kHistogram, kUntyped };

using Label = std::pair<std::string_view, std::string_view>;
using Labels = std::vector<Label>;

bool ValidMetricName(std::string_view name);
bool ValidLabelName(std::string_view name);
// A label value or HELP text escaped for the format (`quote`: also ").
void AppendEscaped(std::string_view text, bool quote, std::string* out);
// A sample value: integers exactly, others shortest round-trip, NaN, +Inf, -Inf.
void AppendValue(double value, std::string* out);

class TextWriter {
 public:
  // Each returns false, writing nothing, for a violation (see status()).
  bool Family(std::string_view name, std::string_view help, MetricType type);
  // A counter, gauge or untyped sample of the current family.
  bool Sample(const Labels& labels, double value);
  // A histogram series of the current (histogram) family.
  bool HistogramSample(const Labels& labels, const HistogramSnapshot& histogram);

  // The first violation so far, and how many calls were refused in all.
  const Status& status() const { return first_error_; }
  size_t refused() const { return refused_; }

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  Status CheckLabels(const Labels& labels, bool histogram) const;
  bool Refuse(Status violation);
  void AppendSeries(std::string_view suffix, const Labels& labels, const Label* extra, double value);

  std::string out_;
  std::string family_;
  MetricType type_ = MetricType::kUntyped;
  bool open_ = false;
  std::set<std::string, std::less<>> seen_;
  Status first_error_;
  size_t refused_ = 0;
};

}  // namespace canal::metrics
