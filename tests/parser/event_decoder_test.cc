// EventDecoder and RowsReader on hand-built events: formats, checksums, unknown
// types, table maps and row images, good and bad.
#include <zlib.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/render/canal_value.h"
#include "canal/parser/binlog/format_description.h"

namespace canal::binlog {
namespace {

void Put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v));
  s.push_back(static_cast<char>(v >> 8));
}
void Put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
void Put48(std::string& s, uint64_t v) {
  for (int i = 0; i < 6; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}

// Builds binlog files event by event (v4 headers), optionally with CRC32.
class BinlogBuilder {
 public:
  explicit BinlogBuilder(bool crc, std::string version = "8.0.36") : crc_(crc) {
    bytes_ = std::string("\xfe" "bin", 4);
    std::string body;
    Put16(body, 4);
    std::string v = version;
    v.resize(50, '\0');
    body += v;
    Put32(body, 0);
    body.push_back(19);
    std::string post(41, '\0');
    post[1] = 13;   // QUERY
    post[3] = 8;    // ROTATE
    post[18] = 8;   // TABLE_MAP
    post[29] = 10;  // WRITE_ROWS_V2
    post[30] = 10;  // UPDATE_ROWS_V2
    post[31] = 10;  // DELETE_ROWS_V2
    body += post;
    body.push_back(crc ? 1 : 0);  // checksum algorithm (always followed by a CRC)
    Add(15, body, /*force_crc=*/true, fde_flags_);
  }
  void SetFdeInUse() { fde_in_use_ = true; }
  // Appends an event; returns its offset.
  size_t Add(uint8_t type, const std::string& body, bool force_crc = false, uint16_t flags = 0) {
    std::string ev;
    const bool with_crc = crc_ || force_crc;
    Put32(ev, 1700000000);
    ev.push_back(static_cast<char>(type));
    Put32(ev, 1);
    const uint32_t size = static_cast<uint32_t>(19 + body.size() + (with_crc ? 4 : 0));
    Put32(ev, size);
    Put32(ev, static_cast<uint32_t>(bytes_.size() + size));
    Put16(ev, flags);
    ev += body;
    if (with_crc) {
      Put32(ev, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(ev.data()), static_cast<uInt>(ev.size()))));
    }
    size_t at = bytes_.size();
    bytes_ += ev;
    return at;
  }
  std::string& bytes() { return bytes_; }

 private:
  bool crc_;
  bool fde_in_use_ = false;
  uint16_t fde_flags_ = 0;
  std::string bytes_;
};

std::string QueryBody(const std::string& db, const std::string& sql) {
  std::string b;
  Put32(b, 7);   // thread id
  Put32(b, 0);   // exec time
  b.push_back(static_cast<char>(db.size()));
  Put16(b, 0);   // error code
  Put16(b, 0);   // status vars length
  b += db;
  b.push_back('\0');
  b += sql;
  return b;
}

// TABLE_MAP of db.t (id 42): INT, VARCHAR(20) (1-byte lengths), DATETIME2(3),
// with COLUMN_NAME and SIGNEDNESS optional metadata when `names`.
std::string TableMapBody(bool names, uint64_t table_id = 42) {
  std::string b;
  Put48(b, table_id);
  Put16(b, 1);
  b.push_back(2);
  b += "db";
  b.push_back('\0');
  b.push_back(1);
  b += "t";
  b.push_back('\0');
  b.push_back(3);  // columns
  b.push_back(3);  // LONG
  b.push_back(15); // VARCHAR
  b.push_back(18); // DATETIME2
  b.push_back(3);  // metadata length
  Put16(b, 20);
  b.push_back(3);
  b.push_back(0x06);  // nullable: columns 2 and 3
  if (names) {
    b.push_back(1);   // SIGNEDNESS
    b.push_back(1);
    b.push_back(static_cast<char>(0x80));  // first numeric column unsigned
    b.push_back(4);   // COLUMN_NAME
    std::string n;
    for (const char* s : {"id", "name", "at"}) {
      n.push_back(static_cast<char>(strlen(s)));
      n += s;
    }
    b.push_back(static_cast<char>(n.size()));
    b += n;
    b.push_back(8);  // SIMPLE_PRIMARY_KEY
    b.push_back(1);
    b.push_back(0);
  }
  return b;
}

