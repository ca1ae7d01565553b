// Failover with the schema history in ZooKeeper (issue 10), two real
// canal-server processes: the active one reads past an ALTER that swaps two
// columns while the client has acked nothing, then dies (SIGKILL); the standby
// takes over at the client's cursor, before the ALTER, and the client receives
// the rows before and after it with the names they were written with.
// MariaDB (binlog_row_metadata=MINIMAL) 14605, ZooKeeper 14606, servers 14607/14608.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/cluster_connector.h"
#include "canal/coord/zk_client.h"
#include "canal/meta/zk_history_store.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kDbPort = 14605, kZkPort = 14606;
constexpr uint16_t kServerPorts[2] = {14607, 14608};
constexpr const char* kRunningPath = "/otter/canal/destinations/example/running";

class SchemaHistoryFailover : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    SandboxOptions o;
    o.port = kDbPort;
    o.binlog_row_metadata = "MINIMAL";
    db_ = StartSuiteSandboxOf<MariadbSandbox>(std::move(o), "MINIMAL sandbox", &db_error_);
    zk_sandbox_ = StartSuiteZk(kZkPort, &zk_error_);
  }
  static void TearDownTestSuite() {
    zk_sandbox_.reset();
    db_.reset();
  }
  void SetUp() override {
    CANAL_REQUIRE_SANDBOX(db_, db_error_);
    CANAL_REQUIRE_ZK(zk_sandbox_, zk_error_);
    ASSERT_TRUE(std::filesystem::exists(CanalInstall::ServerProgram())) << "build canal-server first";
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

  static inline std::unique_ptr<MariadbSandbox> db_;
  static inline std::unique_ptr<ZkSandbox> zk_sandbox_;
  static inline std::string db_error_, zk_error_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<CanalInstall> installs_[2];
};

TEST_F(SchemaHistoryFailover, TheStandbyBehindADdlDeliversTheRightNames) {
  ASSERT_TRUE(db_->Sql("DROP DATABASE IF EXISTS fo; CREATE DATABASE fo; USE fo;"
                       "CREATE TABLE t (id INT PRIMARY KEY, x INT, c INT)"))
      << db_->error();
  const std::string start = StartAtPrimaryEnd(*db_);
  for (int i = 0; i < 2; ++i) {
    installs_[i] = std::make_unique<CanalInstall>("schema-failover-" + std::string(1, "ab"[i]), kDbPort);
    installs_[i]->WriteServerProperties(CanalInstall::ServerProperties(
        kServerPorts[i], "canal.zkServers = " + zk_sandbox_->servers() + "\ncanal.zookeeper.session.timeout = 6000\n"));
    installs_[i]->WriteInstance("example", start + "canal.instance.filter.regex = fo\\\\.t\n");
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

  ASSERT_TRUE(db_->Sql("USE fo; INSERT INTO t (id, x, c) VALUES (1, 100, 1000);"
                       "ALTER TABLE t MODIFY c INT AFTER id; INSERT INTO t (id, x, c) VALUES (2, 200, 2000)"))
      << db_->error();
  // The active server has read past the ALTER: it stored it in ZooKeeper.
  const std::string head = meta::ZkHistoryStore::HeadPath("example");
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
