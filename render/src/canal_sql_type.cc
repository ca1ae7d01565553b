// Canal's Column.sqlType rules, read from its row reader (RowsLogBuffer's
// mysqlToJavaType for NULLs, fetchValue for values) and its converter
// (LogEventConvert: unsigned promotion, BLOB/CLOB). docs/protocol.md keeps the
// table; tests/render/canal_sql_type_test.cc checks every row of it.
#include "canal/render/canal_sql_type.h"

#include "canal/parser/binlog/column_text.h"

namespace canal::render {

using binlog::ColumnInfo;
using binlog::ColumnType;
using binlog::ColumnValue;

namespace {

// java.sql.Types codes.
constexpr int kSqlBit = -7;
constexpr int kSqlTinyInt = -6;
constexpr int kSqlBigInt = -5;
constexpr int kSqlLongVarBinary = -4;
constexpr int kSqlVarBinary = -3;
constexpr int kSqlBinary = -2;
constexpr int kSqlChar = 1;
constexpr int kSqlDecimal = 3;
constexpr int kSqlInteger = 4;
constexpr int kSqlSmallInt = 5;
constexpr int kSqlReal = 7;
constexpr int kSqlDouble = 8;
constexpr int kSqlVarchar = 12;
constexpr int kSqlDate = 91;
constexpr int kSqlTime = 92;
constexpr int kSqlTimestamp = 93;
constexpr int kSqlOther = 1111;
constexpr int kSqlBlob = 2004;
constexpr int kSqlClob = 2005;

// The types both rules agree on; 0 for the rest.
int CommonSqlType(ColumnType t) {
  switch (t) {
    case ColumnType::kTiny: return kSqlTinyInt;
    case ColumnType::kShort: return kSqlSmallInt;
    case ColumnType::kInt24:
    case ColumnType::kLong: return kSqlInteger;
    case ColumnType::kLongLong: return kSqlBigInt;
    case ColumnType::kFloat: return kSqlReal;
    case ColumnType::kDouble: return kSqlDouble;
    case ColumnType::kDecimal:
    case ColumnType::kNewDecimal: return kSqlDecimal;
    case ColumnType::kBit: return kSqlBit;
    case ColumnType::kEnum: return kSqlInteger;
    case ColumnType::kDate:
    case ColumnType::kNewDate: return kSqlDate;
    case ColumnType::kTime:
    case ColumnType::kTime2: return kSqlTime;
    case ColumnType::kTimestamp:
    case ColumnType::kTimestamp2:
    case ColumnType::kDateTime:
    case ColumnType::kDateTime2: return kSqlTimestamp;
    case ColumnType::kYear: return kSqlVarchar;
    // Not a type Canal reads (its reader would fail on a value): a binary
    // payload, like a BLOB, whether NULL or not.
    case ColumnType::kVector: return kSqlBlob;
    default: return 0;
  }
}

}  // namespace

int CanalSqlType(const ColumnInfo& column) {
  const ColumnType t = binlog::EffectiveType(column);
  if (const int common = CommonSqlType(t); common != 0) return common;
  const bool binary = binlog::IsBinaryCharset(column.charset);
  switch (t) {
    case ColumnType::kSet: return kSqlBit;
    case ColumnType::kVarchar:
    case ColumnType::kVarString: return binary ? kSqlBlob : kSqlVarchar;
    case ColumnType::kString: return binary ? kSqlBlob : kSqlChar;
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob: return binlog::IsTextBlob(column) ? kSqlClob : kSqlBlob;
    case ColumnType::kGeometry: return kSqlBlob;
    case ColumnType::kJson: return kSqlVarchar;
    default: return kSqlOther;
  }
}

int CanalNullSqlType(const ColumnInfo& column) {
  const ColumnType t = binlog::EffectiveType(column);
  if (const int common = CommonSqlType(t); common != 0) return common;
  const bool binary = binlog::IsBinaryCharset(column.charset);
  switch (t) {
    case ColumnType::kSet: return kSqlBinary;
    case ColumnType::kVarchar:
    case ColumnType::kVarString: return binary ? kSqlVarBinary : kSqlVarchar;
    case ColumnType::kString: return binary ? kSqlBinary : kSqlChar;
    // Text or not: the reader knows only the length's size (meta 1 = TINY).
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob: return column.meta == 1 ? kSqlVarBinary : kSqlLongVarBinary;
    case ColumnType::kGeometry: return kSqlBinary;
    default: return kSqlOther;  // MySQL's JSON among them: the reader maps no type for it
  }
}

SqlTypePromotion CanalSqlTypePromotion(const ColumnInfo& column) {
  if (!column.is_unsigned) return {};
  switch (binlog::EffectiveType(column)) {
    case ColumnType::kTiny: return {INT8_MAX, kSqlSmallInt};
    case ColumnType::kShort: return {INT16_MAX, kSqlInteger};
    case ColumnType::kLong: return {INT32_MAX, kSqlBigInt};
    case ColumnType::kLongLong: return {INT64_MAX, kSqlDecimal};
    default: return {};  // MEDIUMINT UNSIGNED goes one up to INTEGER, which it already is
  }
}

int CanalSqlTypeOf(const ColumnInfo& column, const ColumnValue& value) {
  if (value.is_null()) return CanalNullSqlType(column);
  if (value.kind == ColumnValue::Kind::kUnsigned) {
    const SqlTypePromotion p = CanalSqlTypePromotion(column);
    if (value.u64 > p.keep_up_to) return p.promoted;
  }
  return CanalSqlType(column);
}

}  // namespace canal::render
