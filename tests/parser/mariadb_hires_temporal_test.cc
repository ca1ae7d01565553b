// MariaDB's own TIMESTAMP(N)/DATETIME(N)/TIME(N), logged under the old type
// codes 7/12/11 with no metadata (columns made with mysql56_temporal_format=OFF,
// or on MariaDB 5.3-10.0): bytes copied from a MariaDB 10.11 binlog decode to
// the values its SELECT printed, and to the same ColumnValue as the TIME2 /
// DATETIME2 / TIMESTAMP2 of the same N (so that every renderer prints them
// alike); a precision nobody knows, a short value and a fraction out of range
// are errors naming the column; the precision comes from the schema's
// COLUMN_TYPE. The live test is tests/integration/mariadb_old_temporal_test.cc.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/column_text.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/parser/binlog/table_map_decoder.h"

namespace canal::binlog {
namespace {

using Kind = ColumnValue::Kind;

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 3) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

void PutBE(std::string& s, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
}

ColumnInfo Col(ColumnType type, uint16_t meta) {
  ColumnInfo c;
  c.name = "c";
  c.type = type;
  c.real_type = type;
  c.meta = meta;
  return c;
}

// Decodes one column of `col` from `value` (after a zero null byte), or with
// the null bit set when `null`.
Status DecodeOne(const ColumnInfo& col, const std::string& value, ColumnValue* out, bool null = false) {
  TableMap t;
  t.db = "db";
  t.table = "t";
  t.columns.push_back(col);
  const std::string row = std::string(1, null ? '\x01' : '\0') + value;
  RowsEvent e;
  e.info.is_rows = true;
  e.info.kind = RowsKind::kWrite;
  e.info.version = 2;
  e.column_count = 1;
  static const std::string kPresent("\x01", 1);  // the event keeps a view of it
  e.columns_before = kPresent;
  e.rows = row;
  e.table = &t;
  e.source = "mariadb-bin.000002";
  e.offset = 1910;
  RowsReader reader;
  reader.Reset(e);
  RowChange change;
  bool done = false;
  CANAL_RETURN_IF_ERROR(reader.Next(&change, &done));
  EXPECT_FALSE(done);
  *out = change.after.values[0];
  CANAL_RETURN_IF_ERROR(reader.Next(&change, &done));
  EXPECT_TRUE(done);
  return Status::OK();
}

ColumnValue Decoded(const ColumnInfo& col, const std::string& value) {
  ColumnValue v;
  const Status s = DecodeOne(col, value, &v);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return v;
}

void ExpectSameTemporal(const ColumnValue& a, const ColumnValue& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.fsp, b.fsp);
  EXPECT_EQ(a.temporal.negative, b.temporal.negative);
  EXPECT_EQ(a.temporal.year, b.temporal.year);
  EXPECT_EQ(a.temporal.month, b.temporal.month);
  EXPECT_EQ(a.temporal.day, b.temporal.day);
  EXPECT_EQ(a.temporal.hour, b.temporal.hour);
  EXPECT_EQ(a.temporal.minute, b.temporal.minute);
  EXPECT_EQ(a.temporal.second, b.temporal.second);
  EXPECT_EQ(a.temporal.micros, b.temporal.micros);
  if (a.kind == Kind::kTimestamp) {
    EXPECT_EQ(a.u64, b.u64);
    EXPECT_EQ(a.timestamp_micros, b.timestamp_micros);
  }
}

