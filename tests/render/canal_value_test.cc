// Canal value strings, Column.sqlType and Column.mysqlType, and the per-type
// facts in column_type.h.
#include <gtest/gtest.h>

#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "canal/common/utf8.h"
#include "canal/render/canal_value.h"

namespace canal::binlog {
namespace {

// The renderer under test; the values and columns it takes are the decoder's.
using render::AppendCanalValue;
using render::CanalMysqlType;
using render::TextForms;
using render::ValueFormatOptions;

using Kind = ColumnValue::Kind;

constexpr uint32_t kUtf8mb4 = 45, kUtf8mb3 = 33, kLatin1 = 8, kBinary = 63, kGbk = 28;

ColumnInfo Col(ColumnType type, uint32_t charset = 0) {
  ColumnInfo c;
  c.type = type;
  c.real_type = type;
  c.charset = charset;
  return c;
}

// A STRING column whose metadata unfolds to ENUM/SET/STRING, as TABLE_MAP writes them.
ColumnInfo StringCol(ColumnType real_type, uint32_t charset = kUtf8mb4) {
  ColumnInfo c = Col(ColumnType::kString, charset);
  c.real_type = real_type;
  return c;
}

ColumnValue Signed(int64_t v, ColumnType t = ColumnType::kLong) {
  ColumnValue x;
  x.kind = Kind::kSigned;
  x.type = t;
  x.i64 = v;
  return x;
}

ColumnValue Unsigned(uint64_t v, ColumnType t = ColumnType::kLong) {
  ColumnValue x;
  x.kind = Kind::kUnsigned;
  x.type = t;
  x.u64 = v;
  return x;
}

ColumnValue Raw(Kind kind, ColumnType t, std::string_view raw) {
  ColumnValue x;
  x.kind = kind;
  x.type = t;
  x.raw = raw;
  return x;
}

ColumnValue Temporal(Kind kind, ColumnType t, TemporalValue tv, uint8_t fsp = 0) {
  ColumnValue x;
  x.kind = kind;
  x.type = t;
  x.temporal = tv;
  x.fsp = fsp;
  return x;
}

ColumnValue Timestamp(uint64_t seconds, uint32_t micros = 0, uint8_t fsp = 0) {
  ColumnValue x;
  x.kind = Kind::kTimestamp;
  x.type = ColumnType::kTimestamp2;
  x.u64 = seconds;
  x.timestamp_micros = micros;
  x.fsp = fsp;
  return x;
}

TemporalValue Date(uint16_t y, uint8_t mo, uint8_t d) {
  TemporalValue t;
  t.year = y;
  t.month = mo;
  t.day = d;
  return t;
}

TemporalValue DateTime(uint16_t y, uint8_t mo, uint8_t d, uint32_t h, uint8_t mi, uint8_t s,
                       uint32_t us = 0) {
  TemporalValue t = Date(y, mo, d);
  t.hour = h;
  t.minute = mi;
  t.second = s;
  t.micros = us;
  return t;
}

TemporalValue Time(bool negative, uint32_t h, uint8_t mi, uint8_t s, uint32_t us = 0) {
  TemporalValue t = DateTime(0, 0, 0, h, mi, s, us);
  t.negative = negative;
  return t;
}

std::string Render(const ColumnValue& v, const ColumnInfo& c, ValueFormatOptions options = {}) {
  std::string out;
  Status s = AppendCanalValue(v, c, options, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

ValueFormatOptions Readable() {
  ValueFormatOptions o;
  o.readable = true;
  return o;
}

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

ValueFormatOptions Forms(TextForms forms) {
  ValueFormatOptions o;
  o.forms = forms;
  return o;
}

std::string Float(float f, TextForms forms) {
  ColumnValue v;
  v.kind = Kind::kFloat;
  v.type = ColumnType::kFloat;
  v.f32 = f;
  return Render(v, Col(ColumnType::kFloat), Forms(forms));
}

std::string Double(double d, TextForms forms) {
  ColumnValue v;
  v.kind = Kind::kDouble;
  v.type = ColumnType::kDouble;
  v.f64 = d;
  return Render(v, Col(ColumnType::kDouble), Forms(forms));
}

std::string MysqlFloat(float f) { return Float(f, TextForms::kMysql); }
std::string MysqlDouble(double d) { return Double(d, TextForms::kMysql); }

// ---------------------------------------------------------------- integers

TEST(CanalValue, IntegersPrintSignedOrUnsignedAsDecoded) {
  const ColumnInfo c = Col(ColumnType::kLongLong);
  EXPECT_EQ(Render(Signed(0, ColumnType::kLongLong), c), "0");
  EXPECT_EQ(Render(Signed(-128, ColumnType::kTiny), Col(ColumnType::kTiny)), "-128");
  EXPECT_EQ(Render(Signed(INT64_MIN, ColumnType::kLongLong), c), "-9223372036854775808");
  EXPECT_EQ(Render(Signed(INT64_MAX, ColumnType::kLongLong), c), "9223372036854775807");
  EXPECT_EQ(Render(Unsigned(UINT64_MAX, ColumnType::kLongLong), c), "18446744073709551615");
  EXPECT_EQ(Render(Unsigned(4294967295u, ColumnType::kLong), Col(ColumnType::kLong)), "4294967295");
  EXPECT_EQ(Render(Unsigned(255, ColumnType::kTiny), Col(ColumnType::kTiny)), "255");
}

TEST(CanalValue, BitIsUnsignedIntegerText) {
  const ColumnInfo c = Col(ColumnType::kBit);
  EXPECT_EQ(Render(Unsigned(0, ColumnType::kBit), c), "0");
  EXPECT_EQ(Render(Unsigned(5, ColumnType::kBit), c), "5");
  EXPECT_EQ(Render(Unsigned(UINT64_MAX, ColumnType::kBit), c), "18446744073709551615");
  EXPECT_EQ(Render(Unsigned(5, ColumnType::kBit), c, Readable()), "5");
}

TEST(CanalValue, YearIsFourDigitsAndZeroYearIs0000) {
  const ColumnInfo c = Col(ColumnType::kYear);
  EXPECT_EQ(Render(Signed(0, ColumnType::kYear), c), "0000");
  EXPECT_EQ(Render(Signed(1901, ColumnType::kYear), c), "1901");
  EXPECT_EQ(Render(Signed(2155, ColumnType::kYear), c), "2155");
  EXPECT_EQ(Render(Unsigned(0, ColumnType::kYear), c), "0000");
  EXPECT_EQ(Render(Unsigned(2024, ColumnType::kYear), c), "2024");
}

TEST(CanalValue, TypeFallsBackToTheColumnWhenTheValueLeavesItUnset) {
  ColumnValue v = Signed(0, ColumnType::kNull);
  EXPECT_EQ(Render(v, Col(ColumnType::kYear)), "0000");
}

// ---------------------------------------------------------------- ENUM / SET

TEST(CanalValue, EnumIsItsIndexInCanalModeAndItsLabelInReadableMode) {
  ColumnInfo c = StringCol(ColumnType::kEnum);
  c.enum_or_set_labels = {"small", "medium", "large"};
  EXPECT_EQ(Render(Unsigned(2, ColumnType::kEnum), c), "2");
  EXPECT_EQ(Render(Unsigned(0, ColumnType::kEnum), c), "0");
  EXPECT_EQ(Render(Unsigned(1, ColumnType::kEnum), c, Readable()), "small");
  EXPECT_EQ(Render(Unsigned(3, ColumnType::kEnum), c, Readable()), "large");
  // 0 is MySQL's error value, shown as the empty string.
  EXPECT_EQ(Render(Unsigned(0, ColumnType::kEnum), c, Readable()), "");
}

TEST(CanalValue, ReadableEnumFallsBackToTheIndexWithoutALabel) {
  ColumnInfo c = StringCol(ColumnType::kEnum);
  EXPECT_EQ(Render(Unsigned(2, ColumnType::kEnum), c, Readable()), "2");
  c.enum_or_set_labels = {"a"};
  EXPECT_EQ(Render(Unsigned(2, ColumnType::kEnum), c, Readable()), "2");
  EXPECT_EQ(Render(Unsigned(65535, ColumnType::kEnum), c, Readable()), "65535");
}

TEST(CanalValue, ReadableEnumLabelsAreConvertedFromTheColumnCharset) {
  ColumnInfo c = StringCol(ColumnType::kEnum, kLatin1);
  c.enum_or_set_labels = {Bytes({'c', 'a', 'f', 0xE9})};
  EXPECT_EQ(Render(Unsigned(1, ColumnType::kEnum), c, Readable()), "caf\xC3\xA9");
}

TEST(CanalValue, SetIsItsBitmaskInCanalModeAndItsLabelsInReadableMode) {
  ColumnInfo c = StringCol(ColumnType::kSet);
  c.enum_or_set_labels = {"a", "b", "c", "d"};
  EXPECT_EQ(Render(Unsigned(5, ColumnType::kSet), c), "5");
  EXPECT_EQ(Render(Unsigned(5, ColumnType::kSet), c, Readable()), "a,c");
  EXPECT_EQ(Render(Unsigned(15, ColumnType::kSet), c, Readable()), "a,b,c,d");
  EXPECT_EQ(Render(Unsigned(8, ColumnType::kSet), c, Readable()), "d");
  EXPECT_EQ(Render(Unsigned(0, ColumnType::kSet), c, Readable()), "");
}

TEST(CanalValue, ReadableSetFallsBackToTheBitmaskWhenABitHasNoLabel) {
  ColumnInfo c = StringCol(ColumnType::kSet);
  c.enum_or_set_labels = {"a", "b"};
  EXPECT_EQ(Render(Unsigned(4, ColumnType::kSet), c, Readable()), "4");
  EXPECT_EQ(Render(Unsigned(uint64_t{1} << 63, ColumnType::kSet), c, Readable()),
            "9223372036854775808");
  c.enum_or_set_labels.clear();
  EXPECT_EQ(Render(Unsigned(1, ColumnType::kSet), c, Readable()), "1");
}

TEST(CanalValue, ReadableSetHandlesAll64Members) {
  ColumnInfo c = StringCol(ColumnType::kSet);
  for (int i = 0; i < 64; ++i) c.enum_or_set_labels.push_back("m" + std::to_string(i));
  EXPECT_EQ(Render(Unsigned((uint64_t{1} << 63) | 1, ColumnType::kSet), c, Readable()), "m0,m63");
}

// ---------------------------------------------------------------- FLOAT / DOUBLE

TEST(CanalValue, MysqlFormsFloatUsesShortestRoundTripDigits) {
  // TextForms::kMysql (canal.instance.value.format = mysql): MySQL's notation.
  EXPECT_EQ(MysqlFloat(1.5f), "1.5");
  EXPECT_EQ(MysqlFloat(1.0f), "1");
  EXPECT_EQ(MysqlFloat(0.0f), "0");
  EXPECT_EQ(MysqlFloat(-0.0f), "-0");
  EXPECT_EQ(MysqlFloat(0.1f), "0.1");
  EXPECT_EQ(MysqlFloat(0.5f), "0.5");
  EXPECT_EQ(MysqlFloat(-2.5f), "-2.5");
  EXPECT_EQ(MysqlFloat(3.14159f), "3.14159");  // MySQL would round to 6 digits; same here
  EXPECT_EQ(MysqlFloat(123456789.0f), "123456790");  // MySQL: 123457000
  EXPECT_EQ(MysqlFloat(16777216.0f), "16777216");
  EXPECT_EQ(MysqlFloat(1e14f), "100000000000000");
  EXPECT_EQ(MysqlFloat(1e15f), "1e15");
  EXPECT_EQ(MysqlFloat(-1e16f), "-1e16");
  EXPECT_EQ(MysqlFloat(1e-15f), "0.000000000000001");
  EXPECT_EQ(MysqlFloat(1e-16f), "1e-16");
  EXPECT_EQ(MysqlFloat(FLT_MAX), "3.4028235e38");
  EXPECT_EQ(MysqlFloat(FLT_MIN), "1.1754944e-38");
  EXPECT_EQ(MysqlFloat(std::numeric_limits<float>::denorm_min()), "1e-45");
}

TEST(CanalValue, MysqlFormsDoubleMatchesMySqlsNotationWithShortestDigits) {
  // Expected strings as MariaDB 10.11 prints DOUBLE columns holding these values.
  EXPECT_EQ(MysqlDouble(1), "1");
  EXPECT_EQ(MysqlDouble(1.5), "1.5");
  EXPECT_EQ(MysqlDouble(100000), "100000");
  EXPECT_EQ(MysqlDouble(10000000), "10000000");
  EXPECT_EQ(MysqlDouble(1e14), "100000000000000");
  EXPECT_EQ(MysqlDouble(1e15), "1e15");
  EXPECT_EQ(MysqlDouble(1e16), "1e16");
  EXPECT_EQ(MysqlDouble(9.99e15), "9.99e15");
  EXPECT_EQ(MysqlDouble(1e22), "1e22");
  EXPECT_EQ(MysqlDouble(0.0001), "0.0001");
  EXPECT_EQ(MysqlDouble(0.00001), "0.00001");
  EXPECT_EQ(MysqlDouble(1e-7), "0.0000001");
  EXPECT_EQ(MysqlDouble(1e-15), "0.000000000000001");
  EXPECT_EQ(MysqlDouble(1e-16), "1e-16");
  EXPECT_EQ(MysqlDouble(-1.5e-16), "-1.5e-16");
  EXPECT_EQ(MysqlDouble(1.2e-20), "1.2e-20");
  EXPECT_EQ(MysqlDouble(1.2345678901234567e-5), "0.000012345678901234568");
  EXPECT_EQ(MysqlDouble(1.2345678901234567e-15), "0.0000000000000012345678901234568");
  EXPECT_EQ(MysqlDouble(1.2345678901234567e-16), "1.2345678901234568e-16");
  EXPECT_EQ(MysqlDouble(123456789012345678.0), "1.2345678901234568e17");
  EXPECT_EQ(MysqlDouble(1234567890123456.0), "1.234567890123456e15");
  EXPECT_EQ(MysqlDouble(123456789), "123456789");
  EXPECT_EQ(MysqlDouble(2.718281828459045), "2.718281828459045");
  EXPECT_EQ(MysqlDouble(1.7976931348623157e308), "1.7976931348623157e308");
  EXPECT_EQ(MysqlDouble(-1.7976931348623157e308), "-1.7976931348623157e308");
  EXPECT_EQ(MysqlDouble(2.2250738585072014e-308), "2.2250738585072014e-308");
  EXPECT_EQ(MysqlDouble(1.5e300), "1.5e300");
  EXPECT_EQ(MysqlDouble(0.1), "0.1");
  EXPECT_EQ(MysqlDouble(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(MysqlDouble(std::numeric_limits<double>::denorm_min()), "5e-324");
}

TEST(CanalValue, NonFiniteFloatsPrintAsJavaDoesInBothForms) {
  // MySQL cannot store them; corrupt input must still render, not crash.
  for (TextForms forms : {TextForms::kCanal, TextForms::kMysql}) {
    EXPECT_EQ(Double(std::numeric_limits<double>::quiet_NaN(), forms), "NaN");
    EXPECT_EQ(Double(-std::numeric_limits<double>::quiet_NaN(), forms), "NaN");
    EXPECT_EQ(Double(std::numeric_limits<double>::infinity(), forms), "Infinity");
    EXPECT_EQ(Double(-std::numeric_limits<double>::infinity(), forms), "-Infinity");
    EXPECT_EQ(Float(std::numeric_limits<float>::quiet_NaN(), forms), "NaN");
    EXPECT_EQ(Float(-std::numeric_limits<float>::infinity(), forms), "-Infinity");
  }
}

// Both forms are exact: Java's text and MySQL's read back as the same bits.
TEST(CanalValue, RandomDoublesAndFloatsReadBackBitForBitInBothForms) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    const auto bits32 = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &bits32, sizeof f);
    for (TextForms forms : {TextForms::kCanal, TextForms::kMysql}) {
      if (std::isfinite(d)) {
        const std::string s = Double(d, forms);
        ASSERT_EQ(s.find('+'), std::string::npos) << s;
        const double back = std::strtod(s.c_str(), nullptr);
        ASSERT_EQ(std::memcmp(&back, &d, sizeof d), 0) << s;
      }
      if (std::isfinite(f)) {
        const std::string fs = Float(f, forms);
        const float fback = std::strtof(fs.c_str(), nullptr);
        ASSERT_EQ(std::memcmp(&fback, &f, sizeof f), 0) << fs;
      }
    }
  }
}

TEST(CanalValue, MysqlFormsFloatNotationSwitchesToExponentOutsideMySqlsRange) {
  for (int e = -30; e <= 30; ++e) {
    const double d = std::pow(10.0, e) * 1.25;
    const std::string s = MysqlDouble(d);
    const bool has_exponent = s.find('e') != std::string::npos;
    EXPECT_EQ(has_exponent, e < -15 || e >= 15) << "1.25e" << e << " -> " << s;
  }
}

TEST(CanalValue, CanalFormsAreJavasStringValueOfByDefault) {
  // The digits are java_float_text_test.cc's business; here, that FLOAT and
  // DOUBLE columns get them, with Canal's forms the default.
  ColumnValue v;
  v.kind = Kind::kDouble;
  v.type = ColumnType::kDouble;
  v.f64 = 100;
  std::string out = "x=";
  ASSERT_TRUE(AppendCanalValue(v, Col(ColumnType::kDouble), {}, &out).ok());
  EXPECT_EQ(out, "x=100.0");
  EXPECT_EQ(Double(0.0000123, TextForms::kCanal), "1.23E-5");
  EXPECT_EQ(Float(123456790.0f, TextForms::kCanal), "1.23456792E8");  // a float's digits, not a double's
  EXPECT_EQ(Float(0.1f, TextForms::kCanal), "0.1");
}

// ---------------------------------------------------------------- DECIMAL

TEST(CanalValue, DecimalUsesTheColumnsPrecisionAndScale) {
  ColumnInfo c = Col(ColumnType::kNewDecimal);
  c.precision = 14;
  c.decimals = 4;
  const std::string raw = Bytes({0x81, 0x0D, 0xFB, 0x38, 0xD2, 0x04, 0xD2});
  EXPECT_EQ(Render(Raw(Kind::kDecimal, ColumnType::kNewDecimal, raw), c), "1234567890.1234");
}

TEST(CanalValue, CorruptDecimalIsAnErrorAndLeavesOutputUnchanged) {
  ColumnInfo c = Col(ColumnType::kNewDecimal);
  c.precision = 14;
  c.decimals = 4;
  std::string out = "before";
  const std::string short_raw = Bytes({0x81, 0x0D});
  EXPECT_TRUE(AppendCanalValue(Raw(Kind::kDecimal, ColumnType::kNewDecimal, short_raw), c, {}, &out)
                  .IsCorruption());
  const std::string bad_group = Bytes({0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0x04, 0xD2});
  EXPECT_TRUE(AppendCanalValue(Raw(Kind::kDecimal, ColumnType::kNewDecimal, bad_group), c, {}, &out)
                  .IsCorruption());
  c.precision = 0;
  EXPECT_FALSE(AppendCanalValue(Raw(Kind::kDecimal, ColumnType::kNewDecimal, ""), c, {}, &out).ok());
  EXPECT_EQ(out, "before");
}

// ---------------------------------------------------------------- temporal

TEST(CanalValue, DateIsYyyyMmDdAndZeroDateIsZeros) {
  const ColumnInfo c = Col(ColumnType::kDate);
  EXPECT_EQ(Render(Temporal(Kind::kDate, ColumnType::kDate, Date(2024, 2, 29)), c), "2024-02-29");
  EXPECT_EQ(Render(Temporal(Kind::kDate, ColumnType::kDate, Date(0, 0, 0)), c), "0000-00-00");
  EXPECT_EQ(Render(Temporal(Kind::kDate, ColumnType::kDate, Date(1, 1, 1)), c), "0001-01-01");
  EXPECT_EQ(Render(Temporal(Kind::kDate, ColumnType::kDate, Date(9999, 12, 31)), c), "9999-12-31");
  // Partial zero dates are legal in MySQL.
  EXPECT_EQ(Render(Temporal(Kind::kDate, ColumnType::kDate, Date(2024, 0, 0)), c), "2024-00-00");
}

TEST(CanalValue, TimePrintsSignHoursBeyond24AndExactlyFspDigits) {
  const ColumnInfo c = Col(ColumnType::kTime2);
  auto time = [&c](TemporalValue t, uint8_t fsp) {
    return Render(Temporal(Kind::kTime, ColumnType::kTime2, t, fsp), c);
  };
  EXPECT_EQ(time(Time(false, 0, 0, 0), 0), "00:00:00");
  EXPECT_EQ(time(Time(false, 12, 34, 56), 0), "12:34:56");
  EXPECT_EQ(time(Time(true, 838, 59, 59), 0), "-838:59:59");
  EXPECT_EQ(time(Time(false, 838, 59, 59), 0), "838:59:59");
  EXPECT_EQ(time(Time(false, 100, 0, 0), 0), "100:00:00");
  EXPECT_EQ(time(Time(true, 1, 2, 3), 0), "-01:02:03");
  EXPECT_EQ(time(Time(false, 1, 2, 3, 123456), 3), "01:02:03.123");
  EXPECT_EQ(time(Time(false, 1, 2, 3, 120000), 2), "01:02:03.12");
  EXPECT_EQ(time(Time(true, 0, 0, 0, 500000), 1), "-00:00:00.5");
  EXPECT_EQ(time(Time(true, 838, 59, 59, 0), 6), "-838:59:59.000000");
  EXPECT_EQ(time(Time(false, 0, 0, 0, 1), 6), "00:00:00.000001");
  // fsp above 6 cannot come from a server; print 6 digits.
  EXPECT_EQ(time(Time(false, 0, 0, 0, 1), 9), "00:00:00.000001");
  // MySQL has no negative zero time.
  EXPECT_EQ(time(Time(true, 0, 0, 0), 0), "00:00:00");
}

TEST(CanalValue, DateTimePrintsZeroDateAndExactlyFspDigits) {
  const ColumnInfo c = Col(ColumnType::kDateTime2);
  auto dt = [&c](TemporalValue t, uint8_t fsp) {
    return Render(Temporal(Kind::kDateTime, ColumnType::kDateTime2, t, fsp), c);
  };
  EXPECT_EQ(dt(DateTime(0, 0, 0, 0, 0, 0), 0), "0000-00-00 00:00:00");
  EXPECT_EQ(dt(DateTime(0, 0, 0, 0, 0, 0), 3), "0000-00-00 00:00:00.000");
  EXPECT_EQ(dt(DateTime(2023, 11, 14, 22, 13, 20), 0), "2023-11-14 22:13:20");
  EXPECT_EQ(dt(DateTime(9999, 12, 31, 23, 59, 59, 999999), 6), "9999-12-31 23:59:59.999999");
  EXPECT_EQ(dt(DateTime(1000, 1, 1, 0, 0, 0, 100000), 1), "1000-01-01 00:00:00.1");
  EXPECT_EQ(dt(DateTime(2000, 1, 2, 3, 4, 5, 60000), 4), "2000-01-02 03:04:05.0600");
}

TEST(CanalValue, TimestampRendersInUtcByDefault) {
  const ColumnInfo c = Col(ColumnType::kTimestamp2);
  EXPECT_EQ(Render(Timestamp(1), c), "1970-01-01 00:00:01");
  EXPECT_EQ(Render(Timestamp(1700000000), c), "2023-11-14 22:13:20");
  EXPECT_EQ(Render(Timestamp(951782400), c), "2000-02-29 00:00:00");
  EXPECT_EQ(Render(Timestamp(2147483647), c), "2038-01-19 03:14:07");
  EXPECT_EQ(Render(Timestamp(4294967295u), c), "2106-02-07 06:28:15");
  EXPECT_EQ(Render(Timestamp(1700000000, 123456, 6), c), "2023-11-14 22:13:20.123456");
  EXPECT_EQ(Render(Timestamp(1700000000, 123456, 2), c), "2023-11-14 22:13:20.12");
}

TEST(CanalValue, TimestampZeroIsMySqlsZeroTimestamp) {
  const ColumnInfo c = Col(ColumnType::kTimestamp2);
  EXPECT_EQ(Render(Timestamp(0), c), "0000-00-00 00:00:00");
  EXPECT_EQ(Render(Timestamp(0, 0, 3), c), "0000-00-00 00:00:00.000");
  ValueFormatOptions east;
  east.timestamp_utc_offset_seconds = 8 * 3600;
  EXPECT_EQ(Render(Timestamp(0), c, east), "0000-00-00 00:00:00");
}

TEST(CanalValue, TimestampAppliesTheConfiguredOffset) {
  const ColumnInfo c = Col(ColumnType::kTimestamp2);
  ValueFormatOptions o;
  o.timestamp_utc_offset_seconds = 8 * 3600;
  EXPECT_EQ(Render(Timestamp(1700000000), c, o), "2023-11-15 06:13:20");
  o.timestamp_utc_offset_seconds = -5 * 3600 - 30 * 60;
  EXPECT_EQ(Render(Timestamp(1700000000), c, o), "2023-11-14 16:43:20");
  EXPECT_EQ(Render(Timestamp(1, 0, 0), c, o), "1969-12-31 18:30:01");
  o.timestamp_utc_offset_seconds = 14 * 3600;
  EXPECT_EQ(Render(Timestamp(1704016800), c, o), "2024-01-01 00:00:00");  // 2023-12-31 10:00 UTC
  o.timestamp_utc_offset_seconds = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(Render(Timestamp(1), c, o), "1901-12-13 20:45:53");
}

TEST(CanalValue, TimestampDatesMatchANaiveCalendarForEveryDayTo2106) {
  // Walk the calendar one day at a time and compare every day's rendering.
  const ColumnInfo c = Col(ColumnType::kTimestamp2);
  int year = 1970, month = 1, day = 1;
  auto days_in = [](int y, int m) {
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : kDays[m - 1];
  };
  std::string out;
  for (uint64_t d = 0; d < 49710; ++d) {  // through 2106-02-07
    const uint64_t seconds = d * 86400 + 3723;  // 01:02:03
    char expected[64];
    std::snprintf(expected, sizeof expected, "%04d-%02d-%02d 01:02:03", year, month, day);
    out.clear();
    ASSERT_TRUE(AppendCanalValue(Timestamp(seconds), c, {}, &out).ok());
    ASSERT_EQ(out, expected) << "day " << d;
    if (++day > days_in(year, month)) {
      day = 1;
      if (++month > 12) {
        month = 1;
        ++year;
      }
    }
  }
}

TEST(CanalValue, HugeTimestampSecondsStillRender) {
  const ColumnInfo c = Col(ColumnType::kTimestamp2);
  std::string out;
  ASSERT_TRUE(AppendCanalValue(Timestamp(UINT64_MAX), c, {}, &out).ok());
  EXPECT_FALSE(out.empty());
}

// ---------------------------------------------------------------- strings and bytes

TEST(CanalValue, StringsAreConvertedFromTheColumnCharset) {
  EXPECT_EQ(Render(Raw(Kind::kString, ColumnType::kVarchar, "h\xC3\xA9"),
                   Col(ColumnType::kVarchar, kUtf8mb4)),
            "h\xC3\xA9");
  EXPECT_EQ(Render(Raw(Kind::kString, ColumnType::kVarchar, Bytes({'h', 0xE9})),
                   Col(ColumnType::kVarchar, kLatin1)),
            "h\xC3\xA9");
  // Unknown charset: treated as UTF-8.
  EXPECT_EQ(Render(Raw(Kind::kString, ColumnType::kVarchar, "h\xC3\xA9"), Col(ColumnType::kVarchar)),
            "h\xC3\xA9");
  const std::string empty;
  EXPECT_EQ(Render(Raw(Kind::kString, ColumnType::kString, empty), Col(ColumnType::kString)), "");
}

TEST(CanalValue, BytesAreIso88591InCanalModeAndBase64InReadableMode) {
  const ColumnInfo c = Col(ColumnType::kBlob, kBinary);
  const std::string raw = Bytes({0x00, 'A', 0x80, 0xFF});
  EXPECT_EQ(Render(Raw(Kind::kBytes, ColumnType::kBlob, raw), c),
            std::string("\0A\xC2\x80\xC3\xBF", 6));
  EXPECT_EQ(Render(Raw(Kind::kBytes, ColumnType::kBlob, raw), c, Readable()), "AEGA/w==");
}

TEST(CanalValue, Base64MatchesRfc4648Vectors) {
  const ColumnInfo c = Col(ColumnType::kBlob, kBinary);
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},         {"f", "Zg=="},        {"fo", "Zm8="},          {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [in, expected] : vectors) {
    EXPECT_EQ(Render(Raw(Kind::kBytes, ColumnType::kBlob, in), c, Readable()), expected) << in;
  }
  EXPECT_EQ(Render(Raw(Kind::kBytes, ColumnType::kBlob, Bytes({0xFB, 0xFF, 0xBF})), c, Readable()),
            "+/+/");
}

TEST(CanalValue, EveryByteSurvivesCanalModeAsOneCodePoint) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string text = Render(Raw(Kind::kBytes, ColumnType::kString, all),
                                  StringCol(ColumnType::kString, kBinary));
  // Decode the 1- and 2-byte UTF-8 back to bytes (what Java's getBytes("ISO-8859-1") does).
  std::string back;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c < 0x80) {
      back.push_back(static_cast<char>(c));
    } else {
      ASSERT_LT(i + 1, text.size());
      back.push_back(static_cast<char>(((c & 0x1F) << 6) | (static_cast<uint8_t>(text[++i]) & 0x3F)));
    }
  }
  EXPECT_EQ(back, all);
}

