// Chunk rows as the stream's values (library canal_snapshot_render): a row ChunkReader read by
// SELECT becomes the decoder's typed values (binlog::ColumnValue) under the column descriptions
// (binlog::ColumnInfo) the binlog's TABLE_MAP gives the same table, so that render/ (the one
// formatter, canal/render/canal_value.h) prints a snapshot value exactly as it prints the same
// value read from the binlog: Column.value in every TextForms and readable mode, isNull, sqlType
// and mysqlType.
//
// What the two sides carry differently, and how it is mapped:
//   - ENUM and SET: the binlog carries the index and the bitmask, SELECT the labels; the labels
//     are looked up in the column's (COLUMN_TYPE). An unknown label is an error, never a guess.
//   - DECIMAL: SELECT sends the text; it is packed into the binlog's binary DECIMAL.
//   - BIT: SELECT sends the bytes, big-endian, as the binlog; YEAR a number (0 for 0000).
//   - TIMESTAMP: the binlog carries a UTC epoch; the reader's session is UTC, so the fields are
//     that instant (the rendering applies the configured offset to both alike).
//   - TIME: hours past 23 (and days) folded into hours, as the binlog's TIME2.
//   - Text: the reader's connection sends it in utf8mb4, converted by the server from the
//     column's charset; it is rendered as utf8mb4 text (a copy through). The stream converts the
//     column's bytes itself (binlog::AppendAsUtf8): the same UTF-8 for every character both know.
//     Bytes the column's charset does not define may differ ('?' from the server, U+FFFD from ours).
//   - Binary strings, BLOB, GEOMETRY: the same bytes on both sides.
//   - MariaDB's JSON is LONGTEXT on both sides. MySQL's binary JSON (and the readers of MySQL,
//     which ChunkReader refuses today) would come as text: marked json_is_text.
//   - MariaDB's INET4, INET6 and UUID: SELECT sends text, the binlog the stored bytes (as
//     BINARY(4) / BINARY(16)): the text is parsed back into them (MariaDB 10.11's order for UUID).
//     Other types without a binlog mapping (VECTOR, ...) are refused by Init, naming the column.
//
// Column descriptions: built from the TableShape (LoadTableShape fills the needed fields) as a
// MariaDB 10.5+ binlog with binlog_row_metadata FULL describes the table (names, keys,
// signedness, collations, ENUM/SET labels from the binlog; mysqlType derived from the binlog's
// types), or, with `schema_column_type`, as MINIMAL metadata plus the schema provider does
// (mysqlType from COLUMN_TYPE). A caller that holds the stream's own TableMap for the table can
// pass its columns instead (Init with columns), which is exact by construction.
//
// No allocation per row once the buffers have grown (DECIMAL bytes, key text). Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/render/canal_value.h"
#include "canal/snapshot/chunk_key.h"
#include "canal/snapshot/chunk_window.h"
#include "canal/snapshot/field_value.h"

namespace canal::snapshot {

struct SnapshotColumnOptions {
  // mysqlType from the schema's COLUMN_TYPE (binlog_row_metadata MINIMAL: the sink names the
  // columns from a schema provider); false: derived from the binlog's types (FULL).
  bool schema_column_type = false;
  // The server prints integer display widths ("int(11)"): MariaDB, MySQL before 8.0.19.
  bool integer_display_widths = true;
};

// The ColumnInfos a binlog TABLE_MAP of `shape`'s table gives (see above). NotSupported naming
// the table and column for a type this does not map (INET4, INET6, UUID, VECTOR, ...),
// InvalidArgument for a column whose COLUMN_TYPE cannot be read.
Status BinlogColumnsOf(const TableShape& shape, const SnapshotColumnOptions& options,
                       std::vector<binlog::ColumnInfo>* columns);

class SnapshotRowConverter {
 public:
  // Binary columns whose SELECT value is text of their stored bytes (MariaDB's INET4, INET6, UUID).
  enum class TextForm : uint8_t { kAsIs, kInet4, kInet6, kUuid };

  // Columns built by BinlogColumnsOf.
  Status Init(const TableShape& shape, const SnapshotColumnOptions& options);
  // The stream's own columns for the table (its TableMap's), one per shape column.
  Status Init(const TableShape& shape, std::vector<binlog::ColumnInfo> columns, bool integer_display_widths);

  // One chunk row (ChunkRow::fields) as the decoder's values; views into `fields` and the
  // converter's buffers, valid until the next Convert. InvalidArgument naming the table, the
  // column and the value when one cannot be mapped.
  Status Convert(std::span<const FieldValue> fields);
  std::span<const binlog::ColumnValue> values() const { return values_; }
  const std::vector<binlog::ColumnInfo>& columns() const { return columns_; }
  // The columns values() are rendered under: columns() with text columns in utf8mb4, the charset
  // the reader's connection receives text in (so a latin1 value is not converted twice).
  const std::vector<binlog::ColumnInfo>& render_columns() const { return text_columns_; }
  bool integer_display_widths() const { return integer_display_widths_; }

  // Column.value of value `i` of the last Convert (not NULL), appended: render's text, through
  // the same call the sink makes.
  Status AppendValue(size_t i, const render::ValueFormatOptions& options, std::string* out) const;
  // Column.sqlType of value `i` (NULL or not), and Column.mysqlType of column `i`.
  int SqlType(size_t i) const;
  std::string MysqlType(size_t i, const render::ValueFormatOptions& options) const;

  // The chunk window's key of the last converted row (chunk_window.h): the key columns' values
  // as AppendStreamKey writes them for a stream row.
  Status AppendKey(const ChunkKey& key, KeyEncoder* encoder);

 private:
  // How a column's non-NULL values are converted on the fast path, fixed by its type at Init:
  // the value's constant parts (type, fraction digits) are set once, a row sets only its kind
  // and value. kGeneral (and any value the fast path cannot take) goes through ConvertOne.
  enum class Route : uint8_t { kGeneral, kSigned, kUnsigned, kDouble, kDecimal, kText, kBytes, kDateTime, kDate };

  Status Fail(size_t i, std::string_view why, std::string_view value) const;
  Status ConvertOne(size_t i, const FieldValue& f, binlog::ColumnValue* v);
  Route RouteOf(size_t i) const;
  bool ConvertFast(size_t i, const FieldValue& f, binlog::ColumnValue* v) const;

  std::string table_;  // `db`.`table`, for errors
  std::vector<binlog::ColumnInfo> columns_;
  std::vector<binlog::ColumnInfo> text_columns_;  // columns_ with text received as utf8mb4
  bool integer_display_widths_ = true;
  // ENUM/SET labels to their index, per column (empty for other columns).
  struct LabelHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::unordered_map<std::string, uint32_t, LabelHash, std::equal_to<>>> labels_;
  std::vector<binlog::ColumnValue> values_;
  std::vector<std::string> scratch_;  // per column: DECIMAL's binary bytes, INET/UUID's stored bytes; reused
  std::vector<TextForm> text_forms_;
  std::vector<Route> routes_;
};

// The chunk window's key of a stream row: `values` (a row image of the table, every key column
// present) at the key's columns, each rendered by render/ in Canal's default form, as
// SnapshotRowConverter::AppendKey renders a chunk row's (straight into the encoder).
Status AppendStreamKey(const binlog::TableMap& table, std::span<const binlog::ColumnValue> values,
                       const ChunkKey& key, KeyEncoder* encoder);

}  // namespace canal::snapshot
