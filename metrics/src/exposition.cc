#include "canal/metrics/exposition.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace canal::metrics {

namespace {

bool NameChar(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kUntyped:
      break;
  }
  return "untyped";
}

}  // namespace

bool ValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, /*colon=*/true)) return false;
  }
  return true;
}

bool ValidLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, /*colon=*/false)) return false;
  }
  return true;
}

void AppendEscaped(std::string_view text, bool quote, std::string* out) {
  for (char c : text) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (quote && c == '"') {
      *out += "\\\"";
    } else {
      *out += c;
    }
  }
}

void AppendValue(double value, std::string* out) {
  if (std::isnan(value)) {
    *out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    *out += value > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[64];
  std::to_chars_result r;
  // Counters and most gauges are integers: print them without an exponent.
  if (value == std::trunc(value) && std::fabs(value) < 9.007199254740992e15) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(value));
  } else {
    r = std::to_chars(buf, buf + sizeof buf, value);
  }
  out->append(buf, r.ptr);
}

bool TextWriter::Family(std::string_view name, std::string_view help, MetricType type) {
  // Until a family is accepted, samples have none to go to (never the last one).
  open_ = false;
  if (!ValidMetricName(name)) {
    return Refuse(Status::InvalidArgument("metric name \"" + std::string(name) + "\" is not [a-zA-Z_:][a-zA-Z0-9_:]*"));
  }
  if (seen_.contains(name)) {
    return Refuse(Status::InvalidArgument("metric family " + std::string(name) + " written twice"));
  }
  seen_.emplace(name);
  family_.assign(name);
  type_ = type;
  open_ = true;
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  AppendEscaped(help, /*quote=*/false, &out_);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += TypeName(type);
  out_ += '\n';
  return true;
}

Status TextWriter::CheckLabels(const Labels& labels, bool histogram) const {
  if (!open_) return Status::InvalidArgument("a sample with no metric family open (none yet, or the last was refused)");
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string_view name = labels[i].first;
    if (!ValidLabelName(name)) {
      return Status::InvalidArgument("label name \"" + std::string(name) + "\" of " + family_ +
                                     " is not [a-zA-Z_][a-zA-Z0-9_]* or starts with __");
    }
    if (histogram && name == "le") {
      return Status::InvalidArgument("label le is reserved for the buckets of histogram " + family_);
    }
    for (size_t j = 0; j < i; ++j) {
      if (labels[j].first == name) {
        return Status::InvalidArgument("label " + std::string(name) + " repeated in a series of " + family_);
      }
    }
  }
  return Status::OK();
}

void TextWriter::AppendSeries(std::string_view suffix, const Labels& labels, const Label* extra, double value) {
  out_ += family_;
  out_ += suffix;
  if (!labels.empty() || extra != nullptr) {
    out_ += '{';
    bool first = true;
    const auto add = [&](const Label& l) {
      if (!first) out_ += ',';
      first = false;
      out_ += l.first;
      out_ += "=\"";
      AppendEscaped(l.second, /*quote=*/true, &out_);
      out_ += '"';
    };
    for (const Label& l : labels) add(l);
    if (extra != nullptr) add(*extra);
    out_ += '}';
  }
  out_ += ' ';
  AppendValue(value, &out_);
  out_ += '\n';
}

bool TextWriter::Refuse(Status violation) {
  if (refused_++ == 0) first_error_ = std::move(violation);
  return false;
}

bool TextWriter::Sample(const Labels& labels, double value) {
  if (Status s = CheckLabels(labels, false); !s.ok()) return Refuse(std::move(s));
  if (type_ == MetricType::kHistogram) {
    return Refuse(Status::InvalidArgument("a plain sample in histogram " + family_ + " (use HistogramSample)"));
  }
  AppendSeries("", labels, nullptr, value);
  return true;
}

bool TextWriter::HistogramSample(const Labels& labels, const HistogramSnapshot& h) {
  if (Status s = CheckLabels(labels, true); !s.ok()) return Refuse(std::move(s));
  if (type_ != MetricType::kHistogram) {
    return Refuse(Status::InvalidArgument("a histogram sample in " + std::string(TypeName(type_)) + " " + family_));
  }
  if (h.cumulative.size() != h.bounds.size()) {
    return Refuse(Status::InvalidArgument("histogram " + family_ + ": bucket counts and bounds differ in number"));
  }
  std::string bound;
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    bound.clear();
    AppendValue(h.bounds[i], &bound);
    const Label le{"le", bound};
    AppendSeries("_bucket", labels, &le, static_cast<double>(h.cumulative[i]));
  }
  const Label inf{"le", "+Inf"};
  AppendSeries("_bucket", labels, &inf, static_cast<double>(h.count));
  AppendSeries("_sum", labels, nullptr, h.sum);
  AppendSeries("_count", labels, nullptr, static_cast<double>(h.count));
  return true;
}

}  // namespace canal::metrics
