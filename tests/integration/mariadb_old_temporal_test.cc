// MariaDB's own TIMESTAMP(N)/DATETIME(N)/TIME(N), N = 0..6, made with
// mysql56_temporal_format=OFF (what MariaDB 5.3-10.0 made, and what survives
// their upgrades): logged under the old type codes 7/12/11 with no metadata and
// a length that depends on N. Through canal-server to the SDK, with
// FULL and MINIMAL row metadata, every value, NULL, mysqlType and sqlType
// equals MariaDB's own SELECT and what the same table made with the 5.6 format
// (TIMESTAMP2 and friends) delivers; the rows after it, of every table, arrive
// (before the fix the first such row stopped the destination); and the file
// decoder refuses such a binlog without a schema, naming the column and the
// fix, and decodes it with the destination's schema history.
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Sandbox 14861, canal-server 14862-14863 and 14865.
constexpr uint16_t kValuesPort = TestPort("old_temporal", 1);
constexpr uint16_t kAfterPort = TestPort("old_temporal", 2);
constexpr uint16_t kNoHistoryPort = TestPort("old_temporal", 4);

class MariadbOldTemporal : public ServerSuite<TestPort("old_temporal")> {
 protected:
  static client::ConnectorOptions ClientOptions(uint16_t port) {
    client::ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(port);
    o.destination = "example";
    o.connect_timeout = 2s;
    o.read_timeout = 20s;
    return o;
  }
  // canal-server on `port` from the primary's end, its destination on `db`'s
  // tables, and a client subscribed to it in *c.
  static void StartServer(CanalInstall& install, uint16_t port, const std::string& db,
                          std::unique_ptr<client::Connector>* c, const std::string& instance_extra = "") {
    install.WriteServerProperties(CanalInstall::ServerProperties(port));
    install.WriteInstance("example",
                          StartHere() + "canal.instance.filter.regex = " + db + "\\\\..*\n" + instance_extra);
    std::string out;
    ASSERT_EQ(install.Startup(&out), 0) << out;
    *c = std::make_unique<client::Connector>(ClientOptions(port));
    Status s = ConnectAndSubscribe(**c, 20s);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
};

// What a client got for one column of one row image.
struct Got {
  std::string value;
  bool is_null = false;
  int sql_type = 0;
  std::string mysql_type;
  bool operator==(const Got&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Got& g) {
  return os << (g.is_null ? "NULL" : "'" + g.value + "'") << " sqlType " << g.sql_type << " " << g.mysql_type;
}

// "table id image" -> column -> what arrived. image: "insert", "before", "after".
using Received = std::map<std::string, std::map<std::string, Got>>;

std::string Key(const std::string& table, const std::string& id, const std::string& image) {
  return table + " " + id + " " + image;
}

// Reads rows until one of `marker_table` arrives (or 90 s pass).
void Receive(client::Connector& c, const std::string& marker_table, Received* out) {
  const auto deadline = Clock::now() + 90s;
  bool marker = false;
  while (!marker) {
    ASSERT_LT(Clock::now(), deadline) << "no row of " << marker_table << " after " << out->size() << " images";
    client::Message m;
    Status s = c.GetWithoutAck(1000, 200, client::TimeUnit::kMilliseconds, &m);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (m.batch_id() == -1) continue;
    s = ForEachRow(m, [&](const entry::Header& h, entry::EventType type, const entry::RowData& row) {
      const std::string table = h.schemaname() + "." + h.tablename();
      if (table == marker_table) marker = true;
      auto put = [&](const auto& columns, const std::string& image) {
        std::string id;
        for (const entry::Column& col : columns) {
          if (col.name() == "id") id = col.value();
        }
        auto& slot = (*out)[Key(table, id, image)];
        for (const entry::Column& col : columns) {
          slot[col.name()] = Got{col.value(), col.isnull(), col.sqltype(), col.mysqltype()};
        }
      };
      if (type == entry::INSERT) put(row.aftercolumns(), "insert");
      if (type == entry::UPDATE) {
        put(row.beforecolumns(), "before");
        put(row.aftercolumns(), "after");
      }
      if (type == entry::DELETE) put(row.beforecolumns(), "delete");
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(c.Ack(m.batch_id()).ok());
  }
}

// `create`, run with MariaDB's pre-10.1 temporal format.
std::string InOldFormat(const std::string& create) {
  return "SET GLOBAL mysql56_temporal_format = OFF; " + create + "; SET GLOBAL mysql56_temporal_format = ON";
}

const char* const kTypes[] = {"TIMESTAMP", "DATETIME", "TIME"};
const char* const kPrefixes[] = {"ts", "dt", "t"};

std::vector<std::string> ColumnNames() {
  std::vector<std::string> names = {"id"};
  for (const char* p : kPrefixes) {
    for (int n = 0; n <= 6; ++n) names.push_back(p + std::to_string(n));
  }
  return names;
}

std::string CreateTable(const std::string& name) {
  std::string sql = "CREATE TABLE " + name + " (id INT PRIMARY KEY";
  for (int k = 0; k < 3; ++k) {
    for (int n = 0; n <= 6; ++n) {
      sql += std::string(", ") + kPrefixes[k] + std::to_string(n) + " " + kTypes[k] +
             (n ? "(" + std::to_string(n) + ")" : "") + " NULL";
    }
  }
  return sql + ")";
}

// One row: the same literal (six digits; the server rounds it to each N) in
// the seven columns of each type, or NULL.
std::string Row(int id, const std::string& ts, const std::string& dt, const std::string& t) {
  std::string v = std::to_string(id);
  for (const std::string* x : {&ts, &dt, &t}) {
    for (int n = 0; n <= 6; ++n) v += ", " + (*x == "NULL" ? *x : "'" + *x + "'");
  }
  return "(" + v + ")";
}

std::string Rows(int base) {
  return Row(base + 1, "2022-05-16 14:53:10.123456", "2022-05-16 14:53:10.123456", "14:53:10.123456") + ", " +
         Row(base + 2, "1970-01-01 00:00:01.000001", "0000-00-00 00:00:00", "-838:59:59") + ", " +
         Row(base + 3, "2038-01-19 03:14:07.999999", "9999-12-31 23:59:59.999999", "838:59:59") + ", " +
         Row(base + 4, "0000-00-00 00:00:00", "1000-01-01 00:00:00.000001", "-00:00:00.000001") + ", " +
         Row(base + 5, "NULL", "NULL", "NULL") + ", " +
         Row(base + 6, "2001-02-03 04:05:06.5", "2001-02-03 04:05:06.05", "-12:34:56.7");
}

// SELECT of every row of `table` as the server prints it (UTC), by id.
std::map<std::string, std::map<std::string, std::string>> Select(MariadbSandbox& db, const std::string& table) {
  const std::vector<std::string> names = ColumnNames();
  std::string cols;
  for (const auto& n : names) cols += (cols.empty() ? "" : ", ") + n;
  std::string out;
  EXPECT_TRUE(db.Sql("SET time_zone = '+00:00'; SELECT " + cols + " FROM " + table + " ORDER BY id", &out))
      << db.error();
  std::map<std::string, std::map<std::string, std::string>> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string x; std::getline(ls, x, '\t');) f.push_back(x);
    EXPECT_EQ(f.size(), names.size()) << line;
    for (size_t i = 0; i < f.size() && i < names.size(); ++i) rows[f[0]][names[i]] = f[i];
  }
  return rows;
}

// Expected mysqlType of a column: what MariaDB calls it.
std::string MysqlType(const std::string& column) {
  const size_t digit = column.find_first_of("0123456789");
  const std::string prefix = column.substr(0, digit);
  const int n = column[digit] - '0';
  const std::string base = prefix == "ts" ? "timestamp" : prefix == "dt" ? "datetime" : "time";
  return n ? base + "(" + std::to_string(n) + ")" : base;
}

// java.sql.Types: INTEGER, TIME, TIMESTAMP (DATETIME too, as Canal sends it).
int SqlType(const std::string& column) {
  if (column == "id") return 4;
  return column[0] == 't' && column[1] != 's' ? 92 : 93;
}

TEST_F(MariadbOldTemporal, EveryPrecisionArrivesAsTheServerSelectsItWithFullAndMinimalMetadata) {
  // A binlog file of this test's own, for the file decoder below.
  ASSERT_TRUE(Sql("FLUSH BINARY LOGS"));
  std::string first_file;
  uint64_t first_pos = 0;
  ASSERT_TRUE(PrimaryEnd(*sandbox_, &first_file, &first_pos));
  CanalInstall install("mariadb-old-temporal", kSandboxPort);
  std::unique_ptr<client::Connector> c;
  ASSERT_NO_FATAL_FAILURE(StartServer(install, kValuesPort, "ot", &c));

  // ot.old with the pre-10.1 format, ot.new (TIMESTAMP2 etc.) with the default.
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = FULL; DROP DATABASE IF EXISTS ot; CREATE DATABASE ot; " +
                  InOldFormat(CreateTable("ot.old")) + "; " + CreateTable("ot.new") +
                  "; CREATE TABLE ot.done (id INT PRIMARY KEY)"));
  for (const char* table : {"ot.old", "ot.new"}) {
    ASSERT_TRUE(Sql(std::string("SET time_zone = '+00:00'; INSERT INTO ") + table + " VALUES " + Rows(0)));
  }
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = MINIMAL"));
  for (const char* table : {"ot.old", "ot.new"}) {
    ASSERT_TRUE(Sql(std::string("SET time_zone = '+00:00'; INSERT INTO ") + table + " VALUES " + Rows(100)));
  }
  const auto inserted_old = Select(*sandbox_, "ot.old"), inserted_new = Select(*sandbox_, "ot.new");
  for (const char* table : {"ot.old", "ot.new"}) {
    // An update with both images (MINIMAL: the key before, the changed columns after).
    ASSERT_TRUE(Sql(std::string("SET time_zone = '+00:00'; UPDATE ") + table +
                    " SET ts3 = '2011-11-11 11:11:11.111', dt6 = '2011-11-11 11:11:11.654321', t2 = '-1:02:03.04' "
                    "WHERE id = 101"));
  }
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = FULL"));
  for (const char* table : {"ot.old", "ot.new"}) {
    ASSERT_TRUE(Sql(std::string("SET time_zone = '+00:00'; UPDATE ") + table +
                    " SET ts3 = '2011-11-11 11:11:11.111', dt6 = '2011-11-11 11:11:11.654321', t2 = '-1:02:03.04' "
                    "WHERE id = 1"));
  }
  const auto updated_old = Select(*sandbox_, "ot.old");
  ASSERT_TRUE(Sql("INSERT INTO ot.done VALUES (1)"));
  // MariaDB itself says which columns have its own format.
  EXPECT_EQ(sandbox_->SqlValue("SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'ot' AND "
                               "TABLE_NAME = 'old' AND COLUMN_NAME = 'ts3'"),
            "timestamp(3) /* mariadb-5.3 */");