// ---------------------------------------------------------------- JSON

TEST(CanalValue, TextJsonPassesThrough) {
  ColumnValue v = Raw(Kind::kJson, ColumnType::kJson, R"({"a": [1, "x"]})");
  v.json_is_text = true;
  EXPECT_EQ(Render(v, Col(ColumnType::kJson)), R"({"a": [1, "x"]})");
  EXPECT_EQ(Render(v, Col(ColumnType::kBlob, kUtf8mb4)), R"({"a": [1, "x"]})");
  EXPECT_EQ(Render(v, Col(ColumnType::kJson, kBinary)), R"({"a": [1, "x"]})");
}

TEST(CanalValue, BinaryJsonIsRenderedAsMySqlPrintsIt) {
  const ColumnInfo c = Col(ColumnType::kJson, kBinary);
  // Literal (type 0x04) true/false/null; int16 (0x05); string (0x0C).
  const std::string t = Bytes({0x04, 0x01}), f = Bytes({0x04, 0x02}), n = Bytes({0x04, 0x00});
  const std::string i16 = Bytes({0x05, 0x2A, 0x00}), str = Bytes({0x0C, 0x03, 'a', 'b', 'c'});
  EXPECT_EQ(Render(Raw(Kind::kJson, ColumnType::kJson, t), c), "true");
  EXPECT_EQ(Render(Raw(Kind::kJson, ColumnType::kJson, f), c), "false");
  EXPECT_EQ(Render(Raw(Kind::kJson, ColumnType::kJson, n), c), "null");
  EXPECT_EQ(Render(Raw(Kind::kJson, ColumnType::kJson, i16), c), "42");
  EXPECT_EQ(Render(Raw(Kind::kJson, ColumnType::kJson, str), c), "\"abc\"");
}

