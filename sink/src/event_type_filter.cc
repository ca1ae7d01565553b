#include "canal/sink/event_type_filter.h"

#include <cctype>
#include <string>

namespace canal::sink {

namespace {

// Upper-cased leading words of `sql` (skipping blanks and /* comments */).
std::string Words(std::string_view sql, int count) {
  std::string out;
  size_t i = 0;
  for (int w = 0; w < count; ++w) {
    while (true) {
      while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
      if (i + 1 < sql.size() && sql[i] == '/' && sql[i + 1] == '*') {
        size_t end = sql.find("*/", i + 2);
        i = end == std::string_view::npos ? sql.size() : end + 2;
        continue;
      }
      break;
    }
    if (i >= sql.size()) break;
    if (!out.empty()) out.push_back(' ');
    while (i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[i])) || sql[i] == '_')) {
      out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i]))));
      ++i;
    }
  }
  return out;
}

bool StartsWith(const std::string& s, std::string_view p) {
  return s.compare(0, p.size(), p) == 0 && (s.size() == p.size() || s[p.size()] == ' ');
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

StatementKind ClassifyStatementKind(std::string_view sql) {
  const std::string w = Words(sql, 2);
  for (std::string_view p : {"GRANT", "REVOKE", "CREATE USER", "DROP USER", "ALTER USER", "RENAME USER",
                             "SET PASSWORD", "CREATE ROLE", "DROP ROLE", "SET ROLE", "SET DEFAULT"}) {
    if (StartsWith(w, p)) return StatementKind::kDcl;
  }
  for (std::string_view p : {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD"}) {
    if (StartsWith(w, p)) return StatementKind::kDml;
  }
  for (std::string_view p : {"CREATE", "ALTER", "DROP", "TRUNCATE", "RENAME"}) {
    if (StartsWith(w, p)) return StatementKind::kDdl;
  }
  return StatementKind::kOther;
}

Status EventTypeFilter::Set(std::string_view key, std::string_view value) {
  bool* field = nullptr;
  if (key == "canal.instance.filter.query.dml") field = &query_dml;
  else if (key == "canal.instance.filter.query.ddl") field = &query_ddl;
  else if (key == "canal.instance.filter.query.dcl") field = &query_dcl;
  else if (key == "canal.instance.filter.dml.insert") field = &dml_insert;
  else if (key == "canal.instance.filter.dml.update") field = &dml_update;
  else if (key == "canal.instance.filter.dml.delete") field = &dml_delete;
  else if (key == "canal.instance.filter.transaction.entry") field = &transaction_entry;
  if (field == nullptr) return Status::NotFound(std::string(key) + " is not an event-type filter key");
  std::string v(Trim(value));
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true") {
    *field = true;
  } else if (v == "false") {
    *field = false;
  } else {
    return Status::InvalidArgument(std::string(key) + " = '" + std::string(value) + "': expected true or false");
  }
  return Status::OK();
}

bool EventTypeFilter::DropsRows(binlog::RowsKind kind) const {
  switch (kind) {
    case binlog::RowsKind::kWrite: return dml_insert;
    case binlog::RowsKind::kUpdate: return dml_update;
    case binlog::RowsKind::kDelete: return dml_delete;
  }
  return false;
}

bool EventTypeFilter::DropsStatement(std::string_view sql) const {
  switch (ClassifyStatementKind(sql)) {
    case StatementKind::kDml: return query_dml;
    case StatementKind::kDdl: return query_ddl;
    case StatementKind::kDcl: return query_dcl;
    case StatementKind::kOther: return false;
  }
  return false;
}

}  // namespace canal::sink