// TIMESTAMP2/DATETIME2/TIME2 bytes of the same value, for the comparison.
std::string Timestamp2(uint32_t secs, uint32_t micros, uint8_t fsp) {
  std::string s;
  PutBE(s, secs, 4);
  const int fb = (fsp + 1) / 2;
  const uint32_t frac = fb == 1 ? micros / 10000 : fb == 2 ? micros / 100 : micros;
  PutBE(s, frac, fb);
  return s;
}
std::string DateTime2(uint64_t y, uint64_t mo, uint64_t d, uint64_t h, uint64_t mi, uint64_t sec, uint32_t micros,
                      uint8_t fsp) {
  std::string s;
  PutBE(s, ((y * 13 + mo) << 22 | d << 17 | h << 12 | mi << 6 | sec) + 0x8000000000ULL, 5);
  const int fb = (fsp + 1) / 2;
  const uint32_t frac = fb == 1 ? micros / 10000 : fb == 2 ? micros / 100 : micros;
  PutBE(s, frac, fb);
  return s;
}
std::string Time2(bool negative, uint64_t h, uint64_t mi, uint64_t sec, uint32_t micros, uint8_t fsp) {
  // TIME2 of 6 digits is one 6-byte packed value; fewer digits are
  // handled by the same fill, so N = 6 bytes are enough to compare with.
  int64_t packed = static_cast<int64_t>((h << 12 | mi << 6 | sec) << 24) + micros;
  if (negative) packed = -packed;
  std::string s;
  PutBE(s, static_cast<uint64_t>(packed + 0x800000000000LL), 6);
  (void)fsp;
  return s;
}

TEST(MariadbHiresTemporal, TimestampBytesFromTheServerDecodeToItsSelect) {
  // '2022-05-16 14:53:10.1' .. '.123456' (UTC), as MariaDB 10.11 logged them.
  const char* bytes[7] = {nullptr, "62 82 65 56 01", "62 82 65 56 0c", "62 82 65 56 00 7b", "62 82 65 56 04 d2",
                          "62 82 65 56 00 30 39", "62 82 65 56 01 e2 40"};
  const uint32_t micros[7] = {0, 100000, 120000, 123000, 123400, 123450, 123456};
  for (uint8_t n = 1; n <= 6; ++n) {
    SCOPED_TRACE(int{n});
    const ColumnValue v = Decoded(Col(ColumnType::kTimestamp, n), Hex(bytes[n]));
    EXPECT_EQ(v.kind, Kind::kTimestamp);
    EXPECT_EQ(v.u64, 1652712790u);
    EXPECT_EQ(v.timestamp_micros, micros[n]);
    EXPECT_EQ(v.fsp, n);
    ExpectSameTemporal(v, Decoded(Col(ColumnType::kTimestamp2, n), Timestamp2(1652712790, micros[n], n)));
  }
}

TEST(MariadbHiresTemporal, DateTimeBytesFromTheServerDecodeToItsSelect) {
  const char* bytes[7] = {nullptr,
                          "00 a9 3f 16 bd 5d",
                          "06 9c 76 e3 65 a4",
                          "00 42 1c a4 e1 f8 6b",
                          "02 95 1e 70 d3 b4 32",
                          "19 d3 30 68 45 09 f9",
                          "01 02 3f e4 12 b2 63 c0"};
  const uint32_t micros[7] = {0, 100000, 120000, 123000, 123400, 123450, 123456};
  for (uint8_t n = 1; n <= 6; ++n) {
    SCOPED_TRACE(int{n});
    const ColumnValue v = Decoded(Col(ColumnType::kDateTime, n), Hex(bytes[n]));
    EXPECT_EQ(v.kind, Kind::kDateTime);
    EXPECT_EQ(v.temporal.year, 2022);
    EXPECT_EQ(v.temporal.month, 5);
    EXPECT_EQ(v.temporal.day, 16);
    EXPECT_EQ(v.temporal.hour, 14u);
    EXPECT_EQ(v.temporal.minute, 53);
    EXPECT_EQ(v.temporal.second, 10);
    EXPECT_EQ(v.temporal.micros, micros[n]);
    ExpectSameTemporal(v, Decoded(Col(ColumnType::kDateTime2, n), DateTime2(2022, 5, 16, 14, 53, 10, micros[n], n)));
  }
}

