// MariaDB's optional row metadata read by MariaDB's numbering (
// item 1): every column type, in front of signed and unsigned integers and of
// text in three charsets, written with FULL and with MINIMAL metadata, decoded
// by the parser (schema history on, as the server runs it) and compared with
// MariaDB's own SELECT of the same row. Before the fix a YEAR shifted the
// SIGNEDNESS bitmap (-5 arrived as 251) and a GEOMETRY the charset list (gbk
// text arrived as latin1; some tables were refused outright).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/event_parser.h"
#include "canal/render/canal_sql_type.h"
#include "canal/render/canal_value.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/sandbox_parser.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using parser::EventParser;
using parser::EventParserOptions;

// Ports 14880 (FULL) and 14881 (MINIMAL).
constexpr uint16_t kFullPort = TestPort("optmeta");
constexpr uint16_t kMinimalPort = TestPort("optmeta", 1);

std::string Hex(std::string_view s) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// One decoded cell: its text as a client gets it (hex for text columns is
// made by the test), NULL, and the sqlType it goes out with.
struct Cell {
  std::string text;
  bool is_null = false;
  int sql_type = 0;
};

struct CapturedRows : parser::TransactionSink {
  std::mutex mu;
  std::map<std::string, std::vector<std::map<std::string, Cell>>> tables;  // "db.t" -> rows by column name
  std::vector<std::string> errors;

  Status OnTransaction(const parser::Transaction& t) override {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& e : t.events) {
      if (e.kind != parser::TxEventKind::kRows) continue;
      const binlog::TableMap& table = *e.rows.table;
      binlog::RowsReader reader;
      reader.Reset(e.rows);
      binlog::RowChange change;
      for (;;) {
        bool done = false;
        CANAL_RETURN_IF_ERROR(reader.Next(&change, &done));
        if (done) break;
        std::map<std::string, Cell> row;
        for (size_t i = 0; i < change.after.values.size(); ++i) {
          const binlog::ColumnValue& v = change.after.values[i];
          if (!v.is_present()) continue;
          Cell c;
          c.is_null = v.is_null();
          c.sql_type = render::CanalSqlTypeOf(table.columns[i], v);
          if (!c.is_null) {
            Status s = render::AppendCanalValue(v, table.columns[i], {}, &c.text);
            if (!s.ok()) errors.push_back(s.ToString());
          }
          row[table.columns[i].name] = c;
        }
        tables[table.db + "." + table.table].push_back(std::move(row));
      }
    }
    return Status::OK();
  }
  void OnIdle(const LogPosition&) override {}
  size_t RowsOf(const std::string& t) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = tables.find(t);
    return it == tables.end() ? 0 : it->second.size();
  }
};

class OptionalMetadataLive : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    for (const auto& [mode, port] : {std::pair<std::string, uint16_t>{"FULL", kFullPort}, {"MINIMAL", kMinimalPort}}) {
      SandboxOptions o;
      o.port = port;
      o.binlog_row_metadata = mode;
      sandboxes_[mode] = StartSuiteSandboxOf<MariadbSandbox>(std::move(o), mode + " sandbox", &errors_[mode]);
    }
  }
  static void TearDownTestSuite() { sandboxes_.clear(); }

  void SetUp() override {
    sandbox_ = sandboxes_[GetParam()].get();
    CANAL_REQUIRE_SANDBOX(sandbox_, errors_[GetParam()]);
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string safe = name;
    for (char& c : safe) {
      if (c == '/') c = '_';
    }
    db_ = "om_" + std::to_string(++counter_);
    dir_ = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/optional-metadata-" + safe;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(sandbox_->Sql("DROP DATABASE IF EXISTS " + db_ + "; CREATE DATABASE " + db_ +
                              " DEFAULT CHARACTER SET utf8mb4"))
        << sandbox_->error();
  }

  bool Sql(const std::string& sql, std::string* out = nullptr) {
    const bool ok = sandbox_->Sql("USE " + db_ + "; " + sql, out);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }

  // Streams from the primary's end as it is now until `done`.
  template <typename Write, typename Done>
  void Stream(CapturedRows* rec, Write write, Done done) {
    EventParserOptions o = SandboxParserOptions("test", GetParam() == "FULL" ? kFullPort : kMinimalPort);
    o.schema_history_file = dir_ + "/schema_history.json";
    ASSERT_TRUE(PrimaryEnd(*sandbox_, &o.start.journal_name, &o.start.position)) << sandbox_->error();
    EventParser p(o, rec);
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
    write();
    WaitFor([&] { return done() || !p.running(); }, 60s);
    p.Stop();
    ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
    std::lock_guard<std::mutex> lock(rec->mu);
    EXPECT_TRUE(rec->errors.empty()) << rec->errors.front();
  }

  static inline std::map<std::string, std::unique_ptr<MariadbSandbox>> sandboxes_;
  static inline std::map<std::string, std::string> errors_;
  static inline int counter_ = 0;
  MariadbSandbox* sandbox_ = nullptr;
  std::string db_, dir_;
};

