// MariaDB's old-code high-resolution temporal columns (see ColumnInfo::meta):
// their precision, unknown in the binlog, taken from the schema; and their
// values, which RowsReader's checked path hands here.
#include <string>
#include <string_view>

#include "binlog/row_values.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map_decoder.h"

namespace canal::binlog {

namespace {

// N of "timestamp(N)", "datetime(N)" or "time(N)" (0 without parentheses) for
// a column of that type, or kUnknownTemporalPrecision: a schema that calls the
// column something else describes another table than the binlog's.
uint16_t PrecisionOfColumnType(std::string_view column_type, ColumnType type) {
  const size_t open = column_type.find('(');
  // information_schema may add " /* mariadb-5.3 */" (the provider cuts it).
  const std::string_view name = column_type.substr(0, column_type.find_first_of("( "));
  const std::string_view want = type == ColumnType::kTimestamp ? "timestamp"
                                : type == ColumnType::kDateTime ? "datetime"
                                                                : "time";
  if (name != want) return kUnknownTemporalPrecision;
  if (open == std::string_view::npos || name.size() < open) return 0;
  if (column_type.size() < open + 3 || column_type[open + 2] != ')') return kUnknownTemporalPrecision;
  const char d = column_type[open + 1];
  return d >= '0' && d <= '6' ? static_cast<uint16_t>(d - '0') : kUnknownTemporalPrecision;
}

}  // namespace

bool MarkTemporalPrecisionUnknown(TableMap* t) {
  bool any = false;
  for (ColumnInfo& c : t->columns) {
    if (IsOldTemporalColumn(c)) {
      c.meta = kUnknownTemporalPrecision;
      any = true;
    }
  }
  if (any) t->layout_id.Renew();
  return any;
}

bool HasUnknownTemporalPrecision(const TableMap& t) {
  for (const ColumnInfo& c : t.columns) {
    if (IsOldTemporalColumn(c) && c.meta == kUnknownTemporalPrecision) return true;
  }
  return false;
}

void ApplySchemaTemporalPrecision(const std::vector<SchemaColumn>& columns, TableMap* t) {
  const size_t n = columns.size() < t->columns.size() ? columns.size() : t->columns.size();
  for (size_t i = 0; i < n; ++i) {
    ColumnInfo& c = t->columns[i];
    if (IsOldTemporalColumn(c) && c.meta == kUnknownTemporalPrecision) {
      c.meta = PrecisionOfColumnType(columns[i].column_type, c.type);
    }
  }
}

Status ApplySchemaPrecision(TableSchemaProvider* provider, TableMap* t) {
  std::vector<SchemaColumn> cols;
  Status s = provider->GetColumns(t->db, t->table, &cols);
  if (s.IsNotFound()) return Status::OK();  // the rows say what is missing
  if (!s.ok()) return s.WithContext("schema of `" + t->db + "`.`" + t->table + "`");
  if (cols.size() != t->columns.size()) {
    return Status::Corruption("schema of `" + t->db + "`.`" + t->table + "` has " + std::to_string(cols.size()) +
                              " columns but the binlog's TABLE_MAP has " + std::to_string(t->columns.size()) +
                              "; refusing to take temporal precisions from another table");
  }
  ApplySchemaTemporalPrecision(cols, t);
  t->layout_id.Renew();
  return Status::OK();
}

Status RowsReader::ReadMariaHiresTemporal(const ColumnInfo& col, size_t ci, ColumnValue* v) {
  const char* type = col.type == ColumnType::kTimestamp ? "TIMESTAMP" : col.type == ColumnType::kDateTime ? "DATETIME" : "TIME";
  if (col.meta == kUnknownTemporalPrecision) {
    return Error(std::string(type) + " under the old type code (" + std::to_string(static_cast<int>(col.type)) +
                     "), which MariaDB 5.3+ also writes for " + type +
                     "(1..6) made without mysql56_temporal_format, each precision with its own length and no "
                     "metadata saying which; refusing to guess: decode with a schema that knows the column "
                     "(canal-binlog decode --schema FILE, or the server's schema history or information_schema)",
                 ci);
  }
  if (col.meta > 6) return Error("fractional precision " + std::to_string(col.meta) + " (at most 6)", ci);
  const auto fsp = static_cast<uint8_t>(col.meta);
  const size_t n = col.type == ColumnType::kTimestamp ? rows::MariaTimestampBytes(fsp)
                   : col.type == ColumnType::kDateTime ? rows::MariaDateTimeBytes(fsp)
                                                       : rows::MariaTimeBytes(fsp);
  const size_t avail = static_cast<size_t>(end_ - p_);
  if (n > avail) {
    return Error(std::string(type) + "(" + std::to_string(fsp) + ") value of " + std::to_string(n) +
                     " byte(s) runs past the end of the event (" + std::to_string(avail) + " left)",
                 ci);
  }
  const uint64_t be = rows::LoadBE(p_, n);
  const rows::Fill fill = col.type == ColumnType::kTimestamp ? rows::FillMariaTimestamp(be, n - 4, fsp, v)
                          : col.type == ColumnType::kDateTime ? rows::FillMariaDateTime(be, fsp, v)
                                                              : rows::FillMariaTime(be, fsp, v);
  if (fill != rows::Fill::kOk) {
    return Error(std::string(type) + "(" + std::to_string(fsp) + ") value out of range", ci);
  }
  p_ += n;
  return Status::OK();
}

}  // namespace canal::binlog