// MariaDB's packed time at N digits (its pack_time, shifted).
uint64_t MariaPacked(uint64_t y, uint64_t mo, uint64_t d, uint64_t h, uint64_t mi, uint64_t s, uint64_t micros,
                     uint8_t n) {
  uint64_t p = (((((y * 13 + mo) * 32 + d) * 24 + h) * 60 + mi) * 60 + s) * 1000000 + micros;
  for (int i = n; i < 6; ++i) p /= 10;
  return p;
}
const size_t kDateTimeBytes[7] = {8, 6, 6, 7, 7, 7, 8};
const size_t kTimeBytes[7] = {3, 4, 4, 5, 5, 5, 6};

TEST(MariadbHiresTemporal, DateTimeEdgesZeroMinAndMax) {
  for (uint8_t n = 1; n <= 6; ++n) {
    SCOPED_TRACE(int{n});
    std::string zero(kDateTimeBytes[n], '\0');
    const ColumnValue z = Decoded(Col(ColumnType::kDateTime, n), zero);
    ExpectSameTemporal(z, Decoded(Col(ColumnType::kDateTime2, n), DateTime2(0, 0, 0, 0, 0, 0, 0, n)));
    uint32_t unit = 1;  // micros per digit at N
    for (int i = n; i < 6; ++i) unit *= 10;
    const uint32_t max_micros = 999999 / unit * unit;
    std::string max;
    PutBE(max, MariaPacked(9999, 12, 31, 23, 59, 59, max_micros, n), static_cast<int>(kDateTimeBytes[n]));
    const ColumnValue m = Decoded(Col(ColumnType::kDateTime, n), max);
    EXPECT_EQ(m.temporal.year, 9999);
    EXPECT_EQ(m.temporal.micros, max_micros);
    ExpectSameTemporal(m, Decoded(Col(ColumnType::kDateTime2, n), DateTime2(9999, 12, 31, 23, 59, 59, max_micros, n)));
    std::string min;
    PutBE(min, MariaPacked(1000, 1, 1, 0, 0, 0, n == 6 ? 1 : 0, n), static_cast<int>(kDateTimeBytes[n]));
    EXPECT_EQ(Decoded(Col(ColumnType::kDateTime, n), min).temporal.year, 1000);
  }
}

TEST(MariadbHiresTemporal, TimeBytesFromTheServerAndNegativeTimes) {
  // '14:53:10.1' as MariaDB 10.11 logged TIME(1).
  const ColumnValue t1 = Decoded(Col(ColumnType::kTime, 1), Hex("01 d5 0d bd"));
  EXPECT_FALSE(t1.temporal.negative);
  EXPECT_EQ(t1.temporal.hour, 14u);
  EXPECT_EQ(t1.temporal.minute, 53);
  EXPECT_EQ(t1.temporal.second, 10);
  EXPECT_EQ(t1.temporal.micros, 100000u);
  struct Case {
    bool negative;
    uint64_t h, mi, s;
    uint32_t micros;
  };
  const Case cases[] = {{false, 838, 59, 59, 0}, {true, 838, 59, 59, 0}, {true, 838, 59, 58, 900000},
                        {true, 0, 0, 0, 500000}, {false, 0, 0, 0, 0},    {true, 12, 0, 1, 100000}};
  for (uint8_t n = 1; n <= 6; ++n) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(n) + ": " + (c.negative ? "-" : "") + std::to_string(c.h) + ":" +
                   std::to_string(c.mi) + ":" + std::to_string(c.s) + "." + std::to_string(c.micros));
      const uint64_t zero = 3020400 * MariaPacked(0, 0, 0, 0, 0, 1, 0, n);  // 838:59:59 + 1 s at N digits
      const uint64_t packed = MariaPacked(0, 0, 0, c.h, c.mi, c.s, c.micros, n);
      std::string b;
      PutBE(b, c.negative ? zero - packed : zero + packed, static_cast<int>(kTimeBytes[n]));
      const ColumnValue v = Decoded(Col(ColumnType::kTime, n), b);
      ColumnValue want = Decoded(Col(ColumnType::kTime2, 6), Time2(c.negative, c.h, c.mi, c.s, c.micros, 6));
      want.fsp = n;
      if (c.h == 0 && c.mi == 0 && c.s == 0 && c.micros == 0) want.temporal.negative = false;
      ExpectSameTemporal(v, want);
    }
  }
}

