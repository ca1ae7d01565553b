// Column.sqlType per value, as Canal's server sets it (render/canal_sql_type.h;
// the rules read from Canal's RowsLogBuffer and LogEventConvert, table in
// docs/protocol.md "sqlType"): one test per rule, and every binlog type for a
// value and for a NULL.
#include <gtest/gtest.h>

#include <cstdint>

#include "canal/render/canal_sql_type.h"

namespace canal::render {
namespace {

using binlog::ColumnInfo;
using binlog::ColumnType;
using binlog::ColumnValue;
using Kind = ColumnValue::Kind;

constexpr uint32_t kUtf8mb4 = 45, kLatin1 = 8, kBinary = 63;

ColumnInfo Col(ColumnType type, uint32_t charset = 0, bool is_unsigned = false) {
  ColumnInfo c;
  c.type = type;
  c.real_type = type;
  c.charset = charset;
  c.is_unsigned = is_unsigned;
  return c;
}

ColumnInfo StringCol(ColumnType real_type, uint32_t charset = kUtf8mb4) {
  ColumnInfo c = Col(ColumnType::kString, charset);
  c.real_type = real_type;
  return c;
}

ColumnInfo Blob(uint32_t charset, uint16_t length_bytes) {
  ColumnInfo c = Col(ColumnType::kBlob, charset);
  c.meta = length_bytes;
  return c;
}

ColumnValue Unsigned(uint64_t v) {
  ColumnValue x;
  x.kind = Kind::kUnsigned;
  x.u64 = v;
  return x;
}

ColumnValue Signed(int64_t v) {
  ColumnValue x;
  x.kind = Kind::kSigned;
  x.i64 = v;
  return x;
}

ColumnValue Null() {
  ColumnValue x;
  x.kind = Kind::kNull;
  return x;
}

TEST(CanalSqlType, ValuesFollowTheProtocolTable) {
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kTiny)), -6);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kShort)), 5);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kInt24)), 4);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kLong)), 4);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kLongLong)), -5);
  // Unsigned columns start at their width's type; only a big value moves up.
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kLongLong, 0, true)), -5);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kLong, 0, true)), 4);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kFloat)), 7);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kDouble)), 8);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kNewDecimal)), 3);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kBit)), -7);
  EXPECT_EQ(CanalSqlType(StringCol(ColumnType::kEnum)), 4);
  EXPECT_EQ(CanalSqlType(StringCol(ColumnType::kSet)), -7);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kDate)), 91);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kTime2)), 92);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kTime)), 92);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kDateTime2)), 93);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kDateTime)), 93);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kTimestamp2)), 93);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kTimestamp)), 93);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kYear)), 12);
  EXPECT_EQ(CanalSqlType(StringCol(ColumnType::kString, kUtf8mb4)), 1);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kVarchar, kUtf8mb4)), 12);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kVarchar)), 12);
  // Binary strings are sent as BLOB, text blobs as CLOB (LogEventConvert).
  EXPECT_EQ(CanalSqlType(StringCol(ColumnType::kString, kBinary)), 2004);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kVarchar, kBinary)), 2004);
  EXPECT_EQ(CanalSqlType(Blob(kUtf8mb4, 2)), 2005);
  EXPECT_EQ(CanalSqlType(Blob(kLatin1, 1)), 2005);
  EXPECT_EQ(CanalSqlType(Blob(kBinary, 3)), 2004);
  EXPECT_EQ(CanalSqlType(Blob(0, 4)), 2005);  // charset unknown: text, as decoded
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kGeometry)), 2004);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kVector)), 2004);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kJson)), 12);
  EXPECT_EQ(CanalSqlType(Col(ColumnType::kTypedArray)), 1111);
  EXPECT_EQ(CanalSqlType(Col(static_cast<ColumnType>(100))), 1111);
}

