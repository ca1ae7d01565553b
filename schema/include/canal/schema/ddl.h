// The DDL parser: the statements that change tables' columns, read into a small
// description the schema history applies. Our own lexer + recursive descent.
//
// ParseDdl answers one of:
//   - a statement the history applies (kind != kNoColumnChange/kNotDdl);
//   - kNoColumnChange: DDL known not to touch any column (CREATE INDEX, VIEW,
//     TRIGGER, partitions, table options, ...);
//   - kNotDdl: not DDL at all (DML, DCL, BEGIN, ...);
//   - NotSupported: a form that may change columns and that the parser does not
//     understand. The caller stops (never guesses); the message names the
//     statement's offset and the words it could not read.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canal/common/status.h"
#include "canal/schema/sql_lexer.h"
#include "canal/schema/table_schema.h"

namespace canal::schema {

struct ColumnPosition {
  enum class Kind : uint8_t { kLast, kFirst, kAfter } kind = Kind::kLast;
  std::string after;
};

struct AlterOp {
  enum class Kind : uint8_t {
    kAddColumn,       // column, position, if_not_exists
    kDropColumn,      // name, if_exists
    kChangeColumn,    // name (old), column (new definition), position, if_exists (MODIFY: name == column.name)
    kRenameColumn,    // name -> new_name
    kAddPrimaryKey,   // key_columns
    kDropPrimaryKey,
    kConvertCharset,  // charset, collation: every character column
    kTableCharset,    // charset, collation: the table default only
  } kind = Kind::kAddColumn;
  Column column;
  bool inline_primary_key = false;  // ADD/MODIFY ... PRIMARY KEY
  ColumnPosition position;
  std::string name, new_name;
  std::vector<std::string> key_columns;
  std::string charset, collation;
  bool if_exists = false, if_not_exists = false;
};

struct TableRef {
  std::string db, name;
  bool operator==(const TableRef&) const = default;
};

struct DdlStatement {
  enum class Kind : uint8_t {
    kNotDdl,
    kNoColumnChange,
    kCreateTable,     // table, columns (+ primary_key), charset/collation, or like
    kCreateTableLike, // table, like
    kAlterTable,      // table, ops, rename_to (empty name when none)
    kRenameTables,    // renames: pairs (from, to)
    kDropTables,      // tables
    kTruncate,        // tables[0]
    kCreateDatabase,  // database, charset/collation
    kAlterDatabase,   // database, charset/collation
    kDropDatabase,    // database
  } kind = Kind::kNotDdl;
  TableRef table;  // db filled from the default database when unqualified
  std::vector<Column> columns;
  std::vector<std::string> primary_key;  // table-level PRIMARY KEY (a, b)
  std::string charset, collation;
  TableRef like;
  std::vector<AlterOp> ops;
  TableRef rename_to;
  std::vector<std::pair<TableRef, TableRef>> renames;
  std::vector<TableRef> tables;
  std::string database;
  bool if_exists = false, if_not_exists = false, or_replace = false;
  std::string note;  // for kNoColumnChange: what it is ("CREATE INDEX")
};

// `default_db` is the QUERY event's database (used for unqualified names).
Status ParseDdl(std::string_view sql, std::string_view default_db, const LexerOptions& options,
                DdlStatement* out);

}  // namespace canal::schema