// WRITE_ROWS_V2 with two rows: (4294967295, "héllo", 2024-02-29 23:59:58.125), (1, NULL, NULL).
std::string WriteRowsBody(uint64_t table_id = 42, uint8_t ncols = 3) {
  std::string b;
  Put48(b, table_id);
  Put16(b, 1);  // STMT_END_F
  Put16(b, 2);  // extra data length (itself)
  b.push_back(static_cast<char>(ncols));
  b.push_back(0x07);
  // row 1
  b.push_back(0x00);
  Put32(b, 0xFFFFFFFF);
  b.push_back(6);
  b += "h\xc3\xa9llo";
  // DATETIME2: year*13+month = 2024*13+2, day 29, 23:59:58, fraction 1250 (fsp 3: 2 bytes = ms*10)
  uint64_t ym = 2024 * 13 + 2;
  uint64_t packed = (ym << 22) | (29ull << 17) | (23ull << 12) | (59ull << 6) | 58ull;
  packed += 0x8000000000ull;
  for (int i = 4; i >= 0; --i) b.push_back(static_cast<char>(packed >> (8 * i)));
  b.push_back(static_cast<char>(1250 >> 8));
  b.push_back(static_cast<char>(1250 & 0xff));
  // row 2
  b.push_back(0x06);
  Put32(b, 1);
  return b;
}

struct Decoded {
  Status status;
  std::vector<std::string> lines;
  std::vector<std::string> mysql_types;  // Column.mysqlType of the last rows event's table
};

// Decodes all events and renders rows as "name=value,..." lines.
Decoded DecodeAll(const std::string& bytes, DecoderOptions opts = {}) {
  Decoded d;
  EventDecoder dec(opts);
  BinlogFileReader reader(&dec);
  d.status = reader.OpenBuffer("test.000001", bytes);
  if (!d.status.ok()) return d;
  Event ev;
  RowsReader rows;
  RowChange ch;
  while (true) {
    bool eof = false;
    d.status = reader.Next(&ev, &eof);
    if (!d.status.ok() || eof) return d;
    if (const auto* q = ev.As<QueryEvent>()) d.lines.push_back("query:" + std::string(q->query));
    if (const auto* re = ev.As<RowsEvent>()) {
      d.mysql_types.clear();
      for (const ColumnInfo& c : re->table->columns) {
        d.mysql_types.push_back(render::CanalMysqlType(c, {}, re->table->integer_display_widths));
      }
      rows.Reset(*re);
      while (true) {
        bool done = false;
        d.status = rows.Next(&ch, &done);
        if (!d.status.ok()) return d;
        if (done) break;
        std::string line;
        for (size_t i = 0; i < ch.after.values.size(); ++i) {
          const auto& v = ch.after.values[i];
          line += re->table->columns[i].name + (re->table->columns[i].is_key ? "*" : "") + "=";
          if (v.is_null()) {
            line += "NULL";
          } else {
            std::string s;
            Status fs = render::AppendCanalValue(v, re->table->columns[i], {}, &s);
            line += fs.ok() ? s : fs.ToString();
          }
          line += ";";
        }
        d.lines.push_back(line);
      }
    }
  }
}

TEST(EventDecoder, DecodesQueryTableMapAndRowsWithMetadata) {
  BinlogBuilder b(true);
  b.Add(2, QueryBody("db", "BEGIN"));
  b.Add(19, TableMapBody(true));
  b.Add(30, WriteRowsBody());
  Decoded d = DecodeAll(b.bytes());
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.lines.size(), 3u);
  EXPECT_EQ(d.lines[0], "query:BEGIN");
  EXPECT_EQ(d.lines[1], "id*=4294967295;name=h\xc3\xa9llo;at=2024-02-29 23:59:58.125;");
  EXPECT_EQ(d.lines[2], "id*=1;name=NULL;at=NULL;");
}

TEST(EventDecoder, WithoutColumnMetadataNamesColumnsByPositionAndReadsSigned) {
  BinlogBuilder b(true);
  b.Add(19, TableMapBody(false));
  b.Add(30, WriteRowsBody());
  Decoded d = DecodeAll(b.bytes());
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.lines.size(), 2u);
  EXPECT_EQ(d.lines[0], "@1=-1;@2=h\xc3\xa9llo;@3=2024-02-29 23:59:58.125;");
}

class FakeSchema : public TableSchemaProvider {
 public:
  Status GetColumns(std::string_view db, std::string_view table, std::vector<SchemaColumn>* cols) override {
    ++calls;
    if (db != "db" || table != "t") return Status::NotFound("no table");
    cols->clear();
    for (const char* n : {"id", "name", "at"}) {
      const bool id = std::string(n) == "id";
      cols->push_back(SchemaColumn{n, id, id, "", "", {}, column_types ? (id ? "int(10) unsigned zerofill" : "x") : ""});
    }
    if (extra_column) cols->push_back(SchemaColumn{"extra", false, false, "", "", {}, ""});
    return Status::OK();
  }
  void Invalidate(std::string_view, std::string_view) override {}
  int calls = 0;
  bool extra_column = false;
  bool column_types = false;  // supply COLUMN_TYPE
};

