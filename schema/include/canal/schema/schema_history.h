// SchemaHistory: the column lists of every table, moved forward by replaying
// DDL from the binlog (ddl.h).
//
// This is the in-memory state at one position; the snapshot it starts from and
// its storage live elsewhere. Every table is tracked, whatever the scope: an
// online schema change (gh-ost, pt-online-schema-change) builds a shadow table
// outside the destination's filter and renames it into it. The scope decides
// only what is an error: a DDL contradicting the history of a table in scope
// fails; outside it, the table becomes unknown. A table the history cannot know
// exactly (renamed from or created LIKE a table it does not hold, changed by a
// DDL it does not understand) is absent, with the reason (Unknown()); it is
// never guessed. Single-threaded (the parse thread).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

  // Replays one statement. InvalidArgument when it contradicts the history of
  // a table in scope (a column it names is absent): the history is wrong, the
  // caller stops. The same outside the scope, and a statement acting on a
  // table the history lacks, leave that table unknown (noted, not an error).
  Status Apply(const DdlStatement& ddl);
  // ParseDdl + Apply; `default_db` is the QUERY event's database. A statement
  // the parser does not understand leaves the table it names unknown; one
  // naming no table is NotSupported. `parsed` (optional) gets the statement.
  Status ApplySql(std::string_view sql, std::string_view default_db, const LexerOptions& options = {},
                  DdlStatement* parsed = nullptr);
  // Forgets a table's columns, keeping why (Unknown()).
  void MarkUnknown(std::string_view db, std::string_view table, std::string reason);
  // Why a table is not held (empty: it was never seen, or it was dropped).
  std::string Unknown(std::string_view db, std::string_view table) const;
  // A table made unknown, and why.
  struct UnknownNote {
    std::string db, table, reason;
  };
  // Tables made unknown since the last call (for the log and the caller's bookkeeping).
  std::vector<UnknownNote> TakeNotes() { return std::exchange(notes_, {}); }

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
  // A failed step on one table: an error in scope, the table unknown outside it.
  Status FailOn(std::string_view db, std::string_view table, Status s);

  Scope scope_;
  std::string server_charset_;
  std::map<Key, TableSchema> tables_;
  std::map<std::string, std::string> db_charsets_;
  std::map<Key, std::string> unknown_;  // absent tables whose absence has a reason
  std::vector<UnknownNote> notes_;
};

}  // namespace canal::schema