  Received got;
  Receive(*c, "ot.done", &got);
  if (HasFatalFailure()) return;

  const std::vector<std::string> names = ColumnNames();
  size_t compared = 0;
  auto check = [&](const std::string& table, const std::string& id, const std::string& image,
                   const std::map<std::string, std::string>& want, bool all_columns) {
    SCOPED_TRACE(table + " id " + id + " " + image);
    const auto it = got.find(Key(table, id, image));
    ASSERT_NE(it, got.end()) << "no " << image << " image of " << table << " id " << id;
    for (const std::string& col : names) {
      const auto g = it->second.find(col);
      if (g == it->second.end()) {
        EXPECT_FALSE(all_columns) << col << " missing";
        continue;
      }
      const std::string& w = want.at(col);
      EXPECT_EQ(g->second.is_null, w == "NULL") << col << ": " << g->second << ", SELECT " << w;
      if (w != "NULL") {
        EXPECT_EQ(g->second.value, w) << col << ": SELECT " << w;
      }
      // (id's is the schema history's under MINIMAL: not this test's business.)
      if (col != "id") {
        EXPECT_EQ(g->second.mysql_type, MysqlType(col)) << col;
      }
      EXPECT_EQ(g->second.sql_type, SqlType(col)) << col;
      // The 5.6-format table delivered the same.
      const auto other = got.find(Key("ot.new", id, image));
      if (table == "ot.old" && other != got.end() && other->second.count(col)) {
        EXPECT_EQ(g->second, other->second.at(col)) << col << " of ot.old vs ot.new";
      }
      ++compared;
    }
  };
  for (const auto& [table, rows] : {std::pair{"ot.old", &inserted_old}, std::pair{"ot.new", &inserted_new}}) {
    for (const auto& [id, row] : *rows) check(table, id, "insert", row, true);
  }
  check("ot.old", "1", "before", inserted_old.at("1"), true);
  check("ot.old", "1", "after", updated_old.at("1"), true);
  check("ot.old", "101", "before", inserted_old.at("101"), false);
  check("ot.old", "101", "after", updated_old.at("101"), false);
  std::printf("[ old temporal ] %zu values of TIMESTAMP/DATETIME/TIME(0..6) in both formats, FULL and MINIMAL, equal "
              "MariaDB's SELECT\n",
              compared);
  EXPECT_GE(compared, 2u * 12 * names.size());
  EXPECT_EQ(ReadAll(install.instance_log("example")).find("Corruption"), std::string::npos)
      << ReadAll(install.instance_log("example"));
  install.Stop();

