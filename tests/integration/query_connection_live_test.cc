// QueryConnection, CheckReplicationSettings and InformationSchemaProvider
// against a real MariaDB (throwaway sandboxes on ports 13432/13433): server
// facts, binlog listings, schemas of every kind of column, errors, and decoding
// binlogs written with MINIMAL row metadata through information_schema, before
// and after DDL. Skips where Debian's mariadb-server is not installed.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/mysql/information_schema_provider.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/render/canal_value.h"
#include "support/mariadb_sandbox.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using mysql::ConnectionOptions;
using mysql::InformationSchemaProvider;
using mysql::QueryConnection;
using mysql::ServerInfo;

constexpr uint16_t kPort = TestPort("dump_query_live", 1);
constexpr uint16_t kSecondPort = TestPort("dump_query_live", 2);  // sandboxes with other binlog settings

ConnectionOptions CanalLogin(uint16_t port) {
  ConnectionOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.user = MariadbSandbox::kUser;
  o.password = MariadbSandbox::kPassword;
  o.connect_timeout_ms = 5000;
  o.read_timeout_ms = 10000;
  return o;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

class QueryConnectionLive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sandbox_ = StartSuiteSandbox(kPort, &setup_error_);
    if (sandbox_ == nullptr) return;
    // A committed transaction, so there is a GTID position to report.
    if (!sandbox_->Sql("CREATE DATABASE live; CREATE TABLE live.seed (id INT PRIMARY KEY); "
                       "INSERT INTO live.seed VALUES (1);")) {
      setup_error_ = sandbox_->error();
      sandbox_.reset();
    }
  }
  static void TearDownTestSuite() { sandbox_.reset(); }  // stops the server
  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_);
    conn_ = std::make_unique<QueryConnection>(CanalLogin(kPort));
    Status s = conn_->Connect();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Sql(const std::string& sql) { ASSERT_TRUE(sandbox_->Sql(sql)) << sandbox_->error(); }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
  std::unique_ptr<QueryConnection> conn_;
};

TEST_F(QueryConnectionLive, ReadServerInfoReportsMariadbWithRowFullAndCrc32) {
  ServerInfo info;
  Status s = conn_->ReadServerInfo(&info);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(info.mariadb) << info.version;
  EXPECT_TRUE(Contains(info.version, "MariaDB")) << info.version;
  EXPECT_GE(info.major, 10);
  EXPECT_EQ(std::to_string(info.major) + "." + std::to_string(info.minor) + "." + std::to_string(info.patch),
            info.version.substr(0, info.version.find('-')));
  EXPECT_EQ(info.server_id, 1u);
  EXPECT_TRUE(info.log_bin);
  EXPECT_EQ(info.binlog_format, "ROW");
  EXPECT_EQ(info.binlog_row_image, "FULL");
  EXPECT_EQ(info.binlog_row_metadata, "FULL");
  EXPECT_EQ(info.binlog_checksum, "CRC32");
  EXPECT_EQ(info.gtid_mode, "");  // MySQL only
  EXPECT_EQ(info.gtid_current_pos, sandbox_->SqlValue("SELECT @@gtid_current_pos"));
  EXPECT_TRUE(Contains(info.gtid_current_pos, "0-1-")) << info.gtid_current_pos;

  std::vector<mysql::ReplicationWarning> warnings;
  s = mysql::CheckReplicationSettings(info, &warnings);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(warnings.empty());
}

