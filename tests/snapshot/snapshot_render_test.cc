// SnapshotRowConverter and the chunk window's keys: a chunk row's values (as ChunkReader hands
// them out) become the decoder's values and render as the stream's do; the same key gives the
// same bytes from a chunk row and from a stream row. The live test (tests/snapshot/live/
// same_value_live_test.cc) checks every column kind against a real binlog.
#include "canal/snapshot/snapshot_render.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace canal::snapshot {
namespace {

using namespace std::string_literals;

using binlog::ColumnValue;

constexpr uint32_t kUtf8mb4 = 45, kLatin1 = 8;

TableColumn Col(std::string name, std::string data_type, std::string column_type, uint32_t collation = 0) {
  TableColumn c{std::move(name), std::move(data_type), true};
  c.column_type = std::move(column_type);
  c.collation_id = collation;
  return c;
}

template <typename Set>
FieldValue Field(FieldKind kind, Set set) {
  FieldValue f;
  f.kind = kind;
  set(f);
  return f;
}
FieldValue Bytes(std::string_view b, bool binary = false) {
  return Field(FieldKind::kBytes, [&](FieldValue& f) { f.bytes = b, f.binary = binary; });
}
FieldValue Signed(int64_t v) { return Field(FieldKind::kSigned, [&](FieldValue& f) { f.i64 = v; }); }
FieldValue Unsigned(uint64_t v) { return Field(FieldKind::kUnsigned, [&](FieldValue& f) { f.u64 = v; }); }
FieldValue Double(double v) { return Field(FieldKind::kDouble, [&](FieldValue& f) { f.f64 = v; }); }
FieldValue Time(TimeValue t) { return Field(FieldKind::kTime, [&](FieldValue& f) { f.time = t; }); }

class SnapshotRender : public ::testing::Test {
 protected:
  void SetUp() override {
    shape_.schema = "db";
    shape_.table = "t";
    auto add = [&](TableColumn c) { shape_.columns.push_back(std::move(c)); };
    add(Col("id", "int", "int(11)"));
    shape_.columns[0].primary_key = true;
    add(Col("u", "bigint", "bigint(20) unsigned"));
    TableColumn d = Col("d", "decimal", "decimal(14,4)");
    d.numeric_precision = 14;
    d.numeric_scale = 4;
    add(d);
    TableColumn dt = Col("dt", "datetime", "datetime(3)");
    dt.datetime_precision = 3;
    add(dt);
    TableColumn v = Col("v", "varchar", "varchar(10)", kUtf8mb4);
    v.octet_length = 40;
    add(v);
    add(Col("e", "enum", "enum('a','it''s','c')", kUtf8mb4));
    add(Col("s", "set", "set('x','y','z')", kUtf8mb4));
    TableColumn ts = Col("ts", "timestamp", "timestamp(2)");
    ts.datetime_precision = 2;
    add(ts);
    TableColumn bit = Col("b", "bit", "bit(10)");
    bit.numeric_precision = 10;
    add(bit);
    add(Col("y", "year", "year(4)"));
    TableColumn tm = Col("tm", "time", "time(1)");
    tm.datetime_precision = 1;
    add(tm);
    add(Col("f", "float", "float"));
    TableColumn l = Col("l", "varchar", "varchar(5)", kLatin1);
    l.octet_length = 5;
    add(l);
    TableColumn bin = Col("bin", "binary", "binary(3)");
    bin.octet_length = 3;
    add(bin);
    ASSERT_TRUE(converter_.Init(shape_, SnapshotColumnOptions{}).ok());
  }

