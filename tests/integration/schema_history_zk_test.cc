// The schema history in ZooKeeper: a history bigger than
// ZooKeeper's 1 MiB node limit round-trips in chunks, and a standby that takes
// over at a cursor before a DDL, with no local files, decodes the rows before
// and after the DDL with the right names from what the active one stored, at
// the parser and with two canal-server processes. MINIMAL MariaDB on port
// 14604, ZooKeeper on 14603, servers on 14607 and 14608.
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/cluster_connector.h"
#include "canal/coord/zk_client.h"
#include "canal/meta/zk_history_store.h"
#include "canal/parser/event_parser.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/row_lines.h"
#include "support/sandbox_parser.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kZkPort = TestPort("schema_history", 2);
constexpr uint16_t kDbPort = TestPort("schema_history", 3);
constexpr uint16_t kServerPorts[2] = {TestPort("schema_history", 6), TestPort("schema_history", 7)};
constexpr const char* kRunningPath = "/otter/canal/destinations/example/running";

class SchemaHistoryZk : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = StartMinimalSuiteSandbox(kDbPort, &db_error_);
    zk_sandbox_ = StartSuiteZk(kZkPort, &zk_error_);
  }
  static void TearDownTestSuite() {
    zk_sandbox_.reset();
    db_.reset();
  }
  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(db_, db_error_);
    CANAL_REQUIRE_ZK(zk_sandbox_, zk_error_);
    coord::ZkOptions o;
    o.servers = zk_sandbox_->servers();
    ASSERT_TRUE(coord::ZkClient::Create(o, &zk_).ok());
    Status s = zk_->WaitConnected(10s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE((s = zk_->Delete("/otter", /*recursive=*/true)).ok()) << s.ToString();
  }
  void TearDown() override {
    installs_[0].reset();
    installs_[1].reset();
    if (zk_) zk_->Close();
  }
  std::string Running() const {
    std::string body;
    return zk_->Get(kRunningPath, &body).ok() ? body : "";
  }

  static std::pair<std::string, uint64_t> MasterStatus() {
    std::pair<std::string, uint64_t> end{"", 4};
    EXPECT_TRUE(PrimaryEnd(*db_, &end.first, &end.second)) << db_->error();
    return end;
  }

  static inline std::unique_ptr<MariadbSandbox> db_;
  static inline std::unique_ptr<ZkSandbox> zk_sandbox_;
  static inline std::string db_error_, zk_error_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<CanalInstall> installs_[2];
};

TEST_F(SchemaHistoryZk, AHistoryOverOneMebibyteRoundTripsInChunks) {
  schema::SchemaHistory h;
  for (int t = 0; t < 300; ++t) {
    std::string sql = "CREATE TABLE t" + std::to_string(t) + " (id INT PRIMARY KEY";
    for (int c = 0; c < 60; ++c) sql += ", column_with_a_long_name_" + std::to_string(c) + " VARCHAR(20)";
    ASSERT_TRUE(h.ApplySql(sql + ")", "big").ok());
  }
  schema::HistoryLog log;
  log.SetSnapshot({"mariadb-bin.000001", 4}, h);
  ASSERT_GT(log.ToJson().size(), 1024u * 1024);  // over ZooKeeper's node limit
  meta::ZkHistoryStore store(zk_.get(), "big");
  schema::HistoryLog back;
  EXPECT_TRUE(store.Load(&back).IsNotFound());
  ASSERT_TRUE(store.Save(log).ok());
  schema::HistoryRecord r;
  r.at.file = "mariadb-bin.000001";
  r.at.position = 9;
  r.db = "big";
  r.sql = "ALTER TABLE t1 ADD x INT";
  ASSERT_TRUE(log.Append(r));
  ASSERT_TRUE(store.Save(log).ok());  // the second generation replaces the first
  Status s = store.Load(&back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(back.tables.size(), 300u);
  EXPECT_EQ(back.records.size(), 1u);
  std::vector<std::string> chunks;
  ASSERT_TRUE(zk_->Children(meta::ZkHistoryStore::HeadPath("big"), &chunks).ok());
  for (const auto& c : chunks) EXPECT_EQ(c.rfind("g2-", 0), 0u) << c;  // the first generation is gone
  EXPECT_GE(chunks.size(), 3u);
  // A fenced store refuses to write.
  meta::ZkHistoryStore fenced(zk_.get(), "big", [](const std::string&) { return Status::Aborted("not active"); });
  EXPECT_EQ(fenced.Save(log).code(), Status::Code::kAborted);
  // A damaged head is an error naming the node, never an empty history.
  ASSERT_TRUE(zk_->SetOrCreate(meta::ZkHistoryStore::HeadPath("big"), "{").ok());
  s = store.Load(&back);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.ToString().find("schema_history"), std::string::npos) << s.ToString();
}