TEST(CanalValue, CorruptBinaryJsonIsAnErrorAndLeavesOutputUnchanged) {
  const ColumnInfo c = Col(ColumnType::kJson, kBinary);
  std::string out = "before";
  // A small object that claims 5 members in a 3-byte value.
  const std::string bad = Bytes({0x00, 0x05, 0x00});
  Status s = AppendCanalValue(Raw(Kind::kJson, ColumnType::kJson, bad), c, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(out, "before");
  const std::string bad_type = Bytes({0x7E, 0x00});
  EXPECT_FALSE(AppendCanalValue(Raw(Kind::kJson, ColumnType::kJson, bad_type), c, {}, &out).ok());
  EXPECT_EQ(out, "before");
}

// ---------------------------------------------------------------- contract

TEST(CanalValue, AbsentAndNullValuesAreRefusedWithoutOutput) {
  std::string out = "x";
  ColumnValue absent;
  EXPECT_EQ(AppendCanalValue(absent, Col(ColumnType::kLong), {}, &out).code(),
            Status::Code::kInvalidArgument);
  ColumnValue null;
  null.kind = Kind::kNull;
  EXPECT_EQ(AppendCanalValue(null, Col(ColumnType::kLong), {}, &out).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(out, "x");
}

TEST(CanalValue, AppendsAfterExistingOutput) {
  std::string out = "a";
  ASSERT_TRUE(AppendCanalValue(Signed(-5), Col(ColumnType::kLong), {}, &out).ok());
  ASSERT_TRUE(AppendCanalValue(Timestamp(1), Col(ColumnType::kTimestamp2), {}, &out).ok());
  EXPECT_EQ(out, "a-51970-01-01 00:00:01");
}

// ---------------------------------------------------------------- mysqlType

TEST(CanalMysqlType, NumericTypesWithSignedness) {
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kTiny)), "tinyint");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kShort)), "smallint");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kInt24)), "mediumint");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kLong)), "int");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kLongLong)), "bigint");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kFloat)), "float");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kDouble)), "double");
  ColumnInfo u = Col(ColumnType::kLong);
  u.is_unsigned = true;
  EXPECT_EQ(CanalMysqlType(u), "int unsigned");
  u.type = u.real_type = ColumnType::kLongLong;
  EXPECT_EQ(CanalMysqlType(u), "bigint unsigned");
  ColumnInfo d = Col(ColumnType::kNewDecimal);
  EXPECT_EQ(CanalMysqlType(d), "decimal");
  d.precision = 65;
  d.decimals = 30;
  EXPECT_EQ(CanalMysqlType(d), "decimal(65,30)");
  d.precision = 10;
  d.decimals = 0;
  d.is_unsigned = true;
  EXPECT_EQ(CanalMysqlType(d), "decimal(10,0) unsigned");
}

