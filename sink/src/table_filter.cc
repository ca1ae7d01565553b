#include "canal/sink/table_filter.h"

#include <re2/re2.h>

#include <algorithm>

#include "canal/common/ascii_case.h"
#include "canal/common/trim.h"

namespace canal::sink {

namespace {

RE2::Options PatternOptions() {
  RE2::Options o;
  o.set_case_sensitive(false);
  o.set_log_errors(false);
  o.set_encoding(RE2::Options::EncodingUTF8);
  return o;
}

}  // namespace

std::vector<std::string> SplitPatterns(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = Trim(list.substr(start, comma - start));
    if (!item.empty()) out.emplace_back(item);
    start = comma + 1;
  }
  return out;
}

// One alternation of every pattern, each anchored as a whole-name match.
struct TableFilter::Compiled {
  std::unique_ptr<RE2> re;
};

static Status Compile(std::string_view list, std::string_view key, std::unique_ptr<TableFilter::Compiled>* out);

TableFilter::~TableFilter() = default;

Status TableFilter::Create(std::string_view include_patterns, std::string_view exclude_patterns,
                           std::unique_ptr<TableFilter>* out, std::string_view include_key,
                           std::string_view exclude_key) {
  std::unique_ptr<TableFilter> f(new TableFilter());
  f->include_text_ = std::string(include_patterns);
  f->exclude_text_ = std::string(exclude_patterns);
  CANAL_RETURN_IF_ERROR(Compile(include_patterns, include_key, &f->include_));
  CANAL_RETURN_IF_ERROR(Compile(exclude_patterns, exclude_key, &f->exclude_));
  *out = std::move(f);
  return Status::OK();
}

static Status Compile(std::string_view list, std::string_view key, std::unique_ptr<TableFilter::Compiled>* out) {
  out->reset();
  std::vector<std::string> patterns = SplitPatterns(list);
  if (patterns.empty()) return Status::OK();
  std::string joined;
  for (const auto& p : patterns) {
    // Check each alone first, so the error quotes the pattern at fault.
    RE2 one(p, PatternOptions());
    if (!one.ok()) {
      return Status::InvalidArgument(std::string(key) + ": pattern '" + p + "' is not a valid regular expression (" +
                                     one.error() + "); patterns are comma-separated RE2 expressions matched "
                                     "against schema.table, e.g. canal\\..*");
    }
    if (!joined.empty()) joined += '|';
    joined += "(?:" + p + ")";
  }
  auto c = std::make_unique<TableFilter::Compiled>();
  c->re = std::make_unique<RE2>(joined, PatternOptions());
  if (!c->re->ok()) {
    return Status::InvalidArgument(std::string(key) + ": patterns '" + std::string(list) +
                                   "' do not combine into one expression: " + c->re->error());
  }
  *out = std::move(c);
  return Status::OK();
}

bool TableFilter::Accepts(std::string_view schema, std::string_view table) const {
  if (!include_ && !exclude_) return true;
  // A stack buffer for the common case keeps the per-row check allocation-free.
  char buf[256];
  std::string heap;
  std::string_view name;
  const size_t n = schema.size() + 1 + table.size();
  if (n <= sizeof buf) {
    std::copy(schema.begin(), schema.end(), buf);
    buf[schema.size()] = '.';
    std::copy(table.begin(), table.end(), buf + schema.size() + 1);
    name = std::string_view(buf, n);
  } else {
    heap.reserve(n);
    heap.append(schema).append(".").append(table);
    name = heap;
  }
  if (include_ && !RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *include_->re)) return false;
  if (exclude_ && RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *exclude_->re)) return false;
  return true;
}

struct FieldFilter::Rule {
  std::unique_ptr<RE2> table;  // whole-name, case-insensitive
  std::vector<std::string> columns;
};

FieldFilter::~FieldFilter() = default;

Status FieldFilter::Create(std::string_view spec, std::string_view key, std::unique_ptr<FieldFilter>* out) {
  std::unique_ptr<FieldFilter> f(new FieldFilter());
  for (const std::string& item : SplitPatterns(spec)) {
    size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
      return Status::InvalidArgument(std::string(key) + ": '" + item +
                                     "' is not db.table:col1/col2 (a table pattern, a colon, and '/'-separated columns)");
    }
    Rule r;
    std::string table(Trim(std::string_view(item).substr(0, colon)));
    r.table = std::make_unique<RE2>(table, PatternOptions());
    if (!r.table->ok()) {
      return Status::InvalidArgument(std::string(key) + ": table pattern '" + table + "' is not a valid regular expression (" +
                                     r.table->error() + ")");
    }
    std::string_view cols = std::string_view(item).substr(colon + 1);
    size_t start = 0;
    while (start <= cols.size()) {
      size_t slash = cols.find('/', start);
      if (slash == std::string_view::npos) slash = cols.size();
      std::string_view c = Trim(cols.substr(start, slash - start));
      if (!c.empty()) r.columns.emplace_back(c);
      start = slash + 1;
    }
    if (r.columns.empty()) return Status::InvalidArgument(std::string(key) + ": '" + item + "' names no columns");
    f->rules_.push_back(std::move(r));
  }
  *out = std::move(f);
  return Status::OK();
}

const std::vector<std::string>* FieldFilter::ColumnsFor(std::string_view schema, std::string_view table) const {
  if (rules_.empty()) return nullptr;
  std::string name;
  name.reserve(schema.size() + 1 + table.size());
  name.append(schema).append(".").append(table);
  for (const auto& r : rules_) {
    if (RE2::FullMatch(name, *r.table)) return &r.columns;
  }
  return nullptr;
}

bool FieldFilter::Lists(std::string_view schema, std::string_view table, std::string_view column) const {
  const auto* cols = ColumnsFor(schema, table);
  if (cols == nullptr) return false;
  return std::any_of(cols->begin(), cols->end(), [&](const std::string& c) { return AsciiEqualsIgnoreCase(c, column); });
}

}  // namespace canal::sink
