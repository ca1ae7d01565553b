#include "canal/snapshot/chunk_query.h"

namespace canal::snapshot {
namespace {

Status BadWhere(std::string_view what, size_t offset, std::string_view fix) {
  return Status::InvalidArgument("--where: " + std::string(what) + " at byte " + std::to_string(offset) + "; " +
                                 std::string(fix));
}

std::string KeyList(const TableShape& shape, const ChunkKey& key) {
  std::string s;
  for (size_t i = 0; i < key.columns.size(); ++i) {
    if (i) s += ", ";
    s += QuoteIdentifier(shape.columns[key.columns[i]].name);
  }
  return s;
}

}  // namespace

std::string QuoteIdentifier(std::string_view name) {
  std::string s;
  s.reserve(name.size() + 2);
  s += '`';
  for (char c : name) {
    if (c == '`') s += '`';
    s += c;
  }
  s += '`';
  return s;
}

Status CheckWhereClause(std::string_view where) {
  if (where.size() > kMaxWhereClauseBytes) {
    return Status::InvalidArgument("--where is " + std::to_string(where.size()) + " bytes; at most " +
                                   std::to_string(kMaxWhereClauseBytes) + " are accepted");
  }
  if (where.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("--where is blank; leave it out to read every row");
  }
  int depth = 0;
  char quote = 0;  // the open quote, or 0
  size_t quote_at = 0;
  for (size_t i = 0; i < where.size(); ++i) {
    const char c = where[i];
    if (c == '\\') return BadWhere("a backslash", i, "write a quote inside a string by doubling it ('it''s')");
    if (c == '\0') return BadWhere("a NUL byte", i, "remove it");
    if (quote) {
      if (c == quote) {
        // A doubled quote stays inside the string.
        if (i + 1 < where.size() && where[i + 1] == quote) {
          ++i;
        } else {
          quote = 0;
        }
      }
      continue;
    }
    switch (c) {
      case '\'':
      case '"':
      case '`':
        quote = c;
        quote_at = i;
        break;
      case '(':
        ++depth;
        break;
      case ')':
        if (--depth < 0) return BadWhere("a ')' that closes no '('", i, "balance the parentheses");
        break;
      case ';':
        return BadWhere("a ';'", i, "give one condition, not statements");
      case '#':
        return BadWhere("a comment ('#')", i, "remove the comment");
      case '-':
        if (i + 1 < where.size() && where[i + 1] == '-') return BadWhere("a comment ('--')", i, "remove the comment");
        break;
      case '/':
        if (i + 1 < where.size() && where[i + 1] == '*') return BadWhere("a comment ('/*')", i, "remove the comment");
        break;
      default:
        break;
    }
  }
  if (quote) return BadWhere(std::string("a quote (") + quote + ") never closed", quote_at, "close the string");
  if (depth != 0) return BadWhere("a '(' never closed", where.size(), "balance the parentheses");
  return Status::OK();
}

Status PlanChunkQuery(const TableShape& shape, const ChunkKey& key, std::string_view where, uint64_t chunk_rows,
                      ChunkQuery* query) {
  *query = ChunkQuery{};
  const std::string table = QuoteIdentifier(shape.schema) + "." + QuoteIdentifier(shape.table);
  if (shape.columns.empty()) return Status::InvalidArgument(table + " has no columns");
  if (!where.empty()) CANAL_RETURN_IF_ERROR(CheckWhereClause(where).WithContext(table));
  for (size_t c : key.columns) {
    if (c >= shape.columns.size()) {
      return Status::InvalidArgument("the chunk key of " + table + " names column " + std::to_string(c) + " of " +
                                     std::to_string(shape.columns.size()));
    }
  }

  std::string select = "SELECT ";
  for (size_t i = 0; i < shape.columns.size(); ++i) {
    if (i) select += ", ";
    select += QuoteIdentifier(shape.columns[i].name);
  }
  select += " FROM " + table;
  const std::string filter = where.empty() ? std::string() : "(" + std::string(where) + ")";

  if (key.kind == ChunkKey::Kind::kNone || key.columns.empty()) {
    query->first = select + (filter.empty() ? "" : " WHERE " + filter);
    return Status::OK();
  }
  if (chunk_rows == 0) return Status::InvalidArgument(table + ": a chunk of 0 rows reads nothing");

  select += " FORCE INDEX (" + QuoteIdentifier(key.index) + ")";
  const std::string keys = KeyList(shape, key);
  const std::string tail = " ORDER BY " + keys + " LIMIT ?";

  query->first = select + (filter.empty() ? "" : " WHERE " + filter) + tail;

  // After the last key (k1, ..., kn), spelled out as the ranges it is:
  //   `a` > ? OR (`a` = ? AND `b` > ?) OR (`a` = ? AND `b` = ? AND `c` > ?) ...
  // MariaDB's range optimiser turns that into index ranges, but not the row comparison
  // (`a`, `b`) > (?, ?), which it reads from the index's start on every chunk (EXPLAIN: type
  // index, not range), so paging a table that way costs quadratic reads.
  std::string after;
  for (size_t i = 0; i < key.columns.size(); ++i) {
    if (i) after += " OR ";
    if (i) after += "(";
    for (size_t j = 0; j < i; ++j) {
      after += QuoteIdentifier(shape.columns[key.columns[j]].name) + " = ? AND ";
      query->parameter_keys.push_back(j);
    }
    after += QuoteIdentifier(shape.columns[key.columns[i]].name) + " > ?";
    query->parameter_keys.push_back(i);
    if (i) after += ")";
  }
  if (key.columns.size() > 1) after = "(" + after + ")";
  query->next = select + " WHERE " + after + (filter.empty() ? "" : " AND " + filter) + tail;
  query->parameters = query->parameter_keys.size();
  return Status::OK();
}

}  // namespace canal::snapshot
