// SchemaHistory: the column lists of the tables in a destination's scope, moved
// forward by replaying DDL from the binlog (ddl.h).
//
// This is the in-memory state at one position; the snapshot it starts from and
// its storage live elsewhere. Tables outside the scope are not tracked and DDL
// on them never fails. Single-threaded (the parse thread).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "canal/common/status.h"
#include "canal/schema/ddl.h"
#include "canal/schema/table_schema.h"

namespace canal::schema {

class SchemaHistory {
 public:
  // True when db.table is in the destination's scope (its filter).
  using Scope = std::function<bool(std::string_view db, std::string_view table)>;

  explicit SchemaHistory(Scope scope = nullptr, std::string server_charset = "latin1")
      : scope_(std::move(scope)), server_charset_(NormalizeCharset(server_charset)) {}

  // Snapshot input: a table as the primary shows it, a database's default charset.
  void PutTable(TableSchema table);
  void PutDatabase(std::string_view db, std::string_view charset);

  // Replays one statement. NotFound when it acts on a table in scope that the
  // history does not know (the history is incomplete: the caller stops);
  // InvalidArgument when the statement contradicts the history (a column it
  // names is absent). Tables outside the scope are ignored.
  Status Apply(const DdlStatement& ddl);
  // ParseDdl + Apply; `default_db` is the QUERY event's database.
  Status ApplySql(std::string_view sql, std::string_view default_db, const LexerOptions& options = {});

  const TableSchema* Find(std::string_view db, std::string_view table) const;
  const std::map<std::pair<std::string, std::string>, TableSchema>& tables() const { return tables_; }
  const std::map<std::string, std::string>& databases() const { return db_charsets_; }
  bool InScope(std::string_view db, std::string_view table) const { return !scope_ || scope_(db, table); }

 private:
  using Key = std::pair<std::string, std::string>;
  std::string DatabaseCharset(std::string_view db) const;
  // Fills the charset a column takes from its table and sizes TEXT(n)/BLOB(n).
  void ResolveColumn(const TableSchema& table, Column* col) const;
  Status ApplyAlter(const DdlStatement& ddl, TableSchema* table);
  Status ApplyAlterOp(const AlterOp& op, TableSchema* table);

  Scope scope_;
  std::string server_charset_;
  std::map<Key, TableSchema> tables_;
  std::map<std::string, std::string> db_charsets_;
};

}  // namespace canal::schema