  // The row every test converts; `fields_` keeps the bytes alive.
  std::vector<FieldValue> Row() {
    return {Signed(7),
            Unsigned(18446744073709551615ull),
            Bytes("-1234567890.1234"),
            Time({2024, 2, 29, 23, 59, 58, 123000, false}),
            Bytes("héllo"),
            Bytes("it's"),
            Bytes("x,z"),
            Time({2038, 1, 19, 3, 14, 7, 990000, false}),
            Bytes(std::string_view("\x02\x01", 2), true),
            Unsigned(2155),
            Time({0, 0, 1, 14, 5, 6, 500000, true}),  // -38:05:06.5, the day split off
            Double(static_cast<double>(1.1f)),
            Bytes("é"),  // the connection sends utf8mb4
            Bytes(std::string_view("a\0\0", 3), true)};
  }

  std::string Text(size_t i, render::ValueFormatOptions o = {}) {
    std::string s;
    const Status st = converter_.AppendValue(i, o, &s);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return s;
  }

  TableShape shape_;
  SnapshotRowConverter converter_;
};

TEST_F(SnapshotRender, ColumnsAreTheBinlogsDescription) {
  const auto& c = converter_.columns();
  EXPECT_EQ(c[0].type, binlog::ColumnType::kLong);
  EXPECT_TRUE(c[0].is_key);
  EXPECT_TRUE(c[1].is_unsigned);
  EXPECT_EQ(c[2].precision, 14);
  EXPECT_EQ(c[2].decimals, 4);
  EXPECT_EQ(c[3].type, binlog::ColumnType::kDateTime2);
  EXPECT_EQ(c[3].meta, 3);
  EXPECT_EQ(c[5].real_type, binlog::ColumnType::kEnum);
  EXPECT_EQ(c[5].enum_or_set_labels, (std::vector<std::string>{"a", "it's", "c"}));
  EXPECT_EQ(c[6].real_type, binlog::ColumnType::kSet);
  EXPECT_EQ(c[8].max_length, 10u);
  EXPECT_EQ(c[13].charset, 63u);
  // mysqlType derived from the binlog's types, as FULL metadata gives it.
  render::ValueFormatOptions o;
  EXPECT_EQ(converter_.MysqlType(0, o), "int(11)");
  EXPECT_EQ(converter_.MysqlType(2, o), "decimal(14,4)");
  EXPECT_EQ(converter_.MysqlType(3, o), "datetime(3)");
  EXPECT_EQ(converter_.MysqlType(5, o), "enum('a','it''s','c')");
}

TEST_F(SnapshotRender, RendersEveryKindAsTheStreamDoes) {
  const std::vector<FieldValue> row = Row();
  ASSERT_TRUE(converter_.Convert(row).ok());
  EXPECT_EQ(Text(0), "7");
  EXPECT_EQ(Text(1), "18446744073709551615");
  EXPECT_EQ(Text(2), "-1234567890.1234");
  EXPECT_EQ(Text(3), "2024-02-29 23:59:58.123");
  EXPECT_EQ(Text(4), "héllo");
  EXPECT_EQ(Text(5), "2");  // the index
  EXPECT_EQ(Text(6), "5");  // the bitmask
  EXPECT_EQ(Text(7), "2038-01-19 03:14:07.99");
  EXPECT_EQ(Text(8), "513");
  EXPECT_EQ(Text(9), "2155");
  EXPECT_EQ(Text(10), "-38:05:06.5");
  EXPECT_EQ(Text(11), "1.1");
  EXPECT_EQ(Text(12), "é");
  EXPECT_EQ(Text(13), std::string("a\0\0", 3));
  render::ValueFormatOptions readable;
  readable.readable = true;
  EXPECT_EQ(Text(5, readable), "it's");
  EXPECT_EQ(Text(6, readable), "x,z");
  render::ValueFormatOptions east;
  east.timestamp_utc_offset_seconds = 8 * 3600;
  EXPECT_EQ(Text(7, east), "2038-01-19 11:14:07.99");
  // sqlType per value: BIGINT UNSIGNED above 2^63-1 goes up to DECIMAL.
  EXPECT_EQ(converter_.SqlType(1), 3);
  EXPECT_EQ(converter_.SqlType(5), 4);
}

// The server's DECIMAL text is kept as it is only when it is what the binlog prints; any
// other spelling of the same value (leading zeros, a short fraction, "-0") goes through the
// binary form and comes out as the binlog prints it. Both give the binlog's text.
TEST_F(SnapshotRender, DecimalTextIsTheBinlogsWhateverTheServerSpelling) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-1234567890.1234", "-1234567890.1234"},  // canonical: kept
      {"0.0000", "0.0000"},
      {"0.5000", "0.5000"},
      {"-0.0001", "-0.0001"},
      {"9999999999.9999", "9999999999.9999"},
      {"00012.5000", "12.5000"},  // leading zeros
      {"12.5", "12.5000"},        // a short fraction
      {"-0.0000", "0.0000"},      // a signed zero
      {".5000", "0.5000"},        // no integer digit
      {"12", "12.0000"},          // no fraction
  };
  for (const auto& [server, binlog] : cases) {
    std::vector<FieldValue> row = Row();
    row[2] = Bytes(server);
    ASSERT_TRUE(converter_.Convert(row).ok()) << server;
    EXPECT_EQ(Text(2), binlog) << server;
    const bool kept = server == binlog;
    EXPECT_EQ(converter_.values()[2].kind,
              kept ? ColumnValue::Kind::kDecimalText : ColumnValue::Kind::kDecimal) << server;
  }
  for (const char* bad : {"12345678901.0000", "1.2.3", "-", "1e5", "12.34567", " 1.0000"}) {
    std::vector<FieldValue> row = Row();
    row[2] = Bytes(bad);
    EXPECT_EQ(converter_.Convert(row).code(), Status::Code::kInvalidArgument) << bad;
  }
}

