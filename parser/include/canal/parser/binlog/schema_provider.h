// TableSchemaProvider: where column names and keys come from when the binlog's
// TABLE_MAP has no COLUMN_NAME metadata (binlog_row_metadata=MINIMAL, or servers
// before MySQL 8.0.1 / MariaDB 10.5).
//
// The live-database implementation queries information_schema (replication
// issue); tests use an in-memory one. Called from the decoding thread only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::binlog {

struct SchemaColumn {
  std::string name;
  bool is_key = false;
  bool is_unsigned = false;
  std::string data_type;  // information_schema DATA_TYPE ("int", "varchar", "enum", ...)
  std::string charset;    // "" for non-character columns, "binary" for binary strings
  std::vector<std::string> enum_or_set_labels;
  std::string column_type;  // COLUMN_TYPE as the server prints it ("int(11) unsigned"); may be empty
};

class TableSchemaProvider {
 public:
  virtual ~TableSchemaProvider() = default;
  // Fills *columns with the table's columns in ordinal order. NotFound when the
  // table does not exist (any more); other errors are reported upwards.
  virtual Status GetColumns(std::string_view db, std::string_view table,
                            std::vector<SchemaColumn>* columns) = 0;
  // Drops any cached copy (called after DDL on the table).
  virtual void Invalidate(std::string_view db, std::string_view table) = 0;
};

}  // namespace canal::binlog