// A MySQL 8.0.36 TABLE_MAP without names and one row, decoded with `schema`.
Decoded DecodeWithSchema(FakeSchema* schema) {
  BinlogBuilder b(true);
  b.Add(19, TableMapBody(false));
  b.Add(30, WriteRowsBody());
  DecoderOptions o;
  o.schema_provider = schema;
  return DecodeAll(b.bytes(), o);
}

TEST(EventDecoder, SchemaProviderSuppliesNamesKeysAndSignednessWhenTheBinlogLacksThem) {
  FakeSchema schema;
  Decoded d = DecodeWithSchema(&schema);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(schema.calls, 1);
  EXPECT_EQ(d.lines[0], "id*=4294967295;name=h\xc3\xa9llo;at=2024-02-29 23:59:58.125;");
}

TEST(EventDecoder, RepeatedTableMapIsReusedAndAChangedOneIsDecodedAfresh) {
  BinlogBuilder b(true);
  b.Add(19, TableMapBody(true));
  b.Add(30, WriteRowsBody());
  b.Add(19, TableMapBody(true));   // the same bytes: the decoded map is kept
  b.Add(30, WriteRowsBody());
  b.Add(19, TableMapBody(false));  // same id, other bytes (no names): decoded again
  b.Add(30, WriteRowsBody());
  Decoded d = DecodeAll(b.bytes());
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.lines.size(), 6u);
  EXPECT_EQ(d.lines[0], "id*=4294967295;name=h\xc3\xa9llo;at=2024-02-29 23:59:58.125;");
  EXPECT_EQ(d.lines[2], d.lines[0]);
  EXPECT_EQ(d.lines[4], "@1=-1;@2=h\xc3\xa9llo;@3=2024-02-29 23:59:58.125;");

  // The kept map is the same object (rows events point at it).
  EventDecoder dec;
  BinlogFileReader reader(&dec);
  ASSERT_TRUE(reader.OpenBuffer("test.000001", b.bytes()).ok());
  std::vector<const TableMap*> maps;
  Event ev;
  while (true) {
    bool eof = false;
    ASSERT_TRUE(reader.Next(&ev, &eof).ok());
    if (eof) break;
    if (const auto* tm = ev.As<TableMapEventRef>()) maps.push_back(tm->table);
  }
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0], maps[1]);
  EXPECT_FALSE(maps[2]->names_known);
}

TEST(EventDecoder, TableMapNamedByTheSchemaProviderIsAskedAgainEachTime) {
  // The provider reads the schema as it is now; a kept map could be stale.
  BinlogBuilder b(true);
  for (int i = 0; i < 2; ++i) {
    b.Add(19, TableMapBody(false));
    b.Add(30, WriteRowsBody());
  }
  FakeSchema schema;
  DecoderOptions o;
  o.schema_provider = &schema;
  Decoded d = DecodeAll(b.bytes(), o);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(schema.calls, 2);
  ASSERT_EQ(d.lines.size(), 4u);
  EXPECT_EQ(d.lines[2], d.lines[0]);
}

TEST(EventDecoder, SchemaColumnTypeBecomesMysqlTypeAsTheServerSaysIt) {
  FakeSchema schema;
  Decoded d = DecodeWithSchema(&schema);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.mysql_types.size(), 3u);
  EXPECT_EQ(d.mysql_types[0], "int unsigned");  // no COLUMN_TYPE: derived, MySQL 8.0.19+ style

  schema.column_types = true;
  d = DecodeWithSchema(&schema);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.mysql_types.size(), 3u);
  EXPECT_EQ(d.mysql_types[0], "int(10) unsigned zerofill");
  EXPECT_EQ(d.mysql_types[1], "x");  // verbatim, whatever the server says
}