TEST(CanalMysqlType, IntegerDisplayWidthsAsMariaDbAndOldMySqlPrintThem) {
  // SHOW CREATE TABLE on MariaDB and MySQL before 8.0.19 for columns declared without a width.
  struct Case {
    ColumnType type;
    bool is_unsigned;
    const char* expected;
  };
  const Case cases[] = {
      {ColumnType::kTiny, false, "tinyint(4)"},      {ColumnType::kTiny, true, "tinyint(3) unsigned"},
      {ColumnType::kShort, false, "smallint(6)"},    {ColumnType::kShort, true, "smallint(5) unsigned"},
      {ColumnType::kInt24, false, "mediumint(9)"},   {ColumnType::kInt24, true, "mediumint(8) unsigned"},
      {ColumnType::kLong, false, "int(11)"},         {ColumnType::kLong, true, "int(10) unsigned"},
      {ColumnType::kLongLong, false, "bigint(20)"},  {ColumnType::kLongLong, true, "bigint(20) unsigned"},
      {ColumnType::kFloat, false, "float"},          {ColumnType::kDouble, true, "double unsigned"},
  };
  for (const Case& c : cases) {
    ColumnInfo col = Col(c.type);
    col.is_unsigned = c.is_unsigned;
    EXPECT_EQ(CanalMysqlType(col, {}, /*integer_display_widths=*/true), c.expected);
    // MySQL 8.0.19+ prints none; nor do MySQL's forms.
    const std::string bare = CanalMysqlType(col, {}, false);
    EXPECT_EQ(bare.find('('), std::string::npos) << bare;
    EXPECT_EQ(CanalMysqlType(col, Forms(TextForms::kMysql), true), bare);
  }
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kYear), {}, true), "year(4)");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kYear), {}, false), "year");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kYear), Forms(TextForms::kMysql), true), "year");
  // Types whose text has no display width are unchanged.
  ColumnInfo bit = Col(ColumnType::kBit);
  bit.max_length = 1;
  EXPECT_EQ(CanalMysqlType(bit, {}, true), "bit(1)");
  ColumnInfo d = Col(ColumnType::kNewDecimal);
  d.precision = 10;
  d.decimals = 2;
  EXPECT_EQ(CanalMysqlType(d, {}, true), "decimal(10,2)");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kDate), {}, true), "date");
}