TEST(MariadbHiresTemporal, PlainOldTypesStayWhatTheyWere) {
  // N = 0 (meta 0): the classic 4-byte little-endian TIMESTAMP, 8-byte DATETIME, 3-byte TIME.
  EXPECT_EQ(Decoded(Col(ColumnType::kTimestamp, 0), Hex("56 65 82 62")).u64, 1652712790u);
  const ColumnValue dt = Decoded(Col(ColumnType::kDateTime, 0), Hex("9e 98 ae f4 63 12 00 00"));
  EXPECT_EQ(dt.temporal.year, 2022);
  EXPECT_EQ(dt.temporal.second, 10);
  EXPECT_EQ(Decoded(Col(ColumnType::kTime, 0), Hex("9e 37 02")).temporal.hour, 14u);
}

TEST(MariadbHiresTemporal, NullNeedsNoPrecision) {
  ColumnValue v;
  ASSERT_TRUE(DecodeOne(Col(ColumnType::kDateTime, kUnknownTemporalPrecision), "", &v, true).ok());
  EXPECT_EQ(v.kind, Kind::kNull);
}

TEST(MariadbHiresTemporal, UnknownPrecisionShortValuesAndBadFractionsAreErrors) {
  ColumnValue v;
  for (ColumnType type : {ColumnType::kTimestamp, ColumnType::kDateTime, ColumnType::kTime}) {
    const Status s = DecodeOne(Col(type, kUnknownTemporalPrecision), std::string(8, '\x01'), &v);
    ASSERT_FALSE(s.ok());
    const std::string m = s.ToString();
    const std::string name = type == ColumnType::kTimestamp ? "TIMESTAMP" : type == ColumnType::kDateTime ? "DATETIME" : "TIME";
    EXPECT_NE(m.find("mariadb-bin.000002: offset 1910: rows event for `db`.`t`, row 1, column 1 (c)"), std::string::npos) << m;
    EXPECT_NE(m.find(name + " under the old type code (" + std::to_string(static_cast<int>(type)) + ")"), std::string::npos) << m;
    EXPECT_NE(m.find(name + "(1..6)"), std::string::npos) << m;
    EXPECT_NE(m.find("refusing to guess: decode with a schema"), std::string::npos) << m;
    EXPECT_NE(m.find("--schema"), std::string::npos) << m;
  }
  // Every length one short of what N needs.
  const size_t ts_bytes[7] = {4, 5, 5, 6, 6, 7, 7};
  for (uint8_t n = 1; n <= 6; ++n) {
    for (auto [type, need] : {std::pair{ColumnType::kTimestamp, ts_bytes[n]}, std::pair{ColumnType::kDateTime, kDateTimeBytes[n]},
                              std::pair{ColumnType::kTime, kTimeBytes[n]}}) {
      const Status s = DecodeOne(Col(type, n), std::string(need - 1, '\x01'), &v);
      ASSERT_FALSE(s.ok()) << int{n};
      EXPECT_NE(s.ToString().find("(" + std::to_string(n) + ") value of " + std::to_string(need) +
                                  " byte(s) runs past the end of the event (" + std::to_string(need - 1) + " left)"),
                std::string::npos)
          << s.ToString();
    }
  }
  // TIMESTAMP(3) with a fraction of 1000 (thousandths): not a value.
  std::string ts;
  PutBE(ts, 1652712790, 4);
  PutBE(ts, 1000, 2);
  Status s = DecodeOne(Col(ColumnType::kTimestamp, 3), ts, &v);
  EXPECT_NE(s.ToString().find("TIMESTAMP(3) value out of range"), std::string::npos) << s.ToString();
  // DATETIME(6) of year 10000.
  std::string dt;
  PutBE(dt, MariaPacked(10000, 1, 1, 0, 0, 0, 0, 6), 8);
  s = DecodeOne(Col(ColumnType::kDateTime, 6), dt, &v);
  EXPECT_NE(s.ToString().find("DATETIME(6) value out of range"), std::string::npos) << s.ToString();
  // Precision past 6 (a hand-built map).
  s = DecodeOne(Col(ColumnType::kTime, 7), std::string(8, '\x01'), &v);
  EXPECT_NE(s.ToString().find("fractional precision 7 (at most 6)"), std::string::npos) << s.ToString();
}