TEST(EventDecoder, DerivedMysqlTypeFollowsTheServerVersionsDisplayWidths) {
  const struct {
    const char* version;
    const char* expected;
  } cases[] = {{"8.0.36", "int unsigned"},       {"8.0.19", "int unsigned"},
               {"8.0.18", "int(10) unsigned"},   {"5.7.44-log", "int(10) unsigned"},
               {"10.11.6-MariaDB-log", "int(10) unsigned"}, {"11.8.5-MariaDB", "int(10) unsigned"},
               {"9.1.0", "int unsigned"},        {"8.4.3-commercial", "int unsigned"},
               // A partial version counts as its lowest release.
               {"8.0", "int(10) unsigned"},      {"8.1", "int unsigned"}};
  for (const auto& c : cases) {
    BinlogBuilder b(true, c.version);
    b.Add(19, TableMapBody(true));
    b.Add(30, WriteRowsBody());
    Decoded d = DecodeAll(b.bytes());
    ASSERT_TRUE(d.status.ok()) << c.version << ": " << d.status.ToString();
    ASSERT_FALSE(d.mysql_types.empty()) << c.version;
    EXPECT_EQ(d.mysql_types[0], c.expected) << c.version;
  }
}

TEST(FormatDescription, DisplayWidthsByFlavourAndVersion) {
  FormatDescription f;  // no version known (v1/v3 binlogs, a damaged string): an old server
  EXPECT_TRUE(PrintsIntegerDisplayWidths(f));
  f.version_major = 8;
  f.version_patch = 18;
  EXPECT_TRUE(PrintsIntegerDisplayWidths(f));
  f.version_patch = 19;
  EXPECT_FALSE(PrintsIntegerDisplayWidths(f));
  f.flavor = ServerFlavor::kMariaDB;  // MariaDB never dropped them
  f.version_major = 11;
  EXPECT_TRUE(PrintsIntegerDisplayWidths(f));
}

TEST(EventDecoder, SchemaWithADifferentColumnCountIsRefusedNamingTheTable) {
  BinlogBuilder b(true);
  b.Add(19, TableMapBody(false));
  FakeSchema schema;
  schema.extra_column = true;
  DecoderOptions o;
  o.schema_provider = &schema;
  Decoded d = DecodeAll(b.bytes(), o);
  ASSERT_FALSE(d.status.ok());
  EXPECT_NE(d.status.ToString().find("`db`.`t` has 4 columns but the binlog's TABLE_MAP has 3"), std::string::npos)
      << d.status.ToString();
}

TEST(EventDecoder, FdeChecksumIsComputedWithTheInUseFlagCleared) {
  BinlogBuilder b(true);
  b.Add(2, QueryBody("db", "COMMIT"));
  std::string bytes = b.bytes();
  bytes[4 + 17] |= 0x01;  // the server sets LOG_EVENT_BINLOG_IN_USE_F after checksumming
  Decoded d = DecodeAll(bytes);
  EXPECT_TRUE(d.status.ok()) << d.status.ToString();
  bytes[4 + 19 + 2 + 30] ^= 0x01;  // but the rest of the FDE is covered (a version padding byte)
  d = DecodeAll(bytes);
  EXPECT_NE(d.status.ToString().find("offset 4: FORMAT_DESCRIPTION checksum mismatch"), std::string::npos)
      << d.status.ToString();
  bytes[4 + 19 + 2 + 30] ^= 0x01;
  bytes[4 + 20] ^= 0x01;  // a damaged binlog version is reported as damage, not as a new format
  d = DecodeAll(bytes);
  EXPECT_TRUE(d.status.IsCorruption()) << d.status.ToString();
  EXPECT_NE(d.status.ToString().find("CRC32 does not match either"), std::string::npos) << d.status.ToString();
}

TEST(EventDecoder, BadEventChecksumNamesFileOffsetAndType) {
  BinlogBuilder b(true);
  size_t at = b.Add(2, QueryBody("db", "CREATE TABLE x (a INT)"));
  b.bytes()[at + 40] ^= 0x40;
  Decoded d = DecodeAll(b.bytes());
  EXPECT_TRUE(d.status.IsCorruption());
  EXPECT_NE(d.status.ToString().find("test.000001: offset " + std::to_string(at) + ": QUERY event checksum mismatch"),
            std::string::npos)
      << d.status.ToString();
  // The kind the parser retries on, whatever the words.
  EXPECT_EQ(d.status.subcode(), kErrorChecksumMismatch);
}

TEST(EventDecoder, ChecksumVerificationCanBeTurnedOff) {
  BinlogBuilder b(true);
  size_t at = b.Add(2, QueryBody("db", "CREATE TABLE x (a INT)"));
  b.bytes()[at + 40] ^= 0x40;
  DecoderOptions o;
  o.verify_checksum = false;
  EXPECT_TRUE(DecodeAll(b.bytes(), o).status.ok());
}

