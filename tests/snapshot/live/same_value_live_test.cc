// One value, one string: for every column kind of the value oracle's fixture set (tests/support/
// value_oracle_tables.h: integers of every width signed and unsigned, BIT(1..64), YEAR, ENUM,
// SET, DATE, TIME/DATETIME/TIMESTAMP(0..6), DECIMAL, FLOAT, DOUBLE, text in utf8mb4, utf8mb3,
// latin1, gbk, utf16, ucs2 and utf32, BINARY, VARBINARY, BLOB, JSON, GEOMETRY, POINT, with edge
// values and NULLs), each row read by a snapshot (ChunkReader + SnapshotRowConverter) gives
// byte-identical Column fields (value, isNull, sqlType, mysqlType) to the same row decoded from
// the sandbox's binlog (the decoder + render/, the sink's path), in Canal's and MySQL's forms,
// plain and readable, at three TIMESTAMP offsets; with FULL row metadata (the binlog describes
// the columns) and MINIMAL (information_schema names them, as the sink's provider does). The
// snapshot's values are also checked against MariaDB's own text of each value (the oracle's
// expected SQL), and the converter's column descriptions against the binlog's TABLE_MAP.
//
// Port block snapshot_value (support/test_ports.h): one sandbox per row-metadata mode.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/column_text.h"
#include "canal/parser/mysql/information_schema_provider.h"
#include "canal/render/canal_sql_type.h"
#include "canal/snapshot/chunk_reader.h"
#include "canal/snapshot/snapshot_render.h"
#include "canal/snapshot/table_shape_loader.h"
#include "snapshot_live_support.h"
#include "support/binlog_walk.h"
#include "support/value_oracle_tables.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using render::TextForms;
using render::ValueFormatOptions;

constexpr const char* kSchema = "snapvalue";
constexpr int kRows = 12;
constexpr int kColumnsPerTable = 20;
constexpr uint64_t kSeed = 20261206;

// The value formats compared: every TextForms, plain and readable, TIMESTAMP at three offsets.
std::vector<std::pair<std::string, ValueFormatOptions>> Formats() {
  auto make = [](TextForms forms, bool readable, int32_t offset) {
    ValueFormatOptions o;
    o.forms = forms;
    o.readable = readable;
    o.timestamp_utc_offset_seconds = offset;
    return o;
  };
  return {{"canal", make(TextForms::kCanal, false, 0)},
          {"canal readable +08:00", make(TextForms::kCanal, true, 8 * 3600)},
          {"mysql -05:30", make(TextForms::kMysql, false, -(5 * 3600 + 1800))},
          {"mysql readable", make(TextForms::kMysql, true, 0)}};
}

// One Column's fields as the sink sets them, in one string per format (isNull, sqlType,
// mysqlType, value), so a difference names the field.
std::string ColumnFields(bool is_null, int sql_type, const std::string& mysql_type, const std::string& value) {
  return "isNull=" + std::to_string(is_null) + " sqlType=" + std::to_string(sql_type) + " mysqlType=" + mysql_type +
         " value=" + (is_null ? std::string("-") : "[" + value + "]");
}

struct Seen {
  // (table, id) -> per column, per format: ColumnFields.
  std::map<std::pair<std::string, int64_t>, std::vector<std::vector<std::string>>> rows;
  std::map<std::string, std::vector<binlog::ColumnInfo>> columns;  // each table's TABLE_MAP columns
  bool integer_display_widths = false;
};

std::unique_ptr<MariadbSandbox> StartMinimal(uint16_t port, std::string* error, std::string) {
  return StartMinimalSuiteSandbox(port, error);
}

// The sandbox's binlog files (name.NNNNNN), in order.
std::vector<fs::path> BinlogFiles(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext.size() > 1 && ext.find_first_not_of(".0123456789") == std::string::npos) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::strtoul(std::string(hex.substr(i, 2)).c_str(), nullptr, 16));
  }
  return out;
}