TEST_F(QueryConnectionLive, MasterStatusAndBinaryLogsAgreeWithTheBinlogDir) {
  Sql("FLUSH BINARY LOGS; INSERT INTO live.seed VALUES (2);");
  std::vector<mysql::BinaryLogFile> logs;
  Status s = conn_->ShowBinaryLogs(&logs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> on_disk;
  ASSERT_TRUE(binlog::ExpandBinlogPaths({sandbox_->binlog_dir()}, &on_disk).ok());
  ASSERT_EQ(logs.size(), on_disk.size());
  ASSERT_GE(logs.size(), 2u);
  for (size_t i = 0; i < logs.size(); ++i) {
    EXPECT_EQ(logs[i].name, fs::path(on_disk[i]).filename().string());
    EXPECT_EQ(logs[i].size, fs::file_size(on_disk[i])) << logs[i].name;
  }
  mysql::MasterStatus status;
  s = conn_->ShowMasterStatus(&status);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(status.file, logs.back().name);
  EXPECT_EQ(status.position, logs.back().size);
  EXPECT_EQ(status.position, fs::file_size(on_disk.back()));
  EXPECT_EQ(status.executed_gtid_set, "");  // MySQL only
}

TEST_F(QueryConnectionLive, GetColumnsReadsNamesKeysSignednessCharsetsAndLabels) {
  Sql("CREATE TABLE live.every_kind ("
      " id BIGINT UNSIGNED NOT NULL, region SMALLINT NOT NULL, tiny TINYINT, flag BOOL,"
      " amount DECIMAL(10,2) UNSIGNED, ratio DOUBLE, name VARCHAR(20) CHARACTER SET utf8mb4, latin CHAR(3) "
      "CHARACTER SET latin1, raw VARBINARY(8), fixed BINARY(4), doc BLOB, note TEXT,"
      " e ENUM('plain','it''s','a,b','back\\\\slash','é'), s SET('x','y''z'), j JSON, at DATETIME(3), "
      "ts TIMESTAMP NULL, d DATE, y YEAR, b BIT(5), g POINT, u UUID,"
      " PRIMARY KEY (id, region))");
  InformationSchemaProvider provider(conn_.get());
  std::vector<binlog::SchemaColumn> cols;
  Status s = provider.GetColumns("live", "every_kind", &cols);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<std::string> names = {"id",   "region", "tiny", "flag", "amount", "ratio", "name", "latin",
                                          "raw",  "fixed",  "doc",  "note", "e",      "s",     "j",    "at",
                                          "ts",   "d",      "y",    "b",    "g",      "u"};
  ASSERT_EQ(cols.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(cols[i].name, names[i]);
    EXPECT_EQ(cols[i].is_key, i < 2);
    EXPECT_EQ(cols[i].is_unsigned, names[i] == "id" || names[i] == "amount");
    if (names[i] != "e" && names[i] != "s") {
      EXPECT_TRUE(cols[i].enum_or_set_labels.empty());
    }
  }
  EXPECT_EQ(cols[0].data_type, "bigint");
  EXPECT_EQ(cols[3].data_type, "tinyint");  // BOOL
  EXPECT_EQ(cols[6].data_type, "varchar");
  EXPECT_EQ(cols[12].data_type, "enum");
  EXPECT_EQ(cols[14].data_type, "longtext");  // MariaDB's JSON
  EXPECT_EQ(cols[0].charset, "");
  EXPECT_EQ(cols[6].charset, "utf8mb4");
  EXPECT_EQ(cols[7].charset, "latin1");
  EXPECT_EQ(cols[8].charset, "binary");
  EXPECT_EQ(cols[9].charset, "binary");
  EXPECT_EQ(cols[10].charset, "binary");
  EXPECT_EQ(cols[11].charset, "utf8mb4");
  EXPECT_EQ(cols[12].enum_or_set_labels,
            (std::vector<std::string>{"plain", "it's", "a,b", "back\\slash", "\xc3\xa9"}));
  EXPECT_EQ(cols[13].enum_or_set_labels, (std::vector<std::string>{"x", "y'z"}));
}

TEST_F(QueryConnectionLive, GetColumnsIsCachedUntilInvalidated) {
  Sql("CREATE TABLE live.cached (a INT PRIMARY KEY)");
  InformationSchemaProvider provider(conn_.get());
  std::vector<binlog::SchemaColumn> cols;
  ASSERT_TRUE(provider.GetColumns("live", "cached", &cols).ok());
  ASSERT_TRUE(provider.GetColumns("live", "cached", &cols).ok());
  EXPECT_EQ(provider.queries(), 1u);
  Sql("ALTER TABLE live.cached ADD COLUMN b INT");
  ASSERT_TRUE(provider.GetColumns("live", "cached", &cols).ok());
  EXPECT_EQ(cols.size(), 1u);  // the cached copy, as the caller did not invalidate
  provider.Invalidate("live", "other");
  ASSERT_TRUE(provider.GetColumns("live", "cached", &cols).ok());
  EXPECT_EQ(provider.queries(), 1u);
  provider.Invalidate("live", "cached");
  ASSERT_TRUE(provider.GetColumns("live", "cached", &cols).ok());
  EXPECT_EQ(provider.queries(), 2u);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[1].name, "b");
  provider.Clear();
  ASSERT_TRUE(provider.GetColumns("live", "cached", &cols).ok());
  EXPECT_EQ(provider.queries(), 3u);
}