TEST(CanalMysqlType, SchemaColumnTypeIsUsedAsTheServerSaysIt) {
  ColumnInfo c = Col(ColumnType::kTiny);
  c.column_type = "tinyint(1)";  // MySQL 8.0.19+ keeps this one width
  EXPECT_EQ(CanalMysqlType(c, {}, false), "tinyint(1)");
  EXPECT_EQ(CanalMysqlType(c, {}, true), "tinyint(1)");
  c.type = c.real_type = ColumnType::kLong;
  c.is_unsigned = true;
  c.column_type = "int(10) unsigned zerofill";  // zerofill: only the schema knows it
  EXPECT_EQ(CanalMysqlType(c), "int(10) unsigned zerofill");
  // MySQL's forms derive from the binlog type, without widths.
  EXPECT_EQ(CanalMysqlType(c, Forms(TextForms::kMysql), true), "int unsigned");
}

TEST(CanalMysqlType, TemporalTypesWithFractionalPrecision) {
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kDate)), "date");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kYear)), "year");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kTime)), "time");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kDateTime)), "datetime");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kTimestamp)), "timestamp");
  ColumnInfo c = Col(ColumnType::kDateTime2);
  EXPECT_EQ(CanalMysqlType(c), "datetime");
  c.meta = 3;
  EXPECT_EQ(CanalMysqlType(c), "datetime(3)");
  c.type = c.real_type = ColumnType::kTime2;
  c.meta = 6;
  EXPECT_EQ(CanalMysqlType(c), "time(6)");
  c.type = c.real_type = ColumnType::kTimestamp2;
  c.meta = 1;
  EXPECT_EQ(CanalMysqlType(c), "timestamp(1)");
}

