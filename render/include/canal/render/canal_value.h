// Canal's strings for the decoder's typed values (library canal_render): a
// column value as the text Canal clients expect (CANAL_PROTOCOL.md "Value
// strings"), Column.sqlType (java.sql.Types) and Column.mysqlType. Used by the
// sink (entries) and the tools (canal-binlog decode); the decoder itself
// produces ColumnValue and ColumnInfo and knows nothing of Canal's forms.
//
// Pure functions; thread-safe. Output is appended, so a caller can reuse one
// std::string across rows without allocating.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::render {

using binlog::ColumnInfo;
using binlog::ColumnValue;

// Whose text FLOAT/DOUBLE values and Column.mysqlType follow
// (canal.instance.value.format; canal-binlog decode --value-format).
enum class TextForms : uint8_t {
  // Canal's: FLOAT/DOUBLE as Java's String.valueOf prints them ("100.0", "1.0E7",
  // "1.23E-5"); mysqlType as the server's SHOW CREATE TABLE ("int(11)" on MariaDB
  // and MySQL before 8.0.19).
  kCanal,
  // MySQL's: FLOAT/DOUBLE as the shortest round-trip digits in MySQL's notation
  // ("100", "10000000", "0.0000123"; exponents below 1e-15 and from 1e15: "1e15");
  // mysqlType without display widths.
  kMysql,
};

struct ValueFormatOptions {
  TextForms forms = TextForms::kCanal;
  // Canal's mode: ENUM as 1-based index, SET as bitmask, binary as ISO-8859-1
  // (one char per byte, UTF-8 encoded). Readable mode: ENUM/SET labels, binary as base64.
  bool readable = false;
  // Offset applied to TIMESTAMP values, in seconds east of UTC (default UTC).
  int32_t timestamp_utc_offset_seconds = 0;
};

// Appends the Canal text of `value` (which must be present and not NULL) for
// `column` to *out. JSON that fails to decode is an error; everything else renders.
Status AppendCanalValue(const ColumnValue& value, const ColumnInfo& column,
                        const ValueFormatOptions& options, std::string* out);

// Values whose Canal text is short, bounded ASCII that needs no JSON escaping:
// integers (not readable ENUM/SET, which print labels), YEAR, FLOAT/DOUBLE,
// DECIMAL and the temporal kinds. WriteCanalFixedText writes that text at
// `out`, which must have room for kCanalFixedTextMax chars, and returns its
// end; for any other value, and a DECIMAL whose bytes are not one (whose error
// AppendCanalValue returns), it returns nullptr, the chars at `out`
// unspecified. It is what AppendCanalValue appends for them. Callers with
// their own buffers (the sink, the tools' JSON lines) skip the std::string.
inline constexpr size_t kCanalFixedTextMax = 128;
char* WriteCanalFixedText(const ColumnValue& value, const ColumnInfo& column, const ValueFormatOptions& options,
                          char* out);

// The size AppendCanalValue would append, when it is known without rendering:
// binary values (ISO-8859-1 or base64) and strings in charsets that copy
// through or are single-byte; false otherwise (then render to learn it).
bool CanalValueSize(const ColumnValue& value, const ColumnInfo& column, const ValueFormatOptions& options,
                    size_t* size);

// MySQL type text Canal puts in Column.mysqlType. Canal's forms: the schema's
// COLUMN_TYPE when a schema provider supplied the column ("int(10) unsigned
// zerofill", "tinyint(1)"); otherwise derived from the binlog type, with the
// integer display widths the server prints when `integer_display_widths`
// (TableMap::integer_display_widths): "int(11)", "varchar(255)", ... MySQL's
// forms: always derived, without display widths ("int", "tinyint unsigned").
std::string CanalMysqlType(const ColumnInfo& column, const ValueFormatOptions& options = {},
                           bool integer_display_widths = false);

}  // namespace canal::render