TEST_F(QueryConnectionLive, AMissingTableIsNotFoundAndNotCached) {
  InformationSchemaProvider provider(conn_.get());
  std::vector<binlog::SchemaColumn> cols;
  Status s = provider.GetColumns("live", "later", &cols);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "`live`.`later`")) << s.ToString();
  Sql("CREATE TABLE live.later (x INT)");
  s = provider.GetColumns("live", "later", &cols);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(provider.queries(), 2u);
}

TEST_F(QueryConnectionLive, TableNamesWithQuotesAndBackslashesAreEscaped) {
  Sql("CREATE TABLE live.`it's\\odd` (q INT)");
  InformationSchemaProvider provider(conn_.get());
  std::vector<binlog::SchemaColumn> cols;
  Status s = provider.GetColumns("live", "it's\\odd", &cols);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(cols.size(), 1u);
  EXPECT_EQ(cols[0].name, "q");
  // An injection attempt is just a name that does not exist.
  s = provider.GetColumns("live", "x' OR '1'='1", &cols);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(conn_->QuoteString("it's"), "'it\\'s'");
}

TEST_F(QueryConnectionLive, WrongPasswordIsAccessDeniedWithTheServerErrorKept) {
  ConnectionOptions o = CanalLogin(kPort);
  o.password = "not-the-password";
  QueryConnection bad(o);
  Status s = bad.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "Access denied")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "127.0.0.1:13432")) << s.ToString();
  EXPECT_EQ(bad.last_server_error().code, mysql::kErAccessDenied);
  EXPECT_EQ(bad.last_server_error().sql_state, "28000");
  EXPECT_FALSE(bad.connected());
}

TEST_F(QueryConnectionLive, NothingListeningIsANetworkErrorWithoutAServerError) {
  QueryConnection nobody(CanalLogin(1));  // port 1: nothing listens there
  Status s = nobody.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "127.0.0.1:1:")) << s.ToString();
  EXPECT_TRUE(nobody.last_server_error().empty());
  s = nobody.Execute("SELECT 1");
  EXPECT_TRUE(Contains(s.message(), "not connected")) << s.ToString();
}

TEST_F(QueryConnectionLive, QueryErrorsNameAddressAndStatementAndKeepTheNumber) {
  mysql::ResultSet rs;
  Status s = conn_->Query("SELECT * FROM live.no_such_table", &rs);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "127.0.0.1:13432")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "SELECT * FROM live.no_such_table")) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "ERROR 1146")) << s.ToString();
  EXPECT_EQ(conn_->last_server_error().code, 1146);
  EXPECT_TRUE(conn_->connected());  // a statement error keeps the session
  s = conn_->Query("SELECT 1, NULL, 'x'", &rs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(conn_->last_server_error().empty());
  ASSERT_EQ(rs.rows.size(), 1u);
  ASSERT_EQ(rs.rows[0].size(), 3u);
  EXPECT_EQ(rs.rows[0][0], "1");
  EXPECT_FALSE(rs.rows[0][1].has_value());
  EXPECT_EQ(rs.rows[0][2], "x");
  EXPECT_TRUE(conn_->Execute("DO 1").ok());
}