TEST(CanalMysqlType, CharacterLengthsAreInCharactersWhenTheCharsetIsKnown) {
  ColumnInfo v = Col(ColumnType::kVarchar, kUtf8mb4);
  v.max_length = 1020;
  EXPECT_EQ(CanalMysqlType(v), "varchar(255)");
  v.charset = kUtf8mb3;
  v.max_length = 192;
  EXPECT_EQ(CanalMysqlType(v), "varchar(64)");
  v.charset = kLatin1;
  v.max_length = 100;
  EXPECT_EQ(CanalMysqlType(v), "varchar(100)");
  v.charset = kGbk;
  v.max_length = 100;
  EXPECT_EQ(CanalMysqlType(v), "varchar(50)");
  v.charset = 0;  // unknown: bytes
  v.max_length = 1020;
  EXPECT_EQ(CanalMysqlType(v), "varchar(1020)");
  v.charset = kBinary;
  v.max_length = 16;
  EXPECT_EQ(CanalMysqlType(v), "varbinary(16)");
  v.max_length = 0;
  v.meta = 40;  // length only in the metadata
  EXPECT_EQ(CanalMysqlType(v), "varbinary(40)");

  ColumnInfo s = StringCol(ColumnType::kString, kUtf8mb4);
  s.max_length = 1020;
  EXPECT_EQ(CanalMysqlType(s), "char(255)");
  s.charset = kBinary;
  s.max_length = 16;
  EXPECT_EQ(CanalMysqlType(s), "binary(16)");
}

TEST(CanalMysqlType, BlobFamilyByLengthBytesAndCharset) {
  ColumnInfo b = Col(ColumnType::kBlob, kBinary);
  const char* blobs[] = {"tinyblob", "blob", "mediumblob", "longblob"};
  const char* texts[] = {"tinytext", "text", "mediumtext", "longtext"};
  for (uint16_t meta = 1; meta <= 4; ++meta) {
    b.meta = meta;
    b.charset = kBinary;
    EXPECT_EQ(CanalMysqlType(b), blobs[meta - 1]);
    b.charset = kUtf8mb4;
    EXPECT_EQ(CanalMysqlType(b), texts[meta - 1]);
  }
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kTinyBlob, kBinary)), "tinyblob");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kMediumBlob, kLatin1)), "mediumtext");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kLongBlob, kBinary)), "longblob");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kLongBlob)), "longtext");  // charset unknown
}

TEST(CanalMysqlType, EnumAndSetListTheirLabelsQuoted) {
  ColumnInfo e = StringCol(ColumnType::kEnum);
  EXPECT_EQ(CanalMysqlType(e), "enum");
  e.enum_or_set_labels = {"a", "it's", "c"};
  EXPECT_EQ(CanalMysqlType(e), "enum('a','it''s','c')");
  ColumnInfo s = StringCol(ColumnType::kSet, kLatin1);
  s.enum_or_set_labels = {"x", Bytes({0xE9})};
  EXPECT_EQ(CanalMysqlType(s), "set('x','\xC3\xA9')");
}

TEST(CanalMysqlType, OtherTypes) {
  ColumnInfo bit = Col(ColumnType::kBit);
  EXPECT_EQ(CanalMysqlType(bit), "bit");
  bit.max_length = 17;
  EXPECT_EQ(CanalMysqlType(bit), "bit(17)");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kJson)), "json");
  ColumnInfo g = Col(ColumnType::kGeometry);
  EXPECT_EQ(CanalMysqlType(g), "geometry");
  g.geometry_type = 1;
  EXPECT_EQ(CanalMysqlType(g), "point");
  g.geometry_type = 6;
  EXPECT_EQ(CanalMysqlType(g), "multipolygon");
  g.geometry_type = 7;
  EXPECT_EQ(CanalMysqlType(g), "geometrycollection");
  ColumnInfo v = Col(ColumnType::kVector);
  EXPECT_EQ(CanalMysqlType(v), "vector");
  v.vector_dimensions = 3;
  EXPECT_EQ(CanalMysqlType(v), "vector(3)");
  EXPECT_EQ(CanalMysqlType(Col(ColumnType::kTypedArray)), "");
}

// ---------------------------------------------------------------- column_type.h

TEST(ColumnType, NamesAndMetadataLengthsOfEveryTableMapType) {
  struct Case {
    ColumnType type;
    const char* name;
    int meta;
  };
  const Case cases[] = {
      {ColumnType::kDecimal, "DECIMAL", 0},        {ColumnType::kTiny, "TINY", 0},
      {ColumnType::kShort, "SHORT", 0},            {ColumnType::kLong, "LONG", 0},
      {ColumnType::kFloat, "FLOAT", 1},            {ColumnType::kDouble, "DOUBLE", 1},
      {ColumnType::kNull, "NULL", 0},              {ColumnType::kTimestamp, "TIMESTAMP", 0},
      {ColumnType::kLongLong, "LONGLONG", 0},      {ColumnType::kInt24, "INT24", 0},
      {ColumnType::kDate, "DATE", 0},              {ColumnType::kTime, "TIME", 0},
      {ColumnType::kDateTime, "DATETIME", 0},      {ColumnType::kYear, "YEAR", 0},
      {ColumnType::kNewDate, "NEWDATE", 0},        {ColumnType::kVarchar, "VARCHAR", 2},
      {ColumnType::kBit, "BIT", 2},                {ColumnType::kTimestamp2, "TIMESTAMP2", 1},
      {ColumnType::kDateTime2, "DATETIME2", 1},    {ColumnType::kTime2, "TIME2", 1},
      {ColumnType::kTypedArray, "TYPED_ARRAY", -1}, {ColumnType::kVector, "VECTOR", 1},
      {ColumnType::kJson, "JSON", 1},              {ColumnType::kNewDecimal, "NEWDECIMAL", 2},
      {ColumnType::kEnum, "ENUM", 2},              {ColumnType::kSet, "SET", 2},
      {ColumnType::kTinyBlob, "TINY_BLOB", 1},     {ColumnType::kMediumBlob, "MEDIUM_BLOB", 1},
      {ColumnType::kLongBlob, "LONG_BLOB", 1},     {ColumnType::kBlob, "BLOB", 1},
      {ColumnType::kVarString, "VAR_STRING", 2},   {ColumnType::kString, "STRING", 2},
      {ColumnType::kGeometry, "GEOMETRY", 1},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ColumnTypeName(c.type), c.name) << int(c.type);
    EXPECT_EQ(ColumnMetaLength(c.type), c.meta) << c.name;
  }
}

