// EventTypeFilter: Canal's switches that drop whole kinds of changes.
//
//   canal.instance.filter.query.dml        drop statement-format DML (INSERT/UPDATE/... as SQL)
//   canal.instance.filter.query.ddl        drop DDL statements
//   canal.instance.filter.query.dcl        drop DCL statements (GRANT, REVOKE, CREATE/DROP/ALTER/RENAME USER, SET PASSWORD)
//   canal.instance.filter.dml.insert       drop inserted rows
//   canal.instance.filter.dml.update       drop updated rows
//   canal.instance.filter.dml.delete       drop deleted rows
//   canal.instance.filter.transaction.entry  drop TRANSACTIONBEGIN/END entries
//
// All default to false (keep everything), as in Canal. A dropped change still
// moves the position forward (the sink's job). A plain value; thread-compatible.
#pragma once

#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog/event_type.h"
#include "canal/schema/statement.h"

namespace canal::sink {

// The project's one classifier decides (canal/schema/statement.h).
using StatementKind = canal::schema::StatementKind;

// What kind of statement `sql` is, by its leading keywords.
StatementKind ClassifyStatementKind(std::string_view sql);

struct EventTypeFilter {
  bool query_dml = false;
  bool query_ddl = false;
  bool query_dcl = false;
  bool dml_insert = false;
  bool dml_update = false;
  bool dml_delete = false;
  bool transaction_entry = false;

  // Sets one of the keys above from its properties text ("true"/"false", any
  // case, blanks trimmed). NotFound for another key; InvalidArgument naming key
  // and value for anything but true/false.
  Status Set(std::string_view key, std::string_view value);

  bool DropsRows(binlog::RowsKind kind) const;
  bool DropsStatement(std::string_view sql) const;
  bool DropsKind(StatementKind kind) const;
  bool DropsTransactionEntries() const { return transaction_entry; }
};

}  // namespace canal::sink