  // The file decoder: no schema, no guess; the destination's schema history names N.
  const std::string tool = std::string(CANAL_BINARY_DIR) + "/bin/canal-binlog";
  int rc = 0;
  std::string files;
  for (const auto& e : std::filesystem::directory_iterator(sandbox_->binlog_dir())) {
    const std::string name = e.path().filename().string();
    if (name.find(".0") != std::string::npos && name >= first_file) files += " " + e.path().string();
  }
  const std::string refused = RunShell(tool + " decode --threads 0" + files + " 2>&1", &rc);
  EXPECT_NE(rc, 0) << refused;
  EXPECT_NE(refused.find("rows event for `ot`.`old`, row 1, column 2 (ts0)"), std::string::npos) << refused;
  EXPECT_NE(refused.find("TIMESTAMP under the old type code (7)"), std::string::npos) << refused;
  EXPECT_NE(refused.find("--schema"), std::string::npos) << refused;
  const std::string history = (install.conf_dir() / "example" / "schema_history.json").string();
  const std::string decoded = RunShell(tool + " decode --threads 0 --schema " + history + files + " 2>&1", &rc);
  EXPECT_EQ(rc, 0) << decoded;
  EXPECT_NE(decoded.find("\"ts3\":\"2022-05-16 14:53:10.123\""), std::string::npos) << decoded.substr(0, 4000);
  EXPECT_NE(decoded.find("\"t6\":\"-00:00:00.000001\""), std::string::npos) << decoded.substr(0, 4000);
}