std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = line.find(sep, start);
    out.push_back(line.substr(start, at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// The fields of a ColumnInfo that decide its rendering, for comparing the converter's with the
// binlog's. Charsets compare by what they render as (a collation and its charset's default).
std::string Description(const binlog::ColumnInfo& c, bool minimal) {
  std::string s = "type=" + std::to_string(static_cast<int>(c.type)) +
                  " real=" + std::to_string(static_cast<int>(c.real_type)) + " meta=" + std::to_string(c.meta) +
                  " max_length=" + std::to_string(c.max_length) + " precision=" + std::to_string(c.precision) +
                  "," + std::to_string(c.decimals) + " binary=" + std::to_string(binlog::IsBinaryCharset(c.charset)) +
                  " name=" + c.name + " key=" + std::to_string(c.is_key) + " column_type=" + c.column_type;
  if (!minimal) s += " charset=" + std::to_string(c.charset);
  if (c.signedness_known) s += " unsigned=" + std::to_string(c.is_unsigned);
  for (const std::string& l : c.enum_or_set_labels) s += " label=" + l;
  return s;
}

// MariaDB's INET4, INET6 and UUID (not among the oracle's kinds): SELECT sends their text, the
// binlog their stored bytes, which Canal prints as binary (ISO-8859-1), as MariaDB's CAST AS BINARY.
OracleTable FixedBinaryTable() {
  auto column = [](std::string name, std::string kind, std::vector<std::string> values) {
    OracleColumn c;
    c.name = std::move(name);
    c.kind = kind;
    c.definition = std::move(kind);
    c.expected_sql = "CAST(`" + c.name + "` AS BINARY)";
    c.compare = OracleCompare::kLatin1Bytes;
    c.values = std::move(values);
    return c;
  };
  OracleTable t;
  t.schema = kSchema;
  t.name = "sv_fixed_binary";
  OracleColumn id;
  id.name = "id";
  id.kind = "int";
  id.definition = "INT NOT NULL PRIMARY KEY";
  id.expected_sql = "CAST(`id` AS CHAR)";
  t.columns = {id,
               column("a", "inet4", {"'0.0.0.0'", "'255.255.255.255'", "'192.168.0.1'", "NULL", "'10.0.0.0'"}),
               column("b", "inet6",
                      {"'::'", "'::1'", "'2001:db8::ff00:42:8329'", "'::ffff:1.2.3.4'", "NULL",
                       "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'", "'fe80::'"}),
               column("u", "uuid",
                      {"'00000000-0000-0000-0000-000000000000'", "'12345678-9abc-1def-8123-456789abcdef'",
                       "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "NULL", "'12345678-9abc-4def-0123-456789abcdef'",
                       "'01234567-89ab-1cde-a123-456789abcdef'", "'6ccd780c-baba-1026-9564-5b8c656024db'"})};
  // Every latin1 byte (cp1252, its five undefined bytes as C1 controls on both sides).
  std::string all = "CONVERT(UNHEX('";
  for (int b = 1; b < 256; ++b) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    all += kHex[b >> 4];
    all += kHex[b & 15];
  }
  OracleColumn latin1 = column("l", "VARCHAR(300) CHARACTER SET latin1", {all + "') USING latin1)", "''", "NULL"});
  latin1.kind = "latin1, every byte";
  latin1.expected_sql = "CONVERT(`l` USING utf8mb4)";
  latin1.compare = OracleCompare::kText;
  t.columns.push_back(latin1);
  return t;
}

template <std::unique_ptr<MariadbSandbox> (*Start)(uint16_t, std::string*, std::string), uint16_t Port>
class SameValueSuite : public SandboxSuite<MariadbSandbox, Start, Port> {
 protected:
  using Base = SandboxSuite<MariadbSandbox, Start, Port>;

  void Run(bool minimal) {
    MariadbSandbox* sandbox = Base::sandbox_.get();
    // Tables until every kind has a column (the oracle's covering tables: each kind beside every other).
    ValueOracleTables generator(kSeed);
    const std::vector<std::string> kinds = ValueOracleTables::Kinds();
    std::set<std::string> covered;
    std::vector<OracleTable> tables;
    for (OracleTable& t : generator.CoveringTables(kSchema, "sv", kColumnsPerTable)) {
      size_t before = covered.size();
      for (const OracleColumn& c : t.columns) covered.insert(c.kind);
      if (covered.size() > before) tables.push_back(std::move(t));
      if (covered.size() > kinds.size()) break;  // "id" is not a kind
    }
    for (const std::string& k : kinds) EXPECT_TRUE(covered.count(k)) << "no column of kind " << k;
    tables.push_back(FixedBinaryTable());

    std::string sql = std::string("SET time_zone = '+00:00'; CREATE DATABASE ") + kSchema + ";";
    for (const OracleTable& t : tables) sql += t.CreateSql() + "; " + t.InsertSql(kRows) + ";";
    ASSERT_TRUE(sandbox->Sql(sql)) << sandbox->error();
    ASSERT_TRUE(sandbox->Sql("FLUSH BINARY LOGS")) << sandbox->error();

    // The snapshot's session must not pad CHAR values (ChunkReader::Open), whatever the server's default.
    ASSERT_TRUE(sandbox->Sql("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',PAD_CHAR_TO_FULL_LENGTH')"))
        << sandbox->error();
    const auto formats = Formats();
    // (a) The binlog, decoded and rendered as the sink does.
    Seen stream;
    mysql::QueryConnection schema_conn(Login(Port));
    ASSERT_TRUE(schema_conn.Connect().ok());
    mysql::InformationSchemaProvider provider(&schema_conn);
    for (const fs::path& file : BinlogFiles(sandbox->binlog_dir())) {
      WalkOptions wo;
      if (minimal) wo.schema_provider = &provider;
      wo.on_row = [&](const binlog::Event&, const binlog::TableMap& t, const binlog::RowChange& c) {
        if (t.db != kSchema || c.kind != binlog::RowsKind::kWrite) return Status::OK();
        size_t id_at = t.columns.size();
        for (size_t i = 0; i < t.columns.size(); ++i) {
          if (t.columns[i].name == "id") id_at = i;
        }
        if (id_at == t.columns.size()) return Status::Corruption(t.table + " has no column named id");
        stream.columns[t.table] = t.columns;
        stream.integer_display_widths = t.integer_display_widths;
        auto& row = stream.rows[{t.table, c.after.values[id_at].i64}];
        row.assign(t.columns.size(), {});
        for (size_t i = 0; i < t.columns.size(); ++i) {
          const binlog::ColumnValue& v = c.after.values[i];
          for (const auto& [name, o] : formats) {
            std::string text;
            if (!v.is_null()) CANAL_RETURN_IF_ERROR(render::AppendCanalValue(v, t.columns[i], o, &text));
            row[i].push_back(ColumnFields(v.is_null(), render::CanalSqlTypeOf(t.columns[i], v),
                                          render::CanalMysqlType(t.columns[i], o, t.integer_display_widths), text));
          }
        }
        return Status::OK();
      };
      WalkResult r = WalkBinlog(file.string(), wo);
      ASSERT_TRUE(r.error.ok()) << file << ": " << r.error.ToString();
    }
    ASSERT_EQ(stream.rows.size(), tables.size() * kRows);
    EXPECT_TRUE(stream.integer_display_widths);

    // (b) The snapshot: every table in chunks of 5 rows, each row converted and rendered.
    mysql::QueryConnection conn(Login(Port));
    ASSERT_TRUE(conn.Connect().ok());
    snapshot::SnapshotOptions options;
    options.chunk_rows = 5;
    snapshot::SnapshotColumnOptions column_options;
    column_options.schema_column_type = minimal;
    size_t compared = 0, differences = 0;
    std::map<std::string, size_t> per_kind;
    for (const OracleTable& t : tables) {
      snapshot::TableShape shape;
      ASSERT_TRUE(snapshot::LoadTableShape(&conn, kSchema, t.name, &shape).ok());
      ASSERT_EQ(shape.columns.size(), t.columns.size());
      snapshot::SnapshotRowConverter converter;
      Status s = converter.Init(shape, column_options);
      ASSERT_TRUE(s.ok()) << s.ToString();
      const std::vector<binlog::ColumnInfo>& binlog_columns = stream.columns[t.name];
      ASSERT_EQ(binlog_columns.size(), t.columns.size());
      for (size_t i = 0; i < t.columns.size(); ++i) {
        EXPECT_EQ(Description(converter.columns()[i], minimal), Description(binlog_columns[i], minimal))
            << t.name << " column " << t.columns[i].name << " (" << t.columns[i].kind << ")";
      }
      // MariaDB's own text of each value (session UTC), where it is the truth: Canal's plain form.
      std::string oracle;
      ASSERT_TRUE(sandbox->Sql("SET time_zone = '+00:00'; SET sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', "
                               "@@sql_mode, ','), ',PAD_CHAR_TO_FULL_LENGTH,', ',')); " +
                                   t.SelectSql(),
                               &oracle))
          << sandbox->error();
      std::map<int64_t, std::vector<std::string>> expected;
      for (const std::string& line : Split(oracle, '\n')) {
        if (line.rfind("ROW\t", 0) != 0) continue;
        std::vector<std::string> cells = Split(line, '\t');
        expected[std::atoll(cells[1].c_str())] = std::vector<std::string>(cells.begin() + 2, cells.end());
      }
      ASSERT_EQ(expected.size(), static_cast<size_t>(kRows)) << t.name;

      snapshot::ChunkReader reader(&conn);
      ASSERT_TRUE(reader.Open(shape, "", options).ok());
      std::vector<snapshot::KeyValue> after;
      size_t rows = 0;
      for (bool done = false; !done;) {
        snapshot::ChunkResult result;
        s = reader.ReadChunk(
            after,
            [&](const snapshot::ChunkRow& row) {
              CANAL_RETURN_IF_ERROR(converter.Convert(row.fields));
              ++rows;
              int64_t id = 0;
              for (size_t i = 0; i < t.columns.size(); ++i) {
                if (t.columns[i].name == "id") id = converter.values()[i].i64;
              }
              const auto it = stream.rows.find({t.name, id});
              if (it == stream.rows.end()) return Status::NotFound(t.name + " row " + std::to_string(id));
              const std::vector<std::string>& truth = expected[id];
              for (size_t i = 0; i < t.columns.size(); ++i) {
                const OracleColumn& oc = t.columns[i];
                const bool is_null = converter.values()[i].is_null();
                for (size_t f = 0; f < formats.size(); ++f) {
                  std::string text;
                  if (!is_null) CANAL_RETURN_IF_ERROR(converter.AppendValue(i, formats[f].second, &text));
                  const std::string fields =
                      ColumnFields(is_null, converter.SqlType(i), converter.MysqlType(i, formats[f].second), text);
                  ++compared;
                  ++per_kind[oc.kind];
                  if (fields != it->second[i][f]) {
                    ++differences;
                    ADD_FAILURE() << t.name << " id " << id << " column " << oc.name << " (" << oc.kind << ", "
                                  << formats[f].first << "):\n  binlog   " << it->second[i][f] << "\n  snapshot "
                                  << fields;
                  }
                  if (f != 0 || oc.name == "id") continue;
                  // Against MariaDB's text (Canal's plain form is the oracle's).
                  const std::string& hex = truth.at(i);
                  if ((hex == "NULL") != is_null) {
                    ADD_FAILURE() << t.name << " id " << id << " " << oc.name << ": NULL differs from MariaDB's";
                    continue;
                  }
                  if (is_null) continue;
                  const std::string want = Unhex(hex);
                  bool same = text == want;
                  if (oc.compare == OracleCompare::kLatin1Bytes) same = text == Latin1ToUtf8(want);
                  if (oc.compare == OracleCompare::kFloat) {
                    same = std::strtof(text.c_str(), nullptr) == std::strtof(want.c_str(), nullptr);
                  }
                  if (oc.compare == OracleCompare::kDouble) {
                    same = std::strtod(text.c_str(), nullptr) == std::strtod(want.c_str(), nullptr);
                  }
                  EXPECT_TRUE(same) << t.name << " id " << id << " " << oc.name << " (" << oc.kind
                                    << "): snapshot [" << text << "] MariaDB [" << want << "]";
                }
              }
              return Status::OK();
            },
            &result);
        ASSERT_TRUE(s.ok()) << t.name << ": " << s.ToString();
        after = result.last_key;
        done = result.exhausted;
      }
      EXPECT_EQ(rows, static_cast<size_t>(kRows)) << t.name;
    }
    for (const std::string& k : kinds) EXPECT_GT(per_kind[k], 0u) << "kind " << k << " never compared";
    std::printf("same value (%s metadata): %zu tables, %zu oracle kinds and INET4/INET6/UUID, %zu column fields compared in %zu formats, %zu "
                "differences\n",
                minimal ? "MINIMAL" : "FULL", tables.size(), kinds.size(), compared, formats.size(), differences);
    EXPECT_EQ(differences, 0u);
  }
};

class SnapshotSameValueLive : public SameValueSuite<StartSuiteSandbox, TestPort("snapshot_value")> {};
class SnapshotSameValueMinimalLive : public SameValueSuite<StartMinimal, TestPort("snapshot_value", 1)> {};

TEST_F(SnapshotSameValueLive, EveryKindRendersTheSameFromTheSnapshotAndTheBinlog) { Run(false); }

// The chunk window's keys: a composite key of DECIMAL, DATETIME(3), VARCHAR utf8mb4 and VARCHAR
// latin1 gives the same bytes from each row's last binlog image (AppendStreamKey) and from the
// snapshot's row (SnapshotRowConverter::AppendKey), read in chunks of two.
TEST_F(SnapshotSameValueLive, AKeyGivesTheSameBytesFromTheSnapshotAndTheBinlog) {
  ASSERT_TRUE(sandbox_->Sql(
      "CREATE DATABASE snapkey; "
      "CREATE TABLE snapkey.k (d DECIMAL(30,6) NOT NULL, t DATETIME(3) NOT NULL, "
      "v VARCHAR(20) CHARACTER SET utf8mb4 NOT NULL, l VARCHAR(10) CHARACTER SET latin1 NOT NULL, n INT, "
      "PRIMARY KEY (d, t, v, l)); "
      "INSERT INTO snapkey.k VALUES (-999999999999999999999999.999999, '1000-01-01 00:00:00.000', '', '', 1), "
      "(0, '2024-02-29 23:59:59.999', 'héllo', 'é', 2), (0.000001, '9999-12-31 23:59:59.999', '中文😀', 'ßÿ', 3), "
      "(123456789.5, '1970-01-01 00:00:00.001', 'a ', 'a', 4), (7, '2024-05-06 07:08:09.120', 'Z''\\\\', '€', 5); "
      "UPDATE snapkey.k SET d = d + 1, v = CONCAT(v, 'x') WHERE n = 4; "
      "FLUSH BINARY LOGS"))
      << sandbox_->error();
  mysql::QueryConnection conn(Login(TestPort("snapshot_value")));
  ASSERT_TRUE(conn.Connect().ok());
  snapshot::TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(&conn, "snapkey", "k", &shape).ok());
  snapshot::ChunkKey key;
  ASSERT_TRUE(snapshot::ChooseChunkKey(shape, &key).ok());
  ASSERT_EQ(key.columns.size(), 4u);

  // The stream: each key's bytes from its row's latest image (the update moves one key).
  std::set<std::string> from_stream;
  for (const fs::path& file : BinlogFiles(sandbox_->binlog_dir())) {
    WalkOptions wo;
    wo.on_row = [&](const binlog::Event&, const binlog::TableMap& t, const binlog::RowChange& c) {
      if (t.db != "snapkey") return Status::OK();
      snapshot::KeyEncoder encoder;
      if (c.has_before) {
        CANAL_RETURN_IF_ERROR(snapshot::AppendStreamKey(t, c.before.values, key, &encoder));
        from_stream.erase(std::string(encoder.key()));
      }
      encoder.Clear();
      CANAL_RETURN_IF_ERROR(snapshot::AppendStreamKey(t, c.after.values, key, &encoder));
      from_stream.insert(std::string(encoder.key()));
      return Status::OK();
    };
    WalkResult r = WalkBinlog(file.string(), wo);
    ASSERT_TRUE(r.error.ok()) << file << ": " << r.error.ToString();
  }

  std::set<std::string> from_snapshot;
  snapshot::SnapshotRowConverter converter;
  ASSERT_TRUE(converter.Init(shape, snapshot::SnapshotColumnOptions{}).ok());
  snapshot::ChunkReader reader(&conn);
  snapshot::SnapshotOptions options;
  options.chunk_rows = 2;
  ASSERT_TRUE(reader.Open(shape, "", options).ok());
  std::vector<snapshot::KeyValue> after;
  for (bool done = false; !done;) {
    snapshot::ChunkResult result;
    Status s = reader.ReadChunk(
        after,
        [&](const snapshot::ChunkRow& row) {
          CANAL_RETURN_IF_ERROR(converter.Convert(row.fields));
          snapshot::KeyEncoder encoder;
          CANAL_RETURN_IF_ERROR(converter.AppendKey(reader.key(), &encoder));
          from_snapshot.insert(std::string(encoder.key()));
          return Status::OK();
        },
        &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
    after = result.last_key;
    done = result.exhausted;
  }
  EXPECT_EQ(from_snapshot.size(), 5u);
  EXPECT_EQ(from_snapshot, from_stream);
}
// A value the converter cannot map is an error naming the table, the column and the value, never
// a wrong string: here an ENUM label added by DDL after the table's shape was read.
TEST_F(SnapshotSameValueLive, AnUnmappableValueIsAnErrorNamingTableColumnAndValue) {
  ASSERT_TRUE(sandbox_->Sql("CREATE DATABASE snapbad; CREATE TABLE snapbad.e (id INT PRIMARY KEY, e ENUM('a','b')); "
                            "INSERT INTO snapbad.e VALUES (1, 'a'), (2, 'b')"))
      << sandbox_->error();
  mysql::QueryConnection conn(Login(TestPort("snapshot_value")));
  ASSERT_TRUE(conn.Connect().ok());
  snapshot::TableShape shape;
  ASSERT_TRUE(snapshot::LoadTableShape(&conn, "snapbad", "e", &shape).ok());
  snapshot::SnapshotRowConverter converter;
  ASSERT_TRUE(converter.Init(shape, snapshot::SnapshotColumnOptions{}).ok());
  ASSERT_TRUE(sandbox_->Sql("ALTER TABLE snapbad.e MODIFY e ENUM('a','b','new label'); "
                            "INSERT INTO snapbad.e VALUES (3, 'new label')"))
      << sandbox_->error();
  snapshot::ChunkReader reader(&conn);
  ASSERT_TRUE(reader.Open(shape, "", snapshot::SnapshotOptions{}).ok());
  snapshot::ChunkResult result;
  size_t converted = 0;
  const Status s = reader.ReadChunk(
      {},
      [&](const snapshot::ChunkRow& row) {
        CANAL_RETURN_IF_ERROR(converter.Convert(row.fields));
        ++converted;
        return Status::OK();
      },
      &result);
  EXPECT_EQ(converted, 2u);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  for (const char* part : {"`snapbad`.`e`", "column `e`", "'new label'"}) {
    EXPECT_NE(s.ToString().find(part), std::string::npos) << part << " not in: " << s.ToString();
  }
}

TEST_F(SnapshotSameValueMinimalLive, EveryKindRendersTheSameFromTheSnapshotAndTheBinlog) { Run(true); }

}  // namespace
}  // namespace canal::testing