TEST_F(QueryConnectionLive, AKilledSessionIsReportedAndTheProviderReconnects) {
  mysql::ResultSet rs;
  ASSERT_TRUE(conn_->Query("SELECT CONNECTION_ID()", &rs).ok());
  const std::string id = *rs.rows.at(0).at(0);
  Sql("KILL " + id);
  Status s = conn_->Query("SELECT 1", &rs);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(conn_->connected()) << s.ToString();
  // The provider connects again on its own.
  InformationSchemaProvider provider(conn_.get());
  std::vector<binlog::SchemaColumn> cols;
  s = provider.GetColumns("live", "seed", &cols);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(conn_->connected());
}

TEST_F(QueryConnectionLive, RequiredTlsFailsAgainstAServerWithoutTls) {
  if (sandbox_->SqlValue("SELECT @@have_ssl") == "YES") GTEST_SKIP() << "this server has TLS";
  ConnectionOptions o = CanalLogin(kPort);
  o.tls = mysql::TlsMode::kRequired;
  QueryConnection tls(o);
  Status s = tls.Connect();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "TLS is required but the server did not offer it")) << s.ToString();
  EXPECT_FALSE(tls.connected());
  o.tls = mysql::TlsMode::kPreferred;  // falls back to plain TCP
  QueryConnection preferred(o);
  s = preferred.Connect();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// ---- Sandboxes with other settings (port 13433, one at a time) ----

// Connects `conn` and reads the server's settings into `info`; a failure fails
// the test (ASSERT_NO_FATAL_FAILURE at the call).
void ConnectAndReadServerInfo(QueryConnection* conn, ServerInfo* info) {
  ASSERT_TRUE(conn->Connect().ok());
  ASSERT_TRUE(conn->ReadServerInfo(info).ok());
}

TEST(QueryConnectionLiveSettings, MixedBinlogFormatIsRefusedWithTheFix) {
  if (!MariadbSandbox::Available()) GTEST_SKIP() << MariadbSandbox::SkipReason();
  SandboxOptions o;
  o.port = kSecondPort;
  o.binlog_format = "MIXED";
  MariadbSandbox sandbox(o);
  ASSERT_TRUE(sandbox.StartFresh()) << sandbox.error();
  QueryConnection conn(CanalLogin(kSecondPort));
  ServerInfo info;
  ASSERT_NO_FATAL_FAILURE(ConnectAndReadServerInfo(&conn, &info));
  EXPECT_EQ(info.binlog_format, "MIXED");
  Status s = mysql::CheckReplicationSettings(info, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "binlog_format is MIXED; set binlog_format=ROW (SET GLOBAL binlog_format=ROW, and in my.cnf)");
}

// What a decoder made of one table's events in one binlog file.
struct Decoded {
  Status status;
  std::vector<std::vector<std::string>> table_maps;  // column names of each TABLE_MAP of the table
  std::vector<std::vector<std::string>> mysql_types;  // Column.mysqlType of each, as Canal's forms give it
  std::vector<std::string> rows;                     // "name=value;..." of each after image
};