TEST_F(SnapshotRender, NullsAndZeroValues) {
  std::vector<FieldValue> row = Row();
  row[4] = FieldValue{};
  row[3] = Time({0, 0, 0, 0, 0, 0, 0, false});
  row[7] = Time({0, 0, 0, 0, 0, 0, 0, false});
  row[5] = Bytes("");  // the invalid ENUM value
  row[6] = Bytes("");
  ASSERT_TRUE(converter_.Convert(row).ok());
  EXPECT_TRUE(converter_.values()[4].is_null());
  EXPECT_EQ(converter_.SqlType(4), 12);
  EXPECT_EQ(Text(3), "0000-00-00 00:00:00.000");
  EXPECT_EQ(converter_.values()[7].u64, 0u);
  EXPECT_EQ(Text(5), "0");
  EXPECT_EQ(Text(6), "0");
}

// One converter reads a whole chunk: each row's values render as that row's, whatever the rows
// before it held (a NULL, a value refused with an error, a DECIMAL that took the binary form).
TEST_F(SnapshotRender, EachRowRendersAsItsOwnWhateverCameBefore) {
  std::vector<FieldValue> row = Row();
  ASSERT_TRUE(converter_.Convert(row).ok());
  EXPECT_EQ(Text(3), "2024-02-29 23:59:58.123");

  row[0] = FieldValue{};
  row[2] = Bytes("12.5");  // not the binlog's spelling: the binary form
  row[3] = FieldValue{};
  row[4] = FieldValue{};
  ASSERT_TRUE(converter_.Convert(row).ok());
  EXPECT_TRUE(converter_.values()[0].is_null());
  EXPECT_EQ(converter_.values()[2].kind, ColumnValue::Kind::kDecimal);
  EXPECT_EQ(Text(2), "12.5000");
  EXPECT_TRUE(converter_.values()[3].is_null());
  EXPECT_TRUE(converter_.values()[4].is_null());

  row = Row();
  row[3] = Time({2024, 13, 1, 0, 0, 0, 0, false});  // refused
  EXPECT_EQ(converter_.Convert(row).code(), Status::Code::kInvalidArgument);
  row = Row();
  row[0] = Bytes("7");  // refused
  EXPECT_EQ(converter_.Convert(row).code(), Status::Code::kInvalidArgument);

  row = Row();
  row[0] = Unsigned(5);  // an INT the client handed out unsigned
  row[1] = Signed(-1);   // a BIGINT UNSIGNED handed out signed
  row[3] = Time({2001, 1, 1, 1, 2, 3, 500000, false});
  row[4] = Bytes("");
  ASSERT_TRUE(converter_.Convert(row).ok());
  EXPECT_EQ(Text(0), "5");
  EXPECT_EQ(Text(1), "18446744073709551615");
  EXPECT_EQ(converter_.values()[2].kind, ColumnValue::Kind::kDecimalText);
  EXPECT_EQ(Text(2), "-1234567890.1234");
  EXPECT_EQ(Text(3), "2001-01-01 01:02:03.500");
  EXPECT_EQ(converter_.values()[3].fsp, 3);
  EXPECT_EQ(converter_.values()[4].kind, ColumnValue::Kind::kString);
  EXPECT_EQ(Text(4), "");

  // An hour past 23 in a DATETIME is left to the general conversion, which takes it as before.
  row = Row();
  row[3] = Time({2001, 1, 1, 24, 0, 0, 0, false});
  const Status s = converter_.Convert(row);
  SnapshotRowConverter fresh;
  ASSERT_TRUE(fresh.Init(shape_, SnapshotColumnOptions{}).ok());
  EXPECT_EQ(fresh.Convert(row).code(), s.code());
}

