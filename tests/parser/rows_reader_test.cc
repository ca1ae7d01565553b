// RowsReader on hand-built table maps and row images: every type of its
// plan-driven fast path against values worked out here from the storage
// formats, every truncation of a row, metadata that does not fit the row bytes,
// and the plan cache following a table map that changes.
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::binlog {
namespace {

using Kind = ColumnValue::Kind;

void PutLE(std::string& s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
void PutBE(std::string& s, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
}

ColumnInfo Col(std::string name, ColumnType type, uint16_t meta = 0) {
  ColumnInfo c;
  c.name = std::move(name);
  c.type = type;
  c.real_type = type;
  c.meta = meta;
  c.charset = 33;  // utf8
  return c;
}

// A table with one column of each type the fast path decodes, and one row of
// it whose values are worked out from the storage formats.
struct AllTypes {
  TableMap table;
  std::string row;  // null bitmap, then the values
  std::string bitmap = std::string(4, '\xff');  // every column present
};

uint64_t DateTime2Packed(uint64_t y, uint64_t mo, uint64_t d, uint64_t h, uint64_t mi, uint64_t s) {
  return ((y * 13 + mo) << 22 | d << 17 | h << 12 | mi << 6 | s) + 0x8000000000ULL;
}

AllTypes MakeAllTypes() {
  AllTypes a;
  auto& cols = a.table.columns;
  std::string& r = a.row;
  a.table.db = "db";
  a.table.table = "t";
  cols.push_back(Col("tiny", ColumnType::kTiny));
  cols.push_back(Col("ushort", ColumnType::kShort));
  cols.back().is_unsigned = true;
  cols.push_back(Col("int24", ColumnType::kInt24));
  cols.push_back(Col("long", ColumnType::kLong));
  cols.push_back(Col("ulonglong", ColumnType::kLongLong));
  cols.back().is_unsigned = true;
  cols.push_back(Col("float", ColumnType::kFloat, 4));
  cols.push_back(Col("double", ColumnType::kDouble, 8));
  cols.push_back(Col("year", ColumnType::kYear));
  cols.push_back(Col("ts", ColumnType::kTimestamp));
  cols.push_back(Col("ts2", ColumnType::kTimestamp2, 3));
  cols.push_back(Col("date", ColumnType::kDate));
  cols.push_back(Col("time", ColumnType::kTime));
  cols.push_back(Col("dt", ColumnType::kDateTime));
  cols.push_back(Col("dt2", ColumnType::kDateTime2, 6));
  cols.push_back(Col("time2", ColumnType::kTime2, 2));
  cols.push_back(Col("dec", ColumnType::kNewDecimal));
  cols.back().precision = 12;
  cols.back().decimals = 2;
  cols.push_back(Col("bit", ColumnType::kBit));
  cols.back().max_length = 10;
  cols.push_back(Col("enum", ColumnType::kString));
  cols.back().real_type = ColumnType::kEnum;
  cols.back().max_length = 1;
  cols.push_back(Col("set", ColumnType::kString));
  cols.back().real_type = ColumnType::kSet;
  cols.back().max_length = 2;
  cols.push_back(Col("varchar", ColumnType::kVarchar));
  cols.back().max_length = 300;
  cols.push_back(Col("binary", ColumnType::kString));
  cols.back().max_length = 10;
  cols.back().charset = 63;
  cols.push_back(Col("blob", ColumnType::kBlob, 2));
  cols.push_back(Col("geo", ColumnType::kGeometry, 4));
  cols.push_back(Col("null_col", ColumnType::kLong));
  cols.push_back(Col("last", ColumnType::kTiny));  // read with fewer than 8 bytes left

  // Null bitmap: 25 columns, only null_col (index 23) is NULL.
  PutLE(r, uint64_t{1} << 23, 4);
  PutLE(r, static_cast<uint8_t>(-5), 1);
  PutLE(r, 65000, 2);
  PutLE(r, static_cast<uint32_t>(-1000000) & 0xFFFFFF, 3);
  PutLE(r, static_cast<uint32_t>(-2000000000), 4);
  PutLE(r, 18000000000000000000ULL, 8);
  PutLE(r, std::bit_cast<uint32_t>(1.5f), 4);
  PutLE(r, std::bit_cast<uint64_t>(-2.25), 8);
  PutLE(r, 124, 1);                 // 2024
  PutLE(r, 1700000000, 4);          // TIMESTAMP
  PutBE(r, 1700000001, 4);          // TIMESTAMP2(3): seconds, then
  PutBE(r, 1234, 2);                // 123400 micros in hundreds
  PutLE(r, 29 | 2 << 5 | 2024 << 9, 3);
  PutLE(r, static_cast<uint32_t>(-123456) & 0xFFFFFF, 3);  // TIME -12:34:56
  PutLE(r, 20240229134556ULL, 8);
  PutBE(r, DateTime2Packed(2024, 2, 29, 13, 45, 56), 5);
  PutBE(r, 123456, 3);
  // TIME2(2) -01:02:03.45: the integer part rounds down, the fraction byte is
  // -45 (MySQL's storage of a negative time with a fraction).
  const uint64_t hms = 1 << 12 | 2 << 6 | 3;
  PutBE(r, 0x800000 - hms - 1, 3);
  PutBE(r, static_cast<uint8_t>(-45), 1);
  r += std::string("\x81\x00\x00\x30\x39\x07", 6);  // DECIMAL(12,2) bytes, kept raw
  PutBE(r, 0x2A5, 2);                               // BIT(10)
  PutLE(r, 3, 1);                                   // ENUM index
  PutLE(r, 0x0105, 2);                              // SET bits
  PutLE(r, 5, 2);
  r += "hello";
  PutLE(r, 3, 1);
  r += std::string("\x00\x01\x02", 3);
  PutLE(r, 4, 2);
  r += "blob";
  PutLE(r, 2, 4);
  r += "gg";
  PutLE(r, 7, 1);
  return a;
}

RowsEvent MakeEvent(const TableMap& table, const std::string& bitmap, const std::string& rows,
                    RowsKind kind = RowsKind::kWrite) {
  RowsEvent e;
  e.info.is_rows = true;
  e.info.kind = kind;
  e.info.version = 2;
  e.column_count = static_cast<uint32_t>(table.columns.size());
  e.columns_before = bitmap;
  e.columns_after = bitmap;
  e.rows = rows;
  e.table = &table;
  e.source = "test.000001";
  e.offset = 400;
  return e;
}

Status ReadAll(const RowsEvent& e, RowsReader* reader, std::vector<RowChange>* out) {
  reader->Reset(e);
  for (;;) {
    RowChange change;
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader->Next(&change, &done));
    if (done) return Status::OK();
    out->push_back(change);
  }
}

TEST(RowsReader, DecodesEveryFastPathTypeFromItsStorageFormat) {
  const AllTypes a = MakeAllTypes();
  const RowsEvent e = MakeEvent(a.table, a.bitmap, a.row);
  RowsReader reader;
  std::vector<RowChange> rows;
  ASSERT_TRUE(ReadAll(e, &reader, &rows).ok());
  ASSERT_EQ(rows.size(), 1u);
  const std::vector<ColumnValue>& v = rows[0].after.values;
  ASSERT_EQ(v.size(), a.table.columns.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].type, a.table.columns[i].real_type) << i;

  EXPECT_EQ(v[0].kind, Kind::kSigned);
  EXPECT_EQ(v[0].i64, -5);
  EXPECT_EQ(v[1].kind, Kind::kUnsigned);
  EXPECT_EQ(v[1].u64, 65000u);
  EXPECT_EQ(v[2].i64, -1000000);
  EXPECT_EQ(v[3].i64, -2000000000);
  EXPECT_EQ(v[4].kind, Kind::kUnsigned);
  EXPECT_EQ(v[4].u64, 18000000000000000000ULL);
  EXPECT_EQ(v[5].kind, Kind::kFloat);
  EXPECT_EQ(v[5].f32, 1.5f);
  EXPECT_EQ(v[6].kind, Kind::kDouble);
  EXPECT_EQ(v[6].f64, -2.25);
  EXPECT_EQ(v[7].kind, Kind::kSigned);
  EXPECT_EQ(v[7].i64, 2024);
  EXPECT_EQ(v[8].kind, Kind::kTimestamp);
  EXPECT_EQ(v[8].u64, 1700000000u);
  EXPECT_EQ(v[8].timestamp_micros, 0u);
  EXPECT_EQ(v[9].kind, Kind::kTimestamp);
  EXPECT_EQ(v[9].u64, 1700000001u);
  EXPECT_EQ(v[9].timestamp_micros, 123400u);
  EXPECT_EQ(v[9].fsp, 3);

  EXPECT_EQ(v[10].kind, Kind::kDate);
  EXPECT_EQ(v[10].temporal.year, 2024);
  EXPECT_EQ(v[10].temporal.month, 2);
  EXPECT_EQ(v[10].temporal.day, 29);

  EXPECT_EQ(v[11].kind, Kind::kTime);
  EXPECT_TRUE(v[11].temporal.negative);
  EXPECT_EQ(v[11].temporal.hour, 12u);
  EXPECT_EQ(v[11].temporal.minute, 34);
  EXPECT_EQ(v[11].temporal.second, 56);

  for (int i : {12, 13}) {
    EXPECT_EQ(v[i].kind, Kind::kDateTime) << i;
    EXPECT_EQ(v[i].temporal.year, 2024) << i;
    EXPECT_EQ(v[i].temporal.month, 2) << i;
    EXPECT_EQ(v[i].temporal.day, 29) << i;
    EXPECT_EQ(v[i].temporal.hour, 13u) << i;
    EXPECT_EQ(v[i].temporal.minute, 45) << i;
    EXPECT_EQ(v[i].temporal.second, 56) << i;
  }
  EXPECT_EQ(v[12].temporal.micros, 0u);
  EXPECT_EQ(v[13].temporal.micros, 123456u);
  EXPECT_EQ(v[13].fsp, 6);

  EXPECT_EQ(v[14].kind, Kind::kTime);
  EXPECT_TRUE(v[14].temporal.negative);
  EXPECT_EQ(v[14].temporal.hour, 1u);
  EXPECT_EQ(v[14].temporal.minute, 2);
  EXPECT_EQ(v[14].temporal.second, 3);
  EXPECT_EQ(v[14].temporal.micros, 450000u);

  EXPECT_EQ(v[15].kind, Kind::kDecimal);
  EXPECT_EQ(v[15].raw, std::string_view("\x81\x00\x00\x30\x39\x07", 6));
  EXPECT_EQ(v[16].kind, Kind::kUnsigned);
  EXPECT_EQ(v[16].u64, 0x2A5u);
  EXPECT_EQ(v[17].u64, 3u);
  EXPECT_EQ(v[18].u64, 0x0105u);
  EXPECT_EQ(v[19].kind, Kind::kString);
  EXPECT_EQ(v[19].raw, "hello");
  EXPECT_EQ(v[20].kind, Kind::kBytes);
  EXPECT_EQ(v[20].raw, std::string_view("\x00\x01\x02", 3));
  EXPECT_EQ(v[21].kind, Kind::kString);
  EXPECT_EQ(v[21].raw, "blob");
  EXPECT_EQ(v[22].kind, Kind::kBytes);
  EXPECT_EQ(v[22].raw, "gg");
  EXPECT_EQ(v[23].kind, Kind::kNull);
  EXPECT_TRUE(v[23].raw.empty());
  EXPECT_EQ(v[24].i64, 7);
}

TEST(RowsReader, ManyRowsBackToBackAndUpdatesWithTwoImages) {
  const AllTypes a = MakeAllTypes();
  std::string rows;
  for (int i = 0; i < 50; ++i) rows += a.row;
  RowsReader reader;
  std::vector<RowChange> out;
  ASSERT_TRUE(ReadAll(MakeEvent(a.table, a.bitmap, rows), &reader, &out).ok());
  ASSERT_EQ(out.size(), 50u);
  EXPECT_EQ(out[49].after.values[19].raw, "hello");
  EXPECT_EQ(reader.row_index(), 50u);

  out.clear();
  ASSERT_TRUE(ReadAll(MakeEvent(a.table, a.bitmap, a.row + a.row, RowsKind::kUpdate), &reader, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].has_before && out[0].has_after);
  EXPECT_EQ(out[0].before.values[13].temporal.micros, 123456u);
  EXPECT_EQ(out[0].after.values[24].i64, 7);
}

TEST(RowsReader, MinimalImagesMarkAbsentColumnsAndNumberNullBitsOverPresentOnes) {
  TableMap t;
  t.db = "db";
  t.table = "m";
  for (const char* name : {"a", "b", "c"}) t.columns.push_back(Col(name, ColumnType::kLong));
  // Before image: a and c present (c NULL); after image: only b.
  std::string before_bits("\x05", 1), after_bits("\x02", 1);
  std::string row;
  PutLE(row, 0x2, 1);  // null bits over present columns: a=0, c=1
  PutLE(row, 11, 4);
  PutLE(row, 0x0, 1);
  PutLE(row, 22, 4);
  RowsEvent e = MakeEvent(t, before_bits, row, RowsKind::kUpdate);
  e.columns_after = after_bits;
  RowsReader reader;
  std::vector<RowChange> out;
  ASSERT_TRUE(ReadAll(e, &reader, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  const auto& b = out[0].before.values;
  const auto& a = out[0].after.values;
  EXPECT_EQ(b[0].i64, 11);
  EXPECT_EQ(b[1].kind, Kind::kAbsent);
  EXPECT_EQ(b[2].kind, Kind::kNull);
  EXPECT_EQ(a[0].kind, Kind::kAbsent);
  EXPECT_EQ(a[1].i64, 22);
  EXPECT_EQ(a[2].kind, Kind::kAbsent);
}

TEST(RowsReader, PreGaImagesStartNullBitsAtBitOne) {
  TableMap t;
  t.db = "db";
  t.table = "v0";
  t.columns.push_back(Col("a", ColumnType::kTiny));
  t.columns.push_back(Col("b", ColumnType::kTiny));
  std::string row;
  PutLE(row, 0x4 | 0x1, 1);  // bit 0 reserved (set here), b NULL
  PutLE(row, 9, 1);
  std::string bits("\x03", 1);
  RowsEvent e = MakeEvent(t, bits, row);
  e.info.version = 0;
  RowsReader reader;
  std::vector<RowChange> out;
  ASSERT_TRUE(ReadAll(e, &reader, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].after.values[0].i64, 9);
  EXPECT_EQ(out[0].after.values[1].kind, Kind::kNull);
}

// The byte offset an error names ("byte N of the row data").
size_t ErrorByte(const std::string& message) {
  const size_t at = message.find(", byte ");
  if (at == std::string::npos) return std::string::npos;
  return std::stoul(message.substr(at + 7));
}

TEST(RowsReader, EveryTruncationOfARowIsAnErrorNamingRowColumnAndByte) {
  const AllTypes a = MakeAllTypes();
  for (size_t cut = 1; cut < a.row.size(); ++cut) {
    // Exactly the cut bytes on the heap, so that a sanitizer build sees any read past them.
    std::unique_ptr<char[]> bytes(new char[cut]);
    std::memcpy(bytes.get(), a.row.data(), cut);
    const std::string_view rows(bytes.get(), cut);
    RowsEvent e = MakeEvent(a.table, a.bitmap, "");
    e.rows = rows;
    RowsReader reader;
    std::vector<RowChange> out;
    const Status s = ReadAll(e, &reader, &out);
    ASSERT_FALSE(s.ok()) << "cut at " << cut;
    const std::string m = s.ToString();
    EXPECT_NE(m.find("test.000001: offset 400: rows event for `db`.`t`, row 1"), std::string::npos) << m;
    const bool named = m.find("runs past the end") != std::string::npos ||
                       m.find("points outside the event") != std::string::npos;
    EXPECT_TRUE(named) << m;
    EXPECT_LE(ErrorByte(m), cut) << m;
    if (cut >= 4) {
      EXPECT_NE(m.find(", column "), std::string::npos) << m;
    }
  }
}

TEST(RowsReader, SecondRowCutShortNamesRowTwoAndYieldsNoRow) {
  const AllTypes a = MakeAllTypes();
  const std::string rows = a.row + a.row.substr(0, 20);
  RowsReader reader;
  std::vector<RowChange> out;
  const Status s = ReadAll(MakeEvent(a.table, a.bitmap, rows), &reader, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(out.size(), 0u);  // the good first row does not leave a bad event
  // Null bitmap 4, then 1 + 2 + 3 + 4 bytes of integers: the BIGINT has 6 of its 8.
  EXPECT_NE(s.ToString().find("row 2, column 5 (ulonglong), byte " + std::to_string(a.row.size() + 14) +
                              " of the row data: value of 8 byte(s) runs past the end of the event (6 left)"),
            std::string::npos)
      << s.ToString();
}

// One column of `col`, one row of `value` bytes after a zero null byte.
Status DecodeOne(const ColumnInfo& col, const std::string& value, ColumnValue* out = nullptr) {
  TableMap t;
  t.db = "db";
  t.table = "bad";
  t.columns.push_back(col);
  const std::string row = std::string(1, '\0') + value;
  const std::string bits("\x01", 1);
  RowsReader reader;
  std::vector<RowChange> rows;
  Status s = ReadAll(MakeEvent(t, bits, row), &reader, &rows);
  if (s.ok() && out != nullptr && !rows.empty()) *out = rows[0].after.values[0];
  return s;
}

void ExpectError(const Status& s, const std::string& what) {
  ASSERT_FALSE(s.ok()) << what;
  EXPECT_NE(s.ToString().find(what), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("row 1, column 1"), std::string::npos) << s.ToString();
}

TEST(RowsReader, TableMapWhoseMetadataDoesNotFitTheRowBytes) {
  // VARCHAR(300) says two length bytes; the row has one ("\x05hello").
  ColumnInfo vc = Col("vc", ColumnType::kVarchar);
  vc.max_length = 300;
  ExpectError(DecodeOne(vc, "\x05hello"), "length 26629 points outside the event (4 byte(s) left)");
  // DECIMAL(30,10) needs 14 bytes; the row has 6.
  ColumnInfo dec = Col("dec", ColumnType::kNewDecimal);
  dec.precision = 30;
  dec.decimals = 10;
  ExpectError(DecodeOne(dec, std::string(6, '\x80')), "value of 14 byte(s) runs past the end of the event (6 left)");
  // A BLOB whose length takes 4 bytes, with 2 of them there.
  ExpectError(DecodeOne(Col("b", ColumnType::kBlob, 4), std::string("\x01\x00", 2)),
              "value of 4 byte(s) runs past the end of the event (2 left)");
  // DATETIME(6) is 8 bytes.
  ExpectError(DecodeOne(Col("dt", ColumnType::kDateTime2, 6), std::string(7, '\x80')),
              "value of 8 byte(s) runs past the end");
}

TEST(RowsReader, MetadataOutOfRangeIsAnErrorNamingTheColumn) {
  ColumnInfo bit = Col("bit", ColumnType::kBit);
  bit.max_length = 0;
  ExpectError(DecodeOne(bit, "\x01"), "BIT column of 0 bits");
  bit.max_length = 65;
  ExpectError(DecodeOne(bit, std::string(9, '\x01')), "BIT column of 65 bits");
  ColumnInfo en = Col("en", ColumnType::kString);
  en.real_type = ColumnType::kEnum;
  en.max_length = 9;
  ExpectError(DecodeOne(en, std::string(9, '\x01')), "ENUM/SET value of 9 bytes");
  ExpectError(DecodeOne(Col("blob", ColumnType::kBlob, 7), "\x01\x00"), "BLOB length size 7");
  ExpectError(DecodeOne(Col("geo", ColumnType::kGeometry, 0), "\x01\x00"), "length size 0");
  ExpectError(DecodeOne(Col("t2", ColumnType::kTime2, 9), std::string(8, '\x80')), "fractional precision 9 (at most 6)");
  ExpectError(DecodeOne(Col("u", static_cast<ColumnType>(0xe0)), "\x01"), "is not supported in row images");
}

TEST(RowsReader, TemporalValuesOutOfRangeAreErrors) {
  std::string neg;
  PutBE(neg, 0x7FFFFFFFFFULL, 5);  // below the DATETIME2 offset: negative
  ExpectError(DecodeOne(Col("dt", ColumnType::kDateTime2, 0), neg), "negative DATETIME");
  std::string ts;
  PutBE(ts, 1700000000, 4);
  PutBE(ts, 0xFF, 1);  // TIMESTAMP(2) fraction 255 -> 2,550,000 micros
  ExpectError(DecodeOne(Col("ts", ColumnType::kTimestamp2, 2), ts), "fractional seconds out of range");
  std::string dt;
  PutBE(dt, DateTime2Packed(2024, 1, 2, 3, 4, 5), 5);
  PutBE(dt, 0xFFFF, 2);  // DATETIME(4) fraction 65535 -> 6,553,500 micros
  ExpectError(DecodeOne(Col("dt", ColumnType::kDateTime2, 4), dt), "fractional seconds out of range");
  std::string t2;
  PutBE(t2, 0x800000, 3);
  PutBE(t2, 0xFF, 1);  // TIME(1) fraction 255 -> 2,550,000 micros
  ExpectError(DecodeOne(Col("t2", ColumnType::kTime2, 1), t2), "fractional seconds out of range");
}

TEST(RowsReader, RowsEventWiderThanItsTableMapOrWithoutOneIsAnError) {
  TableMap t;
  t.db = "db";
  t.table = "narrow";
  t.columns.push_back(Col("a", ColumnType::kTiny));
  const std::string bits("\x03", 1), row("\x00\x01\x02", 3);
  RowsEvent e = MakeEvent(t, bits, row);
  e.column_count = 2;
  RowsReader reader;
  std::vector<RowChange> out;
  Status s = ReadAll(e, &reader, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("rows event has 2 columns but its table map has 1"), std::string::npos)
      << s.ToString();

  e.table = nullptr;
  s = ReadAll(e, &reader, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("test.000001: offset 400: rows event without a table map"), std::string::npos)
      << s.ToString();
}

TEST(RowsReader, WritesNeedNoAfterBitmapAndAShortBitmapIsAnError) {
  TableMap t;
  t.db = "db";
  t.table = "bm";
  for (int i = 0; i < 9; ++i) t.columns.push_back(Col("c" + std::to_string(i), ColumnType::kTiny));
  const std::string bits("\xff\x01", 2);
  std::string row(2, '\0');
  for (int i = 0; i < 9; ++i) row.push_back(static_cast<char>(i));
  RowsEvent e = MakeEvent(t, bits, row);
  e.columns_after = {};  // a write event's after bitmap is not read
  RowsReader reader;
  std::vector<RowChange> out;
  ASSERT_TRUE(ReadAll(e, &reader, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].after.values[8].i64, 8);

  // An update reads both; one byte of bitmap cannot cover nine columns.
  RowsEvent u = MakeEvent(t, bits, row + row, RowsKind::kUpdate);
  u.columns_after = std::string_view(bits.data(), 1);
  Status s = ReadAll(u, &reader, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("column bitmap shorter than the event's 9 columns"), std::string::npos)
      << s.ToString();
  e.columns_before = std::string_view(bits.data(), 1);
  s = ReadAll(e, &reader, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("column bitmap shorter"), std::string::npos) << s.ToString();
}

// The plan is cached per table layout: a map that changes (a new TABLE_MAP at
// the same address, a schema provider's signedness, an edited copy) is read
// with its new columns.
TEST(RowsReader, PlanFollowsTheTableMapWhenItChanges) {
  auto t = std::make_unique<TableMap>();
  t->db = "db";
  t->table = "p";
  t->columns.push_back(Col("a", ColumnType::kTiny));
  t->layout_id.Renew();
  const std::string bits("\x01", 1), row("\x00\xff", 2);
  RowsReader reader;
  std::vector<RowChange> out;
  ASSERT_TRUE(ReadAll(MakeEvent(*t, bits, row), &reader, &out).ok());
  EXPECT_EQ(out.back().after.values[0].kind, Kind::kSigned);
  EXPECT_EQ(out.back().after.values[0].i64, -1);

  // Changed in place with a new id (what the decoder does).
  t->columns[0].is_unsigned = true;
  t->layout_id.Renew();
  ASSERT_TRUE(ReadAll(MakeEvent(*t, bits, row), &reader, &out).ok());
  EXPECT_EQ(out.back().after.values[0].kind, Kind::kUnsigned);
  EXPECT_EQ(out.back().after.values[0].u64, 255u);

  // Assigned from an edited copy: copies and assignments take fresh ids.
  TableMap copy = *t;
  EXPECT_NE(copy.layout_id.value(), 0u);
  EXPECT_NE(copy.layout_id.value(), t->layout_id.value());
  copy.columns[0].is_unsigned = false;
  const uint64_t before = t->layout_id.value();
  *t = copy;
  EXPECT_NE(t->layout_id.value(), before);
  EXPECT_NE(t->layout_id.value(), copy.layout_id.value());
  ASSERT_TRUE(ReadAll(MakeEvent(*t, bits, row), &reader, &out).ok());
  EXPECT_EQ(out.back().after.values[0].i64, -1);

  // A hand-built map (id 0, and so are its copies) is read as it is now, edits and all.
  TableMap hand;
  hand.db = "db";
  hand.table = "h";
  hand.columns.push_back(Col("a", ColumnType::kTiny));
  EXPECT_EQ(TableMap(hand).layout_id.value(), 0u);
  ASSERT_TRUE(ReadAll(MakeEvent(hand, bits, row), &reader, &out).ok());
  EXPECT_EQ(out.back().after.values[0].i64, -1);
  hand.columns[0].is_unsigned = true;
  ASSERT_TRUE(ReadAll(MakeEvent(hand, bits, row), &reader, &out).ok());
  EXPECT_EQ(out.back().after.values[0].u64, 255u);
}

}  // namespace
}  // namespace canal::binlog