Decoded DecodeTable(const std::string& path, binlog::TableSchemaProvider* provider, const std::string& db,
                    const std::string& table) {
  Decoded d;
  binlog::DecoderOptions options;
  options.schema_provider = provider;
  binlog::EventDecoder decoder(options);
  binlog::BinlogFileReader reader(&decoder);
  d.status = reader.Open(path);
  render::ValueFormatOptions readable;
  readable.readable = true;
  binlog::RowsReader rows_reader;
  binlog::RowChange change;
  while (d.status.ok()) {
    binlog::Event e;
    bool eof = false;
    d.status = reader.Next(&e, &eof);
    if (!d.status.ok() || eof) break;
    if (const auto* tm = e.As<binlog::TableMapEventRef>()) {
      if (tm->table->db != db || tm->table->table != table) continue;
      std::vector<std::string> names, types;
      for (const auto& c : tm->table->columns) {
        names.push_back(c.name);
        types.push_back(render::CanalMysqlType(c, {}, tm->table->integer_display_widths));
      }
      d.table_maps.push_back(names);
      d.mysql_types.push_back(types);
    } else if (const auto* re = e.As<binlog::RowsEvent>()) {
      if (re->table->db != db || re->table->table != table) continue;
      rows_reader.Reset(*re);
      bool done = false;
      while (d.status.ok()) {
        d.status = rows_reader.Next(&change, &done);
        if (!d.status.ok() || done) break;
        std::string line;
        const binlog::RowImage& image = change.has_after ? change.after : change.before;
        for (size_t i = 0; i < image.values.size(); ++i) {
          const binlog::ColumnValue& v = image.values[i];
          line += re->table->columns[i].name + "=";
          if (v.is_null()) {
            line += "NULL";
          } else if (v.is_present()) {
            Status fs = render::AppendCanalValue(v, re->table->columns[i], readable, &line);
            if (!fs.ok()) line += "<" + fs.ToString() + ">";
          }
          line += ";";
        }
        d.rows.push_back(line);
      }
    }
  }
  return d;
}

TEST(QueryConnectionLiveSettings, MinimalRowMetadataIsNamedFromInformationSchemaAndNeverMislabelled) {
  if (!MariadbSandbox::Available()) GTEST_SKIP() << MariadbSandbox::SkipReason();
  SandboxOptions o;
  o.port = kSecondPort;
  o.binlog_row_metadata = "MINIMAL";
  MariadbSandbox sandbox(o);
  ASSERT_TRUE(sandbox.StartFresh()) << sandbox.error();
  QueryConnection conn(CanalLogin(kSecondPort));
  ServerInfo info;
  ASSERT_NO_FATAL_FAILURE(ConnectAndReadServerInfo(&conn, &info));
  EXPECT_EQ(info.binlog_row_metadata, "MINIMAL");
  std::vector<mysql::ReplicationWarning> warnings;
  ASSERT_TRUE(mysql::CheckReplicationSettings(info, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, mysql::ReplicationWarning::Kind::kRowMetadata);
  EXPECT_TRUE(Contains(warnings[0].text, "binlog_row_metadata is MINIMAL")) << warnings[0].text;

  auto current_file = [&] {
    mysql::MasterStatus st;
    Status s = conn.ShowMasterStatus(&st);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return sandbox.binlog_dir() + "/" + st.file;
  };
  ASSERT_TRUE(sandbox.Sql("CREATE DATABASE m; CREATE TABLE m.t (id INT UNSIGNED PRIMARY KEY, name VARCHAR(20),"
                          " kind ENUM('small','large'), amount DECIMAL(8,2)); FLUSH BINARY LOGS;"))
      << sandbox.error();
  const std::string before_alter = current_file();
  ASSERT_TRUE(sandbox.Sql("INSERT INTO m.t VALUES (4294967295, 'first', 'large', 12.50), (2, NULL, 'small', 0);"
                          " FLUSH BINARY LOGS;"))
      << sandbox.error();

  // Without a provider a MINIMAL binlog only has positions.
  Decoded d = DecodeTable(before_alter, nullptr, "m", "t");
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.table_maps.size(), 1u);
  EXPECT_EQ(d.table_maps[0], (std::vector<std::string>{"@1", "@2", "@3", "@4"}));

  InformationSchemaProvider provider(&conn);
  d = DecodeTable(before_alter, &provider, "m", "t");
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.table_maps.size(), 1u);
  EXPECT_EQ(d.table_maps[0], (std::vector<std::string>{"id", "name", "kind", "amount"}));
  // mysqlType is information_schema's COLUMN_TYPE, as SHOW CREATE TABLE prints it.
  EXPECT_EQ(d.mysql_types[0],
            (std::vector<std::string>{"int(10) unsigned", "varchar(20)", "enum('small','large')", "decimal(8,2)"}));
  ASSERT_EQ(d.rows.size(), 2u);
  // Unsignedness and ENUM labels came from information_schema too.
  EXPECT_EQ(d.rows[0], "id=4294967295;name=first;kind=large;amount=12.50;");
  EXPECT_EQ(d.rows[1], "id=2;name=NULL;kind=small;amount=0.00;");

  // DDL the provider is not told about: its cached schema has one column too few.
  ASSERT_TRUE(sandbox.Sql("ALTER TABLE m.t ADD COLUMN extra INT; FLUSH BINARY LOGS;")) << sandbox.error();
  const std::string after_alter = current_file();
  ASSERT_TRUE(sandbox.Sql("INSERT INTO m.t VALUES (3, 'third', 'small', 1.00, 77); FLUSH BINARY LOGS;"))
      << sandbox.error();
  const uint64_t queries = provider.queries();
  d = DecodeTable(after_alter, &provider, "m", "t");
  EXPECT_EQ(provider.queries(), queries);  // served from the cache
  ASSERT_FALSE(d.status.ok());
  EXPECT_TRUE(Contains(d.status.message(), "`m`.`t` has 4 columns but the binlog's TABLE_MAP has 5")) << d.status.ToString();
  EXPECT_TRUE(Contains(d.status.message(), "refusing to label values with the wrong columns"));
  EXPECT_TRUE(d.rows.empty());  // nothing was emitted with wrong labels

  provider.Invalidate("m", "t");
  d = DecodeTable(after_alter, &provider, "m", "t");
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0], "id=3;name=third;kind=small;amount=1.00;extra=77;");

  // The old binlog against today's schema is refused too, never relabelled.
  d = DecodeTable(before_alter, &provider, "m", "t");
  EXPECT_TRUE(d.status.IsCorruption()) << d.status.ToString();
  EXPECT_TRUE(d.rows.empty());

  // A type change with the same column count is caught by the type check.
  ASSERT_TRUE(sandbox.Sql("CREATE TABLE m.u (a TINYINT, b VARCHAR(5)); FLUSH BINARY LOGS;")) << sandbox.error();
  const std::string before_modify = current_file();
  ASSERT_TRUE(sandbox.Sql("INSERT INTO m.u VALUES (1, 'x'); FLUSH BINARY LOGS; ALTER TABLE m.u MODIFY a INT;"))
      << sandbox.error();
  d = DecodeTable(before_modify, &provider, "m", "u");
  EXPECT_TRUE(d.status.IsCorruption()) << d.status.ToString();
  EXPECT_TRUE(Contains(d.status.message(), "column 1 `a` is int but the binlog's TABLE_MAP has type TINY"))
      << d.status.ToString();
  EXPECT_TRUE(d.rows.empty());
}