class FakeSchema : public TableSchemaProvider {
 public:
  std::vector<SchemaColumn> columns;
  Status GetColumns(std::string_view, std::string_view, std::vector<SchemaColumn>* out) override {
    *out = columns;
    return Status::OK();
  }
  void Invalidate(std::string_view, std::string_view) override {}
};

SchemaColumn SchemaCol(std::string name, std::string data_type, std::string column_type) {
  SchemaColumn c;
  c.name = std::move(name);
  c.data_type = std::move(data_type);
  c.column_type = std::move(column_type);
  return c;
}

TEST(MariadbHiresTemporal, PrecisionComesFromTheSchemasColumnType) {
  TableMap t;
  t.db = "db";
  t.table = "t";
  for (ColumnType type : {ColumnType::kLong, ColumnType::kTimestamp, ColumnType::kDateTime, ColumnType::kTime,
                          ColumnType::kTime, ColumnType::kDateTime}) {
    t.columns.push_back(Col(type, 0));
  }
  ASSERT_TRUE(MarkTemporalPrecisionUnknown(&t));
  EXPECT_TRUE(HasUnknownTemporalPrecision(t));
  EXPECT_EQ(t.columns[0].meta, 0);
  EXPECT_EQ(t.columns[1].meta, kUnknownTemporalPrecision);
  FakeSchema schema;
  schema.columns = {SchemaCol("id", "int", "int(11)"),         SchemaCol("ts", "timestamp", "timestamp(3)"),
                    SchemaCol("dt", "datetime", "datetime(6)"), SchemaCol("t", "time", "time /* mariadb-5.3 */"),
                    // A schema calling a TIME column a datetime(2), or giving no COLUMN_TYPE, says no N.
                    SchemaCol("t2", "time", "datetime(2)"),    SchemaCol("dt2", "datetime", "")};
  ASSERT_TRUE(ApplySchemaProvider(&schema, &t).ok());
  EXPECT_EQ(t.columns[1].meta, 3);
  EXPECT_EQ(t.columns[2].meta, 6);
  EXPECT_EQ(t.columns[3].meta, 0);
  EXPECT_EQ(t.columns[4].meta, kUnknownTemporalPrecision);
  EXPECT_EQ(t.columns[5].meta, kUnknownTemporalPrecision);
  EXPECT_TRUE(HasUnknownTemporalPrecision(t));

  TableMap none;
  none.columns.push_back(Col(ColumnType::kDate, 0));
  EXPECT_FALSE(MarkTemporalPrecisionUnknown(&none));
}

TEST(MariadbHiresTemporal, TypeTextCarriesThePrecision) {
  EXPECT_EQ(ColumnTypeText(Col(ColumnType::kTimestamp, 3), true), "timestamp(3)");
  EXPECT_EQ(ColumnTypeText(Col(ColumnType::kDateTime, 6), true), "datetime(6)");
  EXPECT_EQ(ColumnTypeText(Col(ColumnType::kTime, 1), true), "time(1)");
  EXPECT_EQ(ColumnTypeText(Col(ColumnType::kTime, 0), true), "time");
  EXPECT_EQ(ColumnTypeText(Col(ColumnType::kDateTime, kUnknownTemporalPrecision), true), "datetime");
}

}  // namespace
}  // namespace canal::binlog