TEST_F(SnapshotRender, AValueItCannotMapIsAnErrorNamingTableColumnAndValue) {
  std::vector<FieldValue> row = Row();
  row[5] = Bytes("nope");
  Status s = converter_.Convert(row);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("`db`.`t` column `e`"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("'nope'"), std::string::npos) << s.ToString();

  row = Row();
  row[6] = Bytes("x,w");
  s = converter_.Convert(row);
  EXPECT_NE(s.ToString().find("column `s`"), std::string::npos) << s.ToString();

  row = Row();
  row[2] = Bytes("12.34567");  // more fraction digits than DECIMAL(14,4) has
  s = converter_.Convert(row);
  EXPECT_NE(s.ToString().find("column `d`"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("12.34567"), std::string::npos) << s.ToString();

  row = Row();
  row[0] = Bytes("7");  // not an integer's binary value
  EXPECT_EQ(converter_.Convert(row).code(), Status::Code::kInvalidArgument);

  TableShape odd = shape_;
  odd.columns.push_back(Col("vec", "vector", "vector(3)"));
  SnapshotRowConverter c;
  s = c.Init(odd, {});
  EXPECT_EQ(s.code(), Status::Code::kNotSupported);
  EXPECT_NE(s.ToString().find("`vec`"), std::string::npos) << s.ToString();
}

TEST(SnapshotRenderFixedBinary, InetAndUuidBecomeTheirStoredBytes) {
  TableShape shape;
  shape.schema = "db";
  shape.table = "ips";
  shape.columns = {Col("a", "inet4", "inet4"), Col("b", "inet6", "inet6"), Col("u", "uuid", "uuid")};
  SnapshotRowConverter c;
  ASSERT_TRUE(c.Init(shape, {}).ok());
  EXPECT_EQ(c.columns()[1].max_length, 16u);
  EXPECT_EQ(c.columns()[2].charset, 63u);
  std::vector<FieldValue> row = {Bytes("192.168.0.1"), Bytes("::ffff:1.2.3.4"),
                                 Bytes("12345678-9abc-1def-8123-456789abcdef")};
  ASSERT_TRUE(c.Convert(row).ok());
  EXPECT_EQ(c.values()[0].raw, "\xC0\xA8\x00\x01"s);
  EXPECT_EQ(c.values()[1].raw, "\0\0\0\0\0\0\0\0\0\0\xFF\xFF\x01\x02\x03\x04"s);
  EXPECT_EQ(c.values()[2].raw, "\x12\x34\x56\x78\x9a\xbc\x1d\xef\x81\x23\x45\x67\x89\xab\xcd\xef"s);
  for (size_t bad = 0; bad < 3; ++bad) {
    std::vector<FieldValue> wrong = row;
    wrong[bad] = Bytes("1.2.3");
    const Status s = c.Convert(wrong);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.ToString().find("'1.2.3'"), std::string::npos) << s.ToString();
  }
}