TEST(QueryConnectionLiveSettings, RestartKeepsDataAndCanChangeTheBinlogFormat) {
  if (!MariadbSandbox::Available()) GTEST_SKIP() << MariadbSandbox::SkipReason();
  SandboxOptions o;
  o.port = kSecondPort;
  MariadbSandbox sandbox(o);
  ASSERT_TRUE(sandbox.StartFresh()) << sandbox.error();
  ASSERT_TRUE(sandbox.Sql("CREATE DATABASE r; CREATE TABLE r.t (a INT); INSERT INTO r.t VALUES (1);"));
  ASSERT_TRUE(sandbox.Kill9()) << sandbox.error();
  ASSERT_TRUE(sandbox.Start()) << sandbox.error();  // crash recovery
  EXPECT_EQ(sandbox.SqlValue("SELECT COUNT(*) FROM r.t"), "1");
  MariadbSandbox mixed([&] {
    SandboxOptions m = o;
    m.binlog_format = "STATEMENT";
    return m;
  }());
  ASSERT_TRUE(mixed.Restart()) << mixed.error();
  EXPECT_EQ(mixed.SqlValue("SELECT @@GLOBAL.binlog_format"), "STATEMENT");
  EXPECT_EQ(mixed.SqlValue("SELECT COUNT(*) FROM r.t"), "1");
}

}  // namespace
}  // namespace canal::testing