TEST(ColumnType, CodesThatCannotAppearAreUnknownWithNoMetadataLength) {
  int unknown = 0;
  for (int code = 0; code < 256; ++code) {
    const auto t = static_cast<ColumnType>(code);
    const bool known = code <= 20 || code == 242 || code >= 245;
    if (known) {
      EXPECT_NE(ColumnTypeName(t), "UNKNOWN") << code;
    } else {
      ++unknown;
      EXPECT_EQ(ColumnTypeName(t), "UNKNOWN") << code;
      EXPECT_EQ(ColumnMetaLength(t), -1) << code;
    }
  }
  EXPECT_EQ(unknown, 256 - 21 - 1 - 11);
}

// The sink sizes big values with CanalValueSize and renders them later straight
// into the entry: the size must be the rendered one, byte for byte.
TEST(CanalValueSize, IsTheRenderedSizeWhereItIsKnownWithoutRendering) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte.push_back(static_cast<char>(b));
  const std::string samples[] = {"", "a", "ab", "abc", "plain ascii", every_byte, every_byte + every_byte + "x",
                                 std::string("\x80\x81\x9f\xa0\xff", 5)};
  struct Case {
    Kind kind;
    ColumnType type;
    uint32_t charset;
    bool known;
  };
  const Case cases[] = {
      {Kind::kBytes, ColumnType::kBlob, kBinary, true},      {Kind::kString, ColumnType::kBlob, kUtf8mb4, true},
      {Kind::kString, ColumnType::kVarchar, kUtf8mb3, true}, {Kind::kString, ColumnType::kBlob, kLatin1, true},
      {Kind::kString, ColumnType::kString, kBinary, true},   {Kind::kString, ColumnType::kBlob, kGbk, false},
      {Kind::kString, ColumnType::kBlob, 35 /*ucs2*/, false},
  };
  for (const ValueFormatOptions& o : {ValueFormatOptions{}, Readable()}) {
    for (const Case& c : cases) {
      for (const std::string& raw : samples) {
        const ColumnValue v = Raw(c.kind, c.type, raw);
        size_t size = 12345;
        const bool known = render::CanalValueSize(v, Col(c.type, c.charset), o, &size);
        // UTF-8 text that is not well-formed is repaired: its size is known only by rendering.
        const bool utf8 = c.kind == Kind::kString && (c.charset == kUtf8mb4 || c.charset == kUtf8mb3);
        EXPECT_EQ(known, c.known && (!utf8 || IsValidUtf8(raw))) << "charset " << c.charset;
        if (known) {
          EXPECT_EQ(size, Render(v, Col(c.type, c.charset), o).size()) << "charset " << c.charset;
        }
      }
    }
  }
  size_t size = 0;
  EXPECT_FALSE(render::CanalValueSize(Signed(7), Col(ColumnType::kLong), {}, &size)) << "only strings and bytes";
  EXPECT_FALSE(render::CanalValueSize(Raw(Kind::kJson, ColumnType::kJson, "{}"), Col(ColumnType::kJson), {}, &size));
}

// ---------------------------------------------------------------- fixed text (the tools' fast path)

// WriteCanalFixedText into an exactly kCanalFixedTextMax buffer; the same text
// AppendCanalValue appends.
std::string Fixed(const ColumnValue& v, const ColumnInfo& c, ValueFormatOptions o = {}) {
  char buf[render::kCanalFixedTextMax];
  const char* end = render::WriteCanalFixedText(v, c, o, buf);
  if (end == nullptr) {
    ADD_FAILURE() << "no fixed text";
    return "";
  }
  EXPECT_LE(static_cast<size_t>(end - buf), render::kCanalFixedTextMax);
  std::string text(static_cast<const char*>(buf), end);
  EXPECT_EQ(text, Render(v, c, o));
  return text;
}

TEST(CanalFixedText, IntegersAtTheirLimits) {
  const ColumnInfo c = Col(ColumnType::kLongLong);
  EXPECT_EQ(Fixed(Signed(INT64_MIN, ColumnType::kLongLong), c), "-9223372036854775808");
  EXPECT_EQ(Fixed(Signed(INT64_MAX, ColumnType::kLongLong), c), "9223372036854775807");
  EXPECT_EQ(Fixed(Signed(0, ColumnType::kLongLong), c), "0");
  EXPECT_EQ(Fixed(Signed(-1, ColumnType::kLongLong), c), "-1");
  EXPECT_EQ(Fixed(Unsigned(UINT64_MAX, ColumnType::kLongLong), c), "18446744073709551615");
  EXPECT_EQ(Fixed(Unsigned(0, ColumnType::kLongLong), c), "0");
  // Every power of ten and its neighbours, both signs.
  uint64_t p = 1;
  for (int i = 0; i < 20; ++i, p *= 10) {
    for (uint64_t v : {p - 1, p, p + 1}) {
      EXPECT_EQ(Fixed(Unsigned(v, ColumnType::kLongLong), c), std::to_string(v));
      if (v <= static_cast<uint64_t>(INT64_MAX)) {
        EXPECT_EQ(Fixed(Signed(-static_cast<int64_t>(v), ColumnType::kLongLong), c),
                  std::to_string(-static_cast<int64_t>(v)));
      }
    }
  }
}

TEST(CanalFixedText, RandomIntegersOfEveryWidthMatchToString) {
  const ColumnInfo c = Col(ColumnType::kLongLong);
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t u = rng() >> (rng() % 64);  // every bit length
    ASSERT_EQ(Fixed(Unsigned(u, ColumnType::kLongLong), c), std::to_string(u));
    const auto v = static_cast<int64_t>(u) * ((i & 1) ? -1 : 1);
    ASSERT_EQ(Fixed(Signed(v, ColumnType::kLongLong), c), std::to_string(v));
  }
}

TEST(CanalFixedText, YearPadsToFourDigitsAndShowsImpossibleYearsAsTheyAre) {
  const ColumnInfo c = Col(ColumnType::kYear);
  EXPECT_EQ(Fixed(Signed(0, ColumnType::kYear), c), "0000");
  EXPECT_EQ(Fixed(Signed(7, ColumnType::kYear), c), "0007");
  EXPECT_EQ(Fixed(Signed(2155, ColumnType::kYear), c), "2155");
  EXPECT_EQ(Fixed(Signed(-5, ColumnType::kYear), c), "-5");
  EXPECT_EQ(Fixed(Signed(123456, ColumnType::kYear), c), "123456");
  EXPECT_EQ(Fixed(Unsigned(UINT64_MAX, ColumnType::kYear), c), "18446744073709551615");
}