// Every type in front of the same integers and texts. `x` stays NULL: its own
// values are the value oracle's (value_oracle_test.cc); here it only has to
// take, or not take, its place in the bitmap and the charset list.
TEST_P(OptionalMetadataLive, EveryTypeBeforeIntegersAndTextKeepsTheirSignsAndCharsets) {
  const std::vector<std::string> types = {
      "TINYINT", "TINYINT UNSIGNED", "SMALLINT", "MEDIUMINT UNSIGNED", "INT", "BIGINT UNSIGNED", "FLOAT",
      "DOUBLE UNSIGNED", "DECIMAL(10,2)", "DECIMAL(30,5) UNSIGNED", "YEAR", "BIT(1)", "BIT(64)", "DATE", "TIME",
      "TIME(3)", "DATETIME", "DATETIME(6)", "TIMESTAMP NULL", "TIMESTAMP(2) NULL", "CHAR(3)",
      "CHAR(3) CHARACTER SET latin1", "VARCHAR(10) CHARACTER SET gbk", "BINARY(4)", "VARBINARY(4)", "TINYBLOB",
      "BLOB", "LONGBLOB", "TINYTEXT", "TEXT CHARACTER SET latin1", "LONGTEXT", "JSON", "ENUM('a','b')",
      "SET('x','y')", "ENUM('a','b') CHARACTER SET latin1", "GEOMETRY", "POINT", "LINESTRING", "POLYGON",
      "MULTIPOINT", "MULTIPOLYGON", "GEOMETRYCOLLECTION", "INET4", "INET6", "UUID", "BOOL"};
  const std::string cols =
      "u TINYINT UNSIGNED, s TINYINT, bu INT UNSIGNED, b BIGINT, a VARCHAR(8) CHARACTER SET utf8mb4, "
      "l VARCHAR(8) CHARACTER SET latin1, g VARCHAR(8) CHARACTER SET gbk";
  CapturedRows rec;
  Stream(
      &rec,
      [&] {
        std::string sql;
        for (size_t i = 0; i < types.size(); ++i) {
          // Two x columns: the type twice in a row, then the integers and texts.
          sql += "CREATE TABLE p" + std::to_string(i) + " (id INT PRIMARY KEY, x " + types[i] + " NULL, x2 " +
                 types[i] + " NULL, " + cols + ");";
          sql += "INSERT INTO p" + std::to_string(i) +
                 " (id, u, s, bu, b, a, l, g) VALUES (1, 200, -5, 4000000000, -9, 'é中', 'café', '中文'),"
                 " (2, 0, 127, 7, 9223372036854775807, '', 'x', 'y');";
        }
        ASSERT_TRUE(Sql(sql));
      },
      [&] { return rec.RowsOf(db_ + ".p" + std::to_string(types.size() - 1)) >= 2; });

  size_t compared = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string table = db_ + ".p" + std::to_string(i);
    std::string want;
    ASSERT_TRUE(Sql("SELECT CONCAT_WS('|', u, s, bu, b, HEX(CONVERT(a USING utf8mb4)), HEX(CONVERT(l USING "
                    "utf8mb4)), HEX(CONVERT(g USING utf8mb4))) FROM p" +
                        std::to_string(i) + " ORDER BY id",
                    &want));
    std::lock_guard<std::mutex> lock(rec.mu);
    const auto& rows = rec.tables[table];
    ASSERT_EQ(rows.size(), 2u) << types[i];
    std::string got;
    for (const auto& row : rows) {
      auto text = [&](const char* c) { return row.count(c) ? row.at(c).text : std::string("<absent>"); };
      got += text("u") + "|" + text("s") + "|" + text("bu") + "|" + text("b") + "|" + Hex(text("a")) + "|" +
             Hex(text("l")) + "|" + Hex(text("g")) + "\n";
      EXPECT_TRUE(row.at("x").is_null && row.at("x2").is_null) << types[i];
    }
    EXPECT_EQ(got, want) << "after " << types[i] << " (" << GetParam() << ")";
    // sqlType per value: 200 in a TINYINT UNSIGNED is a SMALLINT, 0 a TINYINT; 4e9 in an INT UNSIGNED a BIGINT.
    EXPECT_EQ(rows[0].at("u").sql_type, 5) << types[i];
    EXPECT_EQ(rows[1].at("u").sql_type, -6) << types[i];
    EXPECT_EQ(rows[0].at("bu").sql_type, -5) << types[i];
    EXPECT_EQ(rows[1].at("bu").sql_type, 4) << types[i];
    ++compared;
  }
  EXPECT_EQ(compared, types.size());
  std::printf("[ optional metadata ] %s: %zu types, each twice before 4 integers and 3 charsets, 2 rows each\n",
              GetParam().c_str(), compared);
}