// Before the fix, the first row of such a table stopped the destination: no
// row after it, of any table, arrived (the case: a TIMESTAMP(3) read
// as 4 bytes leaves 2, which begin a row that runs past the event's end).
// Now they all do, in order.
TEST_F(MariadbOldTemporal, RowsAfterAnOldFormatTableKeepArriving) {
  // Made before the destination starts: the schema history takes them from
  // information_schema ("timestamp(3) /* mariadb-5.3 */"), not from the DDL.
  ASSERT_TRUE(Sql("DROP DATABASE IF EXISTS ot2; CREATE DATABASE ot2; CREATE TABLE ot2.other (id INT PRIMARY KEY, "
                  "v VARCHAR(10)); " + InOldFormat("CREATE TABLE ot2.old (id INT PRIMARY KEY, ts TIMESTAMP(3) NULL)")));
  CanalInstall install("mariadb-old-temporal-after", kSandboxPort);
  std::unique_ptr<client::Connector> c;
  ASSERT_NO_FATAL_FAILURE(StartServer(install, kAfterPort, "ot2", &c));
  ASSERT_TRUE(Sql("INSERT INTO ot2.other VALUES (1, 'before')"));
  ASSERT_TRUE(Sql("SET time_zone = '+00:00'; INSERT INTO ot2.old VALUES (1, '2022-05-16 14:53:10.123')"));
  for (int i = 2; i <= 5; ++i) ASSERT_TRUE(Sql("INSERT INTO ot2.other VALUES (" + std::to_string(i) + ", 'after')"));
  Received got;
  Receive(*c, "ot2.other", &got);  // the first marker; go on until id 5
  for (const auto deadline = Clock::now() + 60s; !got.count(Key("ot2.other", "5", "insert"));) {
    ASSERT_LT(Clock::now(), deadline) << "rows after ot2.old never arrived: "
                                      << ReadAll(install.instance_log("example"));
    Receive(*c, "ot2.other", &got);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(got[Key("ot2.old", "1", "insert")]["ts"].value, "2022-05-16 14:53:10.123");
  EXPECT_EQ(got.size(), 6u);  // and no other row
  for (int i = 1; i <= 5; ++i) EXPECT_TRUE(got.count(Key("ot2.other", std::to_string(i), "insert"))) << i;
  install.Stop();
}

// With the schema history off, canal-server asks information_schema for N,
// also under FULL metadata (which names the columns but not their precision).
TEST_F(MariadbOldTemporal, WithoutASchemaHistoryInformationSchemaGivesThePrecision) {
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = FULL; DROP DATABASE IF EXISTS ot3; CREATE DATABASE ot3; " +
                  InOldFormat("CREATE TABLE ot3.old (id INT PRIMARY KEY, dt DATETIME(4), t TIME(5))")));
  CanalInstall install("mariadb-old-temporal-no-history", kSandboxPort);
  std::unique_ptr<client::Connector> c;
  ASSERT_NO_FATAL_FAILURE(StartServer(install, kNoHistoryPort, "ot3", &c, "canal.instance.tsdb.enable = false\n"));
  ASSERT_TRUE(Sql("INSERT INTO ot3.old VALUES (1, '2015-12-07 12:58:10.1234', '-838:59:58.99999')"));
  Received got;
  Receive(*c, "ot3.old", &got);
  if (HasFatalFailure()) return;
  auto& row = got[Key("ot3.old", "1", "insert")];
  EXPECT_EQ(row["dt"], (Got{"2015-12-07 12:58:10.1234", false, 93, "datetime(4)"}));
  EXPECT_EQ(row["t"], (Got{"-838:59:58.99999", false, 92, "time(5)"}));
  install.Stop();
}

}  // namespace
}  // namespace canal::testing