TEST(CanalFixedText, TemporalFieldsBeyondMySqlsRangesStillFit) {
  // Corrupt input: every field at its type's maximum.
  TemporalValue t = DateTime(UINT16_MAX, UINT8_MAX, UINT8_MAX, UINT32_MAX, UINT8_MAX, UINT8_MAX, UINT32_MAX);
  t.negative = true;
  EXPECT_EQ(Fixed(Temporal(Kind::kDateTime, ColumnType::kDateTime2, t, 6), Col(ColumnType::kDateTime2)),
            "65535-255-255 4294967295:255:255.967295");
  EXPECT_EQ(Fixed(Temporal(Kind::kTime, ColumnType::kTime2, t, 6), Col(ColumnType::kTime2)),
            "-4294967295:255:255.967295");
  EXPECT_EQ(Fixed(Temporal(Kind::kDate, ColumnType::kDate, t), Col(ColumnType::kDate)), "65535-255-255");
  EXPECT_EQ(Fixed(Temporal(Kind::kDateTime, ColumnType::kDateTime2, DateTime(99, 1, 2, 3, 4, 5, 7), 6),
                  Col(ColumnType::kDateTime2)),
            "0099-01-02 03:04:05.000007");
  EXPECT_EQ(Fixed(Temporal(Kind::kDateTime, ColumnType::kDateTime2, DateTime(10000, 10, 10, 10, 10, 10), 0),
                  Col(ColumnType::kDateTime2)),
            "10000-10-10 10:10:10");
  // Every fraction width of one value.
  const char* widths[] = {"", ".9", ".98", ".987", ".9876", ".98765", ".987654"};
  for (uint8_t fsp = 0; fsp <= 6; ++fsp) {
    EXPECT_EQ(Fixed(Temporal(Kind::kTime, ColumnType::kTime2, Time(false, 1, 2, 3, 987654), fsp),
                    Col(ColumnType::kTime2)),
              std::string("01:02:03") + widths[fsp]);
  }
  const ColumnInfo ts = Col(ColumnType::kTimestamp2);
  EXPECT_EQ(Fixed(Timestamp(0, 0, 6), ts), "0000-00-00 00:00:00.000000");
  EXPECT_EQ(Fixed(Timestamp(UINT32_MAX, 999999, 6), ts), "2106-02-07 06:28:15.999999");
  EXPECT_FALSE(Fixed(Timestamp(UINT64_MAX, UINT32_MAX, 6), ts).empty());
  ValueFormatOptions east;
  east.timestamp_utc_offset_seconds = 14 * 3600;
  EXPECT_EQ(Fixed(Timestamp(1, 0, 0), ts, east), "1970-01-01 14:00:01");
}

TEST(CanalFixedText, FloatingPointExtremesInBothForms) {
  for (TextForms forms : {TextForms::kCanal, TextForms::kMysql}) {
    for (double d : {0.0, -0.0, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN, 4.9e-324, -4.9e-324, 1e-15, 1.5e-16, 1e15,
                     -999.857142858, std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity(), std::nan("")}) {
      ColumnValue v;
      v.kind = Kind::kDouble;
      v.type = ColumnType::kDouble;
      v.f64 = d;
      EXPECT_EQ(Fixed(v, Col(ColumnType::kDouble), Forms(forms)), Double(d, forms));
    }
    for (float f : {0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, 1.4e-45f, -1.4e-45f, 3.14159f}) {
      ColumnValue v;
      v.kind = Kind::kFloat;
      v.type = ColumnType::kFloat;
      v.f32 = f;
      EXPECT_EQ(Fixed(v, Col(ColumnType::kFloat), Forms(forms)), Float(f, forms));
    }
  }
  ColumnValue v;
  v.kind = Kind::kDouble;
  v.type = ColumnType::kDouble;
  v.f64 = -DBL_MAX;
  EXPECT_EQ(Fixed(v, Col(ColumnType::kDouble)), "-1.7976931348623157E308");
  EXPECT_EQ(Fixed(v, Col(ColumnType::kDouble), Forms(TextForms::kMysql)), "-1.7976931348623157e308");
}

TEST(CanalFixedText, DecimalsAreFixedText) {
  ColumnInfo c = Col(ColumnType::kNewDecimal);
  c.precision = 14;
  c.decimals = 4;
  EXPECT_EQ(Fixed(Raw(Kind::kDecimal, ColumnType::kNewDecimal, Bytes({0x81, 0x0D, 0xFB, 0x38, 0xD2, 0x04, 0xD2})), c),
            "1234567890.1234");
  // Every length and malformed input: tests/parser/decimal_test.cc.
}

TEST(CanalFixedText, LabelsStringsAndJsonAreNotFixed) {
  const ColumnInfo e = StringCol(ColumnType::kEnum);
  const ColumnInfo s = StringCol(ColumnType::kSet);
  const auto fixed = [](const ColumnValue& value, const ColumnInfo& column, ValueFormatOptions o) {
    char buf[render::kCanalFixedTextMax];
    return render::WriteCanalFixedText(value, column, o, buf) != nullptr;
  };
  EXPECT_TRUE(fixed(Unsigned(1, ColumnType::kEnum), e, {}));
  EXPECT_FALSE(fixed(Unsigned(1, ColumnType::kEnum), e, Readable()));
  EXPECT_FALSE(fixed(Unsigned(1, ColumnType::kSet), s, Readable()));
  // The value leaves its type unset: the column's decides.
  EXPECT_FALSE(fixed(Unsigned(1, ColumnType::kNull), e, Readable()));
  EXPECT_TRUE(fixed(Unsigned(1, ColumnType::kLong), Col(ColumnType::kLong), Readable()));
  const ColumnInfo v = Col(ColumnType::kVarchar, kUtf8mb4);
  EXPECT_FALSE(fixed(Raw(Kind::kString, ColumnType::kVarchar, "x"), v, {}));
  EXPECT_FALSE(fixed(Raw(Kind::kBytes, ColumnType::kBlob, "x"), v, {}));
  EXPECT_FALSE(fixed(Raw(Kind::kJson, ColumnType::kJson, "x"), v, {}));
  ColumnValue null_value;
  null_value.kind = Kind::kNull;
  EXPECT_FALSE(fixed(null_value, v, {}));
  // Nothing written for those; a DECIMAL whose bytes are not one (here: its
  // column has no precision) is no fixed text either, its error left to
  // AppendCanalValue.
  char buf[render::kCanalFixedTextMax] = {};
  EXPECT_EQ(render::WriteCanalFixedText(Unsigned(1, ColumnType::kEnum), e, Readable(), buf), nullptr);
  EXPECT_EQ(render::WriteCanalFixedText(Raw(Kind::kString, ColumnType::kVarchar, "x"), v, {}, buf), nullptr);
  EXPECT_EQ(buf[0], '\0');
  const ColumnValue bad_decimal = Raw(Kind::kDecimal, ColumnType::kNewDecimal, "x");
  EXPECT_EQ(render::WriteCanalFixedText(bad_decimal, v, {}, buf), nullptr);
  std::string text;
  EXPECT_FALSE(render::AppendCanalValue(bad_decimal, v, {}, &text).ok());
}

}  // namespace
}  // namespace canal::binlog
