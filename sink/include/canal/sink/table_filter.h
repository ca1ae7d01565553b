// TableFilter: which tables' changes an instance (or a client subscription)
// wants, with Canal's filter syntax.
//
// `canal.instance.filter.regex` and `canal.instance.filter.black.regex` are
// comma-separated regular expressions matched, case-insensitively and against
// the whole name, with "schema.table" (so `canal\..*` is every table of schema
// canal, and `.*\..*` everything). A table passes when the include list is
// empty or one of its patterns matches, and no black-list pattern matches.
// Patterns use RE2 (linear time, so a hostile pattern cannot hang the server);
// the few Perl constructs RE2 lacks (backreferences, lookaround) are refused
// at start-up with the pattern quoted.
//
// Patterns here are regular expressions as the regex engine sees them: the
// properties loader has already turned `\\.` in a file into `\.`, as Java's
// Properties does for Canal.
//
// Immutable once built; safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::sink {

class TableFilter {
 public:
  // Builds a filter from the two settings; "" means "no patterns". A bad
  // pattern is InvalidArgument naming `include_key`/`exclude_key` and quoting it.
  static Status Create(std::string_view include_patterns, std::string_view exclude_patterns,
                       std::unique_ptr<TableFilter>* out,
                       std::string_view include_key = "canal.instance.filter.regex",
                       std::string_view exclude_key = "canal.instance.filter.black.regex");
  ~TableFilter();

  // Whether changes of schema.table are wanted.
  bool Accepts(std::string_view schema, std::string_view table) const;

  // The patterns as given (for logs and the subscription echo).
  const std::string& include_text() const { return include_text_; }
  const std::string& exclude_text() const { return exclude_text_; }

  struct Compiled;  // opaque: the compiled alternation of one list

 private:
  TableFilter() = default;
  std::unique_ptr<Compiled> include_, exclude_;
  std::string include_text_, exclude_text_;
};

// Splits Canal's comma-separated pattern list, trimming blanks and dropping
// empty items.
std::vector<std::string> SplitPatterns(std::string_view list);

// `canal.instance.filter.field` / `.black.field`: "db.table:col1/col2,db.t2:c".
// For each table (matched like the table filter), which columns to keep
// (field) or drop (black field). Column names compare case-insensitively.
class FieldFilter {
 public:
  static Status Create(std::string_view spec, std::string_view key, std::unique_ptr<FieldFilter>* out);
  ~FieldFilter();
  // The column list for schema.table, or nullptr when no rule names it.
  const std::vector<std::string>* ColumnsFor(std::string_view schema, std::string_view table) const;
  // With a rule for the table: whether `column` is listed.
  bool Lists(std::string_view schema, std::string_view table, std::string_view column) const;

  struct Rule;  // opaque

 private:
  FieldFilter() = default;
  std::vector<Rule> rules_;
};

}  // namespace canal::sink
