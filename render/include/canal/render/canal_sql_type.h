// Column.sqlType (a java.sql.Types code) as Canal's server sets it, per value
// (library canal_render). Canal does not give a column one type: it takes the
// type its row reader reports for the value it just read, then adjusts it
// (docs/protocol.md "sqlType"):
//   - a NULL keeps the reader's mapping of the binlog type (no adjustment),
//   - an UNSIGNED integer whose value does not fit the signed type of its
//     width is sent one type up (TINYINT 200 -> SMALLINT, INT 3e9 -> BIGINT,
//     BIGINT >= 2^63 -> DECIMAL),
//   - binary strings (BINARY, VARBINARY, BLOB, GEOMETRY) are sent as BLOB and
//     TEXT as CLOB.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::render {

// The sqlType of a non-NULL value of `column` that is not promoted.
int CanalSqlType(const binlog::ColumnInfo& column);

// The sqlType of a NULL value of `column`.
int CanalNullSqlType(const binlog::ColumnInfo& column);

// Unsigned integers: values above `keep_up_to` are sent as `promoted`.
// Other columns: keep_up_to is UINT64_MAX (nothing is promoted).
struct SqlTypePromotion {
  uint64_t keep_up_to = UINT64_MAX;
  int promoted = 0;
};
SqlTypePromotion CanalSqlTypePromotion(const binlog::ColumnInfo& column);

// The sqlType Canal sends with `value` (the three rules above together).
int CanalSqlTypeOf(const binlog::ColumnInfo& column, const binlog::ColumnValue& value);

}  // namespace canal::render