// The three tables, as reported.
TEST_P(OptionalMetadataLive, TheReportedTablesDecodeAsTheServerStoredThem) {
  CapturedRows rec;
  Stream(
      &rec,
      [&] {
        ASSERT_TRUE(Sql(
            "CREATE TABLE y (id INT PRIMARY KEY, y YEAR, a TINYINT, b INT UNSIGNED, c INT, d BIGINT);"
            "INSERT INTO y VALUES (1, 2024, -5, 4000000000, -7, -9);"
            "CREATE TABLE g (id INT PRIMARY KEY, g POINT, t VARCHAR(10) CHARACTER SET latin1, "
            "u VARCHAR(10) CHARACTER SET gbk);"
            "INSERT INTO g VALUES (1, ST_GeomFromText('POINT(1 2)'), 'café', '中文');"
            "CREATE TABLE gj (id INT PRIMARY KEY, g POINT, j JSON, e ENUM('p','q'), s SET('m','n'), "
            "t VARCHAR(10) CHARACTER SET latin1, u VARCHAR(10) CHARACTER SET gbk);"
            "INSERT INTO gj VALUES (1, ST_GeomFromText('POINT(1 2)'), '{\"k\":1}', 'q', 'm,n', 'café', '中文');"
            "CREATE TABLE r (id INT PRIMARY KEY, c0 GEOMETRY, c1 INT, c2 VARCHAR(20) CHARACTER SET utf8mb4, "
            "c3 FLOAT, c4 BIGINT UNSIGNED, c5 YEAR, c6 YEAR, c7 POINT, c8 BINARY(4), c9 JSON, "
            "c10 SMALLINT UNSIGNED);"
            "INSERT INTO r VALUES (1, ST_GeomFromText('POINT(0 0)'), -1, 'ü', 1.5, 18446744073709551615, 1999, "
            "2155, ST_GeomFromText('POINT(3 4)'), 'ab', '[1]', 65535);"));
      },
      [&] { return rec.RowsOf(db_ + ".r") >= 1; });
  std::lock_guard<std::mutex> lock(rec.mu);
  auto row = [&](const std::string& t) { return rec.tables[db_ + "." + t].at(0); };
  const auto y = row("y");
  EXPECT_EQ(y.at("y").text, "2024");
  EXPECT_EQ(y.at("a").text, "-5");
  EXPECT_EQ(y.at("b").text, "4000000000");
  EXPECT_EQ(y.at("c").text, "-7");
  EXPECT_EQ(y.at("d").text, "-9");
  for (const char* t : {"g", "gj"}) {
    EXPECT_EQ(row(t).at("t").text, "café") << t;
    EXPECT_EQ(row(t).at("u").text, "中文") << t;
  }
  EXPECT_EQ(row("gj").at("e").text, "2");  // Canal sends an ENUM's index
  const auto r = row("r");
  EXPECT_EQ(r.at("c1").text, "-1");
  EXPECT_EQ(r.at("c2").text, "ü");
  EXPECT_EQ(r.at("c4").text, "18446744073709551615");
  EXPECT_EQ(r.at("c4").sql_type, 3);  // past 2^63-1: DECIMAL
  EXPECT_EQ(r.at("c5").text, "1999");
  EXPECT_EQ(r.at("c10").text, "65535");
  EXPECT_EQ(r.at("c10").sql_type, 4);
  EXPECT_EQ(r.at("c8").text, std::string("ab\0\0", 4));  // BINARY(4) as stored: padded to 4 bytes
  EXPECT_EQ(r.at("c8").sql_type, 2004);
}

INSTANTIATE_TEST_SUITE_P(Metadata, OptionalMetadataLive, ::testing::Values("FULL", "MINIMAL"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace canal::testing