// The active server runs past an ALTER and dies; the standby (no local files)
// takes over at a cursor before the ALTER and names every row right.
TEST_F(SchemaHistoryZk, AStandbyBehindADdlDecodesWithTheActivesHistory) {
  ASSERT_TRUE(db_->Sql("DROP DATABASE IF EXISTS fo; CREATE DATABASE fo; USE fo;"
                       "CREATE TABLE t (id INT PRIMARY KEY, x INT, c INT)"))
      << db_->error();
  const std::string base = std::string(CANAL_BINARY_DIR) + "/test-sandboxes/schema-history-zk";
  std::filesystem::remove_all(base);
  auto options = [&](const std::string& server) {
    parser::EventParserOptions o = SandboxParserOptions("fo", kDbPort);
    o.schema_history_file = base + "/" + server + "/schema_history.json";  // never written: ZooKeeper is
    o.schema_history_store = std::make_shared<meta::ZkHistoryStore>(zk_.get(), "fo");
    o.schema_scope = [](std::string_view db, std::string_view) { return db == "fo"; };
    return o;
  };
  parser::EventParserOptions active = options("active");
  std::tie(active.start.journal_name, active.start.position) = MasterStatus();
  const auto cursor = active.start;  // where the clients' cursor stays
  {
    RowLines rec;
    parser::EventParser p(active, &rec);
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming" || !p.running(); }, 30s));
    ASSERT_TRUE(db_->Sql("USE fo; INSERT INTO t (id, x, c) VALUES (1, 100, 1000);"
                         "ALTER TABLE t MODIFY c INT AFTER id; INSERT INTO t (id, x, c) VALUES (2, 200, 2000)"))
        << db_->error();
    WaitFor([&] { return rec.size() >= 2 || !p.running(); }, 60s);
    p.Stop();  // the active server dies here
    ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
    ASSERT_EQ(rec.size(), 2u);
  }
  EXPECT_FALSE(std::filesystem::exists(active.schema_history_file));
  parser::EventParserOptions standby = options("standby");
  standby.start = cursor;
  RowLines rec;
  parser::EventParser p(standby, &rec);
  p.Start();
  WaitFor([&] { return rec.size() >= 2 || !p.running(); }, 60s);
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  EXPECT_EQ(rec.rows, (std::vector<std::string>{"fo.t INSERT after: id=1 x=100 c=1000",
                                                 "fo.t INSERT after: id=2 c=2000 x=200"}));
}

// Two real canal-server processes: the active one reads past an ALTER that
// swaps two columns while the client has acked nothing, then dies (SIGKILL);
// the standby takes over at the client's cursor, before the ALTER, and the
// client receives the rows before and after it with their write-time names.
TEST_F(SchemaHistoryZk, TwoServersTheStandbyBehindADdlDeliversTheRightNames) {
  ASSERT_TRUE(std::filesystem::exists(CanalInstall::ServerProgram())) << "build the canal-server target first";
  ASSERT_TRUE(db_->Sql("DROP DATABASE IF EXISTS fo2; CREATE DATABASE fo2; USE fo2;"
                       "CREATE TABLE t (id INT PRIMARY KEY, x INT, c INT)"))
      << db_->error();
  const std::string start = StartAtPrimaryEnd(*db_);
  for (int i = 0; i < 2; ++i) {
    installs_[i] = std::make_unique<CanalInstall>("schema-failover-" + std::string(1, "ab"[i]), kDbPort);
    installs_[i]->WriteServerProperties(CanalInstall::ServerProperties(
        kServerPorts[i], "canal.zkServers = " + zk_sandbox_->servers() + "\ncanal.zookeeper.session.timeout = 6000\n"));
    installs_[i]->WriteInstance("example", start + "canal.instance.filter.regex = fo2\\\\.t\n");
  }
  std::string out;
  ASSERT_EQ(installs_[0]->Startup(&out), 0) << out;
  ASSERT_TRUE(WaitFor([&] { return Running().find(std::to_string(kServerPorts[0])) != std::string::npos; }, 20s))
      << ReadAll(installs_[0]->server_log());
  ASSERT_EQ(installs_[1]->Startup(&out), 0) << out;

  // The client subscribes (its cursor: the start, before everything below) and acks nothing.
  client::ClusterConnectorOptions co;
  co.zk_servers = zk_sandbox_->servers();
  co.destination = "example";
  co.connect_timeout = 1s;
  co.read_timeout = 2s;
  co.retry.max_attempts = 200;
  co.retry.initial_backoff = 100ms;
  co.retry.max_backoff = 500ms;
  co.retry.give_up_after = 60s;
  client::ClusterConnector c(co);
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());

  ASSERT_TRUE(db_->Sql("USE fo2; INSERT INTO t (id, x, c) VALUES (1, 100, 1000);"
                       "ALTER TABLE t MODIFY c INT AFTER id; INSERT INTO t (id, x, c) VALUES (2, 200, 2000)"))
      << db_->error();
  // The active server has read past the ALTER: it stored it in ZooKeeper.
  ASSERT_TRUE(WaitFor([&] {
    meta::ZkHistoryStore store(zk_.get(), "example");
    schema::HistoryLog log;
    return store.Load(&log).ok() && log.records.size() == 1;
  }, 30s)) << ReadAll(installs_[0]->server_log());
  ASSERT_TRUE(installs_[0]->Kill9());
  ASSERT_TRUE(WaitFor([&] { return Running().find(std::to_string(kServerPorts[1])) != std::string::npos; }, 30s))
      << ReadAll(installs_[1]->server_log());

  std::vector<std::string> rows;
  ASSERT_TRUE(WaitFor([&] {
    client::Message m;
    if (!c.GetWithoutAck(100, 200, client::TimeUnit::kMilliseconds, &m).ok()) return false;
    Status s = ForEachRow(m, [&](const entry::Header&, entry::EventType, const entry::RowData& row) {
      std::string line;
      for (const entry::Column& col : row.aftercolumns()) line += col.name() + "=" + col.value() + " ";
      rows.push_back(line);
    });
    if (s.ok() && m.batch_id() > 0) c.Ack(m.batch_id()).PermitUncheckedError();
    return rows.size() >= 2;
  }, 60s)) << rows.size() << " rows\n" << ReadAll(installs_[1]->server_log());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], "id=1 x=100 c=1000 ");
  EXPECT_EQ(rows[1], "id=2 c=2000 x=200 ");
  c.Disconnect();
}

}  // namespace
}  // namespace canal::testing