TEST(EventDecoder, UnknownIgnorableEventIsSkippedAndUnknownOtherwiseIsAnError) {
  BinlogBuilder b(true);
  b.Add(99, "padding", false, 0x80);
  b.Add(2, QueryBody("db", "COMMIT"));
  EXPECT_TRUE(DecodeAll(b.bytes()).status.ok());
  BinlogBuilder c(true);
  size_t at = c.Add(99, "padding");
  Decoded d = DecodeAll(c.bytes());
  EXPECT_TRUE(d.status.IsNotSupported());
  EXPECT_NE(d.status.ToString().find("offset " + std::to_string(at) + ": unknown event type 99"), std::string::npos)
      << d.status.ToString();
}

TEST(EventDecoder, EncryptedBinlogIsReportedAsUnsupported) {
  BinlogBuilder b(true, "10.11.6-MariaDB-log");
  b.Add(164, std::string(17, '\x01'));
  Decoded d = DecodeAll(b.bytes());
  EXPECT_TRUE(d.status.IsNotSupported());
  EXPECT_NE(d.status.ToString().find("encrypted"), std::string::npos) << d.status.ToString();
}

TEST(EventDecoder, RowsWithoutTableMapAndColumnCountMismatchAreErrors) {
  BinlogBuilder b(true);
  b.Add(30, WriteRowsBody(7));
  Decoded d = DecodeAll(b.bytes());
  EXPECT_NE(d.status.ToString().find("no TABLE_MAP seen for table id 7"), std::string::npos) << d.status.ToString();

  BinlogBuilder c(true);
  c.Add(19, TableMapBody(true));
  c.Add(30, WriteRowsBody(42, 4));
  d = DecodeAll(c.bytes());
  EXPECT_NE(d.status.ToString().find("rows event has 4 columns but TABLE_MAP of `db`.`t` has 3"), std::string::npos)
      << d.status.ToString();
}

TEST(EventDecoder, RowImageRunningPastTheEventIsAnErrorNamingRowAndColumn) {
  BinlogBuilder b(true);
  b.Add(19, TableMapBody(true));
  std::string cut = WriteRowsBody().substr(0, 13 + 1 + 4 + 3);  // header, nulls, id, 3 of 6 string bytes
  b.Add(30, cut);
  Decoded d = DecodeAll(b.bytes());
  ASSERT_FALSE(d.status.ok());
  EXPECT_NE(d.status.ToString().find("row 1, column 2 (name)"), std::string::npos) << d.status.ToString();
  EXPECT_NE(d.status.ToString().find("points outside the event"), std::string::npos) << d.status.ToString();
}

TEST(EventDecoder, EventSizeSmallerThanItsHeaderIsCorruption) {
  BinlogBuilder b(false);
  std::string bytes = b.bytes();
  std::string ev(19, '\0');
  ev[4] = 2;
  ev[9] = 5;  // size 5
  bytes += ev;
  Decoded d = DecodeAll(bytes);
  EXPECT_TRUE(d.status.IsCorruption());
  EXPECT_NE(d.status.ToString().find("implausible event size 5"), std::string::npos) << d.status.ToString();
}

TEST(EventDecoder, NotABinlogIsRefusedAtOffsetZero) {
  Decoded d = DecodeAll("hello world");
  EXPECT_NE(d.status.ToString().find("offset 0: not a binlog file"), std::string::npos);
  d = DecodeAll("");
  EXPECT_FALSE(d.status.ok());
}

TEST(EventDecoder, V1BinlogWithThirteenByteHeadersDecodesQueries) {
  // MySQL 3.23: START_EVENT_V3 with binlog version 1, 13-byte headers, QUERY
  // post-header of 11 bytes and no status variables.
  std::string bytes("\xfe" "bin", 4);
  auto add = [&](uint8_t type, const std::string& body) {
    std::string ev;
    Put32(ev, 1000);
    ev.push_back(static_cast<char>(type));
    Put32(ev, 1);
    Put32(ev, static_cast<uint32_t>(13 + body.size()));
    ev += body;
    bytes += ev;
  };
  std::string start;
  Put16(start, 1);
  std::string v = "3.23.58-log";
  v.resize(50, '\0');
  start += v;
  Put32(start, 0);
  add(1, start);
  std::string q;
  Put32(q, 1);
  Put32(q, 0);
  q.push_back(4);
  Put16(q, 0);
  q += "test";
  q.push_back('\0');
  q += "INSERT INTO t VALUES (1)";
  add(2, q);
  Decoded d = DecodeAll(bytes);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.lines.size(), 1u);
  EXPECT_EQ(d.lines[0], "query:INSERT INTO t VALUES (1)");
}

}  // namespace
}  // namespace canal::binlog