TEST_F(SnapshotRender, MinimalMetadataTakesMysqlTypeFromTheSchema) {
  TableShape s = shape_;
  s.columns[0].column_type = "int";  // as a schema history parsed from DDL has it
  SnapshotRowConverter c;
  SnapshotColumnOptions o;
  o.schema_column_type = true;
  ASSERT_TRUE(c.Init(s, o).ok());
  EXPECT_EQ(c.MysqlType(0, {}), "int(11)");
  EXPECT_EQ(c.MysqlType(1, {}), "bigint(20) unsigned");
}

// The stream's values of the same row, as the row decoder gives them: the column's own bytes
// (latin1 text as latin1), DECIMAL in binary, DATETIME(3) as its fields.
struct StreamRow {
  std::string decimal = std::string("\x7E\xF2\x04\xC7\x2D\xFB\x2D", 7);  // -1234567890.1234 (MySQL's manual)
  std::vector<ColumnValue> values;
  explicit StreamRow(size_t n) : values(n) {
    for (ColumnValue& v : values) v.kind = ColumnValue::Kind::kNull;
  }
};

TEST_F(SnapshotRender, TheSameKeyGivesTheSameBytesFromBothSides) {
  binlog::TableMap table;
  table.db = "db";
  table.table = "t";
  table.columns = converter_.columns();  // what the stream's TABLE_MAP says of the table
  StreamRow stream(shape_.columns.size());
  std::vector<ColumnValue>& v = stream.values;
  v[0].kind = ColumnValue::Kind::kSigned;
  v[0].i64 = 7;
  v[2].kind = ColumnValue::Kind::kDecimal;
  v[2].raw = stream.decimal;
  v[3].kind = ColumnValue::Kind::kDateTime;
  v[3].fsp = 3;
  v[3].temporal = {false, 2024, 2, 29, 23, 59, 58, 123000};
  v[4].kind = ColumnValue::Kind::kString;
  v[4].raw = "héllo";
  v[12].kind = ColumnValue::Kind::kString;
  v[12].raw = "\xE9";  // é in latin1

  ASSERT_TRUE(converter_.Convert(Row()).ok());
  for (const std::vector<size_t>& columns : std::vector<std::vector<size_t>>{{0}, {2}, {3}, {4}, {12}, {2, 3, 4, 12}}) {
    ChunkKey key;
    key.kind = ChunkKey::Kind::kUniqueNotNull;
    key.columns = columns;
    KeyEncoder from_chunk, from_stream;
    ASSERT_TRUE(converter_.AppendKey(key, &from_chunk).ok());
    ASSERT_TRUE(AppendStreamKey(table, v, key, &from_stream).ok());
    EXPECT_EQ(from_chunk.key(), from_stream.key()) << "key columns " << columns.size() << " from " << columns[0];
    EXPECT_FALSE(from_chunk.key().empty());
  }

  // A different value in any key column gives different bytes.
  ChunkKey composite;
  composite.columns = {2, 3, 4};
  KeyEncoder a, b;
  ASSERT_TRUE(converter_.AppendKey(composite, &a).ok());
  v[3].temporal.micros = 124000;
  ASSERT_TRUE(AppendStreamKey(table, v, composite, &b).ok());
  EXPECT_NE(a.key(), b.key());

  // A key column missing from the stream's image is an error, not a short key.
  v[2].kind = ColumnValue::Kind::kAbsent;
  KeyEncoder c;
  EXPECT_FALSE(AppendStreamKey(table, v, composite, &c).ok());
}

}  // namespace
}  // namespace canal::snapshot