TEST(CanalSqlType, NullsKeepTheReadersTypeOfTheBinlogColumn) {
  // Integers, unsigned or not: the width's type.
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kTiny, 0, true)), -6);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kShort, 0, true)), 5);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kInt24, 0, true)), 4);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kLong, 0, true)), 4);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kLongLong, 0, true)), -5);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kNewDecimal)), 3);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kBit)), -7);
  EXPECT_EQ(CanalNullSqlType(StringCol(ColumnType::kEnum)), 4);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kDateTime2)), 93);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kYear)), 12);
  // Where the value's own type differs, the NULL's is the reader's mapping.
  EXPECT_EQ(CanalNullSqlType(StringCol(ColumnType::kSet)), -2);
  EXPECT_EQ(CanalNullSqlType(StringCol(ColumnType::kString, kBinary)), -2);
  EXPECT_EQ(CanalNullSqlType(StringCol(ColumnType::kString, kUtf8mb4)), 1);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kVarchar, kBinary)), -3);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kVarchar, kUtf8mb4)), 12);
  EXPECT_EQ(CanalNullSqlType(Blob(kBinary, 1)), -3);   // TINYBLOB
  EXPECT_EQ(CanalNullSqlType(Blob(kUtf8mb4, 1)), -3);  // TINYTEXT: text or not, by length size
  EXPECT_EQ(CanalNullSqlType(Blob(kBinary, 2)), -4);
  EXPECT_EQ(CanalNullSqlType(Blob(kUtf8mb4, 4)), -4);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kGeometry)), -2);
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kJson)), 1111);  // MySQL's JSON: the reader maps none
  EXPECT_EQ(CanalNullSqlType(Col(ColumnType::kVector)), 2004);
}

TEST(CanalSqlType, UnsignedValuesPastTheSignedRangeGoOneTypeUp) {
  struct Case {
    ColumnType type;
    uint64_t fits, exceeds;
    int base, promoted;
  };
  const Case cases[] = {
      {ColumnType::kTiny, 127, 128, -6, 5},
      {ColumnType::kShort, 32767, 32768, 5, 4},
      {ColumnType::kLong, 2147483647, 2147483648u, 4, -5},
      {ColumnType::kLongLong, INT64_MAX, uint64_t{1} << 63, -5, 3},
  };
  for (const Case& c : cases) {
    const ColumnInfo col = Col(c.type, 0, true);
    EXPECT_EQ(CanalSqlTypeOf(col, Unsigned(0)), c.base) << static_cast<int>(c.type);
    EXPECT_EQ(CanalSqlTypeOf(col, Unsigned(c.fits)), c.base) << static_cast<int>(c.type);
    EXPECT_EQ(CanalSqlTypeOf(col, Unsigned(c.exceeds)), c.promoted) << static_cast<int>(c.type);
    EXPECT_EQ(CanalSqlTypeOf(col, Null()), c.base) << static_cast<int>(c.type);
    const SqlTypePromotion p = CanalSqlTypePromotion(col);
    EXPECT_EQ(p.keep_up_to, c.fits);
    EXPECT_EQ(p.promoted, c.promoted);
  }
  // MEDIUMINT UNSIGNED is INTEGER either way; signed columns never move.
  EXPECT_EQ(CanalSqlTypeOf(Col(ColumnType::kInt24, 0, true), Unsigned(16777215)), 4);
  EXPECT_EQ(CanalSqlTypePromotion(Col(ColumnType::kInt24, 0, true)).keep_up_to, UINT64_MAX);
  EXPECT_EQ(CanalSqlTypeOf(Col(ColumnType::kTiny), Signed(-128)), -6);
  EXPECT_EQ(CanalSqlTypePromotion(Col(ColumnType::kLongLong)).keep_up_to, UINT64_MAX);
  // The examples: 200 -> SMALLINT, 40000 -> INTEGER, 3e9 -> BIGINT.
  EXPECT_EQ(CanalSqlTypeOf(Col(ColumnType::kTiny, 0, true), Unsigned(200)), 5);
  EXPECT_EQ(CanalSqlTypeOf(Col(ColumnType::kShort, 0, true), Unsigned(40000)), 4);
  EXPECT_EQ(CanalSqlTypeOf(Col(ColumnType::kLong, 0, true), Unsigned(3000000000u)), -5);
}

}  // namespace
}  // namespace canal::render
