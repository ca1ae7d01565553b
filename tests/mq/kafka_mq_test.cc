// canal-server in Kafka mode against librdkafka's mock cluster (3 brokers,
// in this process, so it outlives the server), read back with a librdkafka
// consumer: the workload arrives once per key, in binlog order, in the
// partition Canal's hash names, in flat and protobuf form, with dynamic
// topics; injected broker errors and an outage delay but lose nothing; kill -9
// of canal-server mid-stream loses nothing. TCP subscriptions are refused.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "canal/client/connector.h"
#include "canal/mq/routing.h"
#include "mq/kafka_mock.h"
#include "mq/mq_fixture.h"
#include "mq/mq_workload.h"
#include "support/canal_install.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;
using canal::testing::CanalInstall;
using canal::testing::TestPort;
using testing::Change;
using testing::KafkaMock;
using testing::KafkaRecord;
using Records = std::map<int32_t, std::vector<KafkaRecord>>;

// Ports 14200-14299 belong to the MQ tests.
constexpr uint16_t kSandboxPort = TestPort("mq", 1);
constexpr uint16_t kWorkloadFlatPort = TestPort("mq", 10);
constexpr uint16_t kWorkloadProtobufPort = TestPort("mq", 11);
constexpr uint16_t kErrorsPort = TestPort("mq", 12);
constexpr uint16_t kKillPort = TestPort("mq", 13);
constexpr uint16_t kRefusePort = TestPort("mq", 14);
constexpr uint16_t kTooLargePort = TestPort("mq", 15);
constexpr uint16_t kBadConfigPort = TestPort("mq", 16);
constexpr uint16_t kMissingTopicPort = TestPort("mq", 17);
constexpr uint16_t kOwnClusterPort = TestPort("mq", 18);

class KafkaMq : public canal::testing::ServerSuite<kSandboxPort> {
 protected:
  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    mock_ = std::make_unique<KafkaMock>(3);
    ASSERT_TRUE(mock_->ok()) << mock_->error();
    install_ = std::make_unique<CanalInstall>(
        "kafka-mq-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()), kSandboxPort);
  }
  void TearDown() override {
    install_.reset();  // the server goes before the brokers
    mock_.reset();
  }

  std::string ServerProperties(uint16_t port, bool flat, const std::string& extra = "") const {
    return CanalInstall::ServerProperties(
        port, "canal.serverMode = kafka\nkafka.bootstrap.servers = " + mock_->bootstraps() +
                  "\ncanal.mq.flatMessage = " + (flat ? "true" : "false") +
                  "\nkafka.linger.ms = 5\nkafka.log_level = 3\n" + extra);
  }

  ::testing::AssertionResult Startup() const { return testing::StartServer(*install_); }
  std::string Logs() const { return testing::ServerLogs(*install_); }

  // Reads `topic` until its messages carry `rows` changes (or 60 s pass).
  std::vector<Change> ReadChanges(const std::string& topic, int partitions, size_t rows, bool flat,
                                  std::chrono::milliseconds limit = 60s) {
    std::vector<Change> changes;
    std::string error;
    auto parse = [&](const Records& records) {
      changes.clear();
      for (const auto& [p, rs] : records) {
        for (const auto& r : rs) {
          if (!testing::ParseChanges(r.payload, flat, p, &changes, &error)) return false;
        }
      }
      return true;
    };
    mock_->ReadAll(topic, partitions, limit, [&](const Records& records) {
      return !parse(records) || changes.size() >= rows;
    });
    EXPECT_EQ(error, "");
    return changes;
  }

  void CheckWorkload(const std::vector<Change>& changes, int user_partitions, int order_partitions, bool flat) {
    testing::CheckWorkload(changes, flat, [&](const Change& c) {
      const int n = c.table == "users" ? user_partitions : order_partitions;
      return JavaPartition(JavaStringHash("mqdb") ^ JavaStringHash(c.key), n);
    });
  }

  // Reads the one partition of `topic` until every load row came (or 120 s
  // pass), judges it (JudgeStream) and returns the rows in arrival order.
  std::vector<int64_t> ReadLoadStream(const std::string& topic, int txns, int rows_per_txn, int64_t* duplicates) {
    const int64_t expected = int64_t{txns} * rows_per_txn;
    std::vector<int64_t> rows;
    std::string error;
    mock_->ReadAll(topic, 1, 120s, [&](const Records& r) {
      if (CountRecords(r) < static_cast<size_t>(txns)) return false;  // one message per transaction at least
      rows.clear();
      for (const auto& rec : r.at(0)) {
        if (!testing::ParseLoadRows(rec.payload, true, rows_per_txn, &rows, &error)) return true;
      }
      return testing::JudgeStream(rows, expected, duplicates).empty();
    });
    EXPECT_EQ(error, "");
    EXPECT_EQ(testing::JudgeStream(rows, expected, duplicates), "");
    return rows;
  }

  std::unique_ptr<KafkaMock> mock_;
  std::unique_ptr<CanalInstall> install_;
};

// Flat messages, default topic with pk hashing over 3 partitions, the orders
// table to its own topic by dynamicTopic with 2 partitions.
TEST_F(KafkaMq, WorkloadFlatWithDynamicTopicAndPartitionHash) {
  ASSERT_TRUE(Sql(testing::WorkloadSetupSql()));
  ASSERT_TRUE(mock_->CreateTopic("mq_users", 3));
  ASSERT_TRUE(mock_->CreateTopic("mq_orders", 2));
  install_->WriteServerProperties(ServerProperties(kWorkloadFlatPort, true));
  install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                         "canal.instance.filter.regex = mqdb\\\\..*\n"
                                         "canal.mq.topic = mq_users\n"
                                         "canal.mq.dynamicTopic = mq_orders:mqdb\\\\.orders\n"
                                         "canal.mq.partitionsNum = 3\n"
                                         "canal.mq.partitionHash = mqdb.users:id,.*\\\\..*:$pk$\n"
                                         "canal.mq.dynamicTopicPartitionNum = mq_orders:2\n");
  ASSERT_TRUE(Startup());
  ASSERT_TRUE(sandbox_->Sql(testing::WorkloadSql())) << sandbox_->error();

  std::vector<Change> users = ReadChanges("mq_users", 3, testing::ExpectedRowChanges() - 3, true);
  std::vector<Change> orders = ReadChanges("mq_orders", 2, 3, true);
  std::vector<Change> all = users;
  all.insert(all.end(), orders.begin(), orders.end());
  for (const Change& c : orders) EXPECT_EQ(c.table, "orders");
  CheckWorkload(all, 3, 2, true);
  // Nothing more may come.
  EXPECT_EQ(ReadChanges("mq_users", 3, users.size() + 1, true, 3s).size(), users.size());
  EXPECT_EQ(install_->Stop(), 0);
  EXPECT_NE(Logs().find("MQ publishing: batches of 50, default topic mq_users, flat JSON"), std::string::npos);
}

// The protobuf form: Canal's Packet{MESSAGES}, rows split into one entry
// each by the pk hash; the key's changes still in order in one partition.
TEST_F(KafkaMq, WorkloadProtobufWithPartitionHash) {
  ASSERT_TRUE(Sql(testing::WorkloadSetupSql()));
  ASSERT_TRUE(mock_->CreateTopic("mq_pb", 4));
  install_->WriteServerProperties(ServerProperties(kWorkloadProtobufPort, false));
  install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                         "canal.instance.filter.regex = mqdb\\\\..*\n"
                                         "canal.mq.topic = mq_pb\n"
                                         "canal.mq.partitionsNum = 4\n"
                                         "canal.mq.partitionHash = .*\\\\..*:$pk$\n");
  ASSERT_TRUE(Startup());
  ASSERT_TRUE(sandbox_->Sql(testing::WorkloadSql())) << sandbox_->error();
  std::vector<Change> changes = ReadChanges("mq_pb", 4, testing::ExpectedRowChanges(), false);
  CheckWorkload(changes, 4, 4, false);
  EXPECT_EQ(install_->Stop(), 0);
}

// A TCP client is refused with a message naming the mode.
TEST_F(KafkaMq, TcpSubscriptionIsRefused) {
  ASSERT_TRUE(mock_->CreateTopic("mq_refuse", 1));
  install_->WriteServerProperties(ServerProperties(kRefusePort, true, "canal.mq.typo = 1\n"));
  install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) + "canal.mq.topic = mq_refuse\n");
  ASSERT_TRUE(Startup());
  canal::client::ConnectorOptions o;
  o.address = "127.0.0.1:" + std::to_string(kRefusePort);
  o.destination = "example";
  o.connect_timeout = 2s;
  o.read_timeout = 10s;
  canal::client::Connector c(o);
  Status s;
  ASSERT_TRUE(canal::testing::WaitFor(
      [&] {
        c.Disconnect();
        s = c.Connect();
        if (s.ok()) s = c.Subscribe();
        return !s.ok() && s.ToString().find("TCP subscriptions are refused") != std::string::npos;
      },
      20s))
      << s.ToString();
  EXPECT_NE(s.ToString().find("canal.serverMode = kafka"), std::string::npos) << s.ToString();
  EXPECT_NE(Logs().find("unknown key canal.mq.typo"), std::string::npos) << Logs();
}

// MQ settings that cannot work stop start-up with exit code 2 and a message
// naming the key, as every configuration error does.
TEST_F(KafkaMq, BadSettingsStopStartUp) {
  struct Case {
    std::string server_extra, instance_extra, expect;
  } cases[] = {
      {"kafka.no.such.setting = 1\n", "canal.mq.topic = t\n", "no.such.setting"},
      {"canal.mq.canalBatchSize = none\n", "canal.mq.topic = t\n", "canal.mq.canalBatchSize = none"},
      {"", "", "needs canal.mq.topic"},
      {"", "canal.mq.topic = t\ncanal.mq.partitionHash = db.t:^\n", "names no column"},
      {"", "canal.mq.topic = t\ncanal.mq.dynamicTopic = x:db\\\\.(\n", "canal.mq.dynamicTopic"},
  };
  for (const Case& c : cases) {
    install_->WriteServerProperties(ServerProperties(kBadConfigPort, true, c.server_extra));
    install_->WriteInstance("example", c.instance_extra);
    int rc = -1;
    const std::string out = canal::testing::RunShell(install_->ServerCommand(), &rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find(c.expect), std::string::npos) << c.expect << "\n" << out;
  }
  // kafka mode without brokers.
  install_->WriteServerProperties(CanalInstall::ServerProperties(kBadConfigPort, "canal.serverMode = kafka\n"));
  install_->WriteInstance("example", "canal.mq.topic = t\n");
  int rc = -1;
  const std::string out = canal::testing::RunShell(install_->ServerCommand(), &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("needs kafka.bootstrap.servers"), std::string::npos) << out;
}

// A message larger than Kafka accepts stops the destination with the table
// and position; nothing after it is published (so nothing is skipped).
TEST_F(KafkaMq, MessageTooLargeStopsTheDestination) {
  ASSERT_TRUE(mock_->CreateTopic("mq_big", 1));
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS mq_big; DROP TABLE IF EXISTS mq_big.t; "
                  "CREATE TABLE mq_big.t (id INT PRIMARY KEY, v TEXT)"));
  install_->WriteServerProperties(ServerProperties(kTooLargePort, true, "kafka.max.request.size = 1000\n"));
  install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                         "canal.instance.filter.regex = mq_big\\\\..*\ncanal.mq.topic = mq_big\n");
  ASSERT_TRUE(Startup());
  ASSERT_TRUE(Sql("INSERT INTO mq_big.t VALUES (1, REPEAT('x', 3000))"));
  ASSERT_TRUE(Sql("INSERT INTO mq_big.t VALUES (2, 'small')"));
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find("MQ publishing stopped") != std::string::npos; }, 30s));
  const std::string logs = Logs();
  EXPECT_NE(logs.find("larger than Kafka accepts"), std::string::npos) << logs;
  EXPECT_NE(logs.find("mq_big.t at mariadb-bin."), std::string::npos) << logs;
  EXPECT_NE(logs.find("kafka.max.request.size"), std::string::npos) << logs;
  const Records after = mock_->ReadAll("mq_big", 1, 2s, [](const Records&) { return false; });
  EXPECT_EQ(CountRecords(after), 0u);  // the small row behind it waits too
  EXPECT_EQ(install_->Stop(), 0);
}

// Two destinations of one server, one with its own kafka.bootstrap.servers (and producer
// settings) in its instance.properties: each publishes to its own cluster only.
TEST_F(KafkaMq, ADestinationPublishesToItsOwnKafkaCluster) {
  KafkaMock other(1);
  ASSERT_TRUE(other.ok()) << other.error();
  for (KafkaMock* m : {mock_.get(), &other}) {
    ASSERT_TRUE(m->CreateTopic("mq_own_a", 1));
    ASSERT_TRUE(m->CreateTopic("mq_own_b", 1));
  }
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS mq_own; DROP TABLE IF EXISTS mq_own.a; DROP TABLE IF EXISTS mq_own.b; "
                  "CREATE TABLE mq_own.a (id INT PRIMARY KEY); CREATE TABLE mq_own.b (id INT PRIMARY KEY)"));
  install_->WriteServerProperties(ServerProperties(kOwnClusterPort, true, "canal.destinations = example,orders\n"));
  const std::string start = canal::testing::StartAtPrimaryEnd(*sandbox_);
  install_->WriteInstance("example", start + "canal.instance.filter.regex = mq_own\\\\.a\ncanal.mq.topic = mq_own_a\n");
  install_->WriteInstance("orders", start + "canal.instance.filter.regex = mq_own\\\\.b\ncanal.mq.topic = mq_own_b\n"
                                    "kafka.bootstrap.servers = " + other.bootstraps() +
                                    "\nkafka.linger.ms = 1\nkafka.compression.type = lz4\n");
  ASSERT_TRUE(Startup());
  ASSERT_TRUE(Sql("INSERT INTO mq_own.a VALUES (1), (2); INSERT INTO mq_own.b VALUES (10), (20), (30)"));
  const auto rows_in = [](const KafkaMock& m, const std::string& topic, size_t want) {
    std::vector<int64_t> ids;
    m.ReadAll(topic, 1, want == 0 ? 2s : 30s, [&](const Records& r) {
      ids.clear();
      for (const auto& [p, rs] : r) {
        for (const KafkaRecord& rec : rs) {
          const nlohmann::json doc = nlohmann::json::parse(rec.payload, nullptr, false);
          for (const auto& row : doc.value("data", nlohmann::json::array())) {
            ids.push_back(std::stoll(row.value("id", "-1")));
          }
        }
      }
      return want > 0 && ids.size() >= want;
    });
    return ids;
  };
  EXPECT_EQ(rows_in(*mock_, "mq_own_a", 2), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(rows_in(other, "mq_own_b", 3), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_TRUE(rows_in(other, "mq_own_a", 0).empty()) << "example stays on canal.properties' cluster";
  EXPECT_TRUE(rows_in(*mock_, "mq_own_b", 0).empty()) << "orders publishes only to its own";
  const std::string orders_log = canal::testing::ReadAll(install_->instance_log("orders"));
  EXPECT_NE(orders_log.find("publishes with its own Kafka settings"), std::string::npos) << orders_log;
  EXPECT_NE(orders_log.find(other.bootstraps()), std::string::npos) << orders_log;
  EXPECT_EQ(install_->Stop(), 0);
}

// A topic that does not exist (on a cluster that creates none), or one this client may not
// write: the destination's publishing stops at the first message with the topic and the fix
// (not after librdkafka's timeouts), and nothing is acked. The mock answers the topic's
// metadata with the broker's error.
TEST_F(KafkaMq, AMissingOrForbiddenTopicStopsTheDestinationAtOnceNamingTheFix) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS mq_gone; DROP TABLE IF EXISTS mq_gone.t; "
                  "CREATE TABLE mq_gone.t (id INT PRIMARY KEY)"));
  struct Case {
    const char* topic;
    int error;
    const char* says;
    const char* fix;
  };
  const Case cases[] = {
      {"no_such_topic", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "topic no_such_topic does not exist",
       "kafka-topics.sh --create --topic no_such_topic"},
      {"not_ours", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, "does not let this client write topic not_ours",
       "grant it WRITE and DESCRIBE"},
  };
  int id = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.topic);
    mock_->SetTopicError(c.topic, c.error);
    install_->WriteServerProperties(ServerProperties(kMissingTopicPort, true));
    install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                           "canal.instance.filter.regex = mq_gone\\\\..*\ncanal.mq.topic = " +
                                           c.topic + "\n");
    ASSERT_TRUE(Startup());
    ASSERT_TRUE(Sql("INSERT INTO mq_gone.t VALUES (" + std::to_string(++id) + ")"));
    const auto inserted = std::chrono::steady_clock::now();
    EXPECT_TRUE(
        canal::testing::WaitFor([&] { return Logs().find("MQ publishing stopped") != std::string::npos; }, 30s));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - inserted).count();
    EXPECT_LT(seconds, 10.0) << "found by asking, not by a timeout";
    const std::string logs = Logs();
    EXPECT_NE(logs.find(c.says), std::string::npos) << logs;
    EXPECT_NE(logs.find(c.fix), std::string::npos) << logs;
    EXPECT_NE(logs.find("mq_gone.t at mariadb-bin."), std::string::npos) << logs;
    EXPECT_EQ(install_->Stop(), 0);
    std::error_code ec;  // the next case's wait starts from empty logs
    std::filesystem::remove(install_->server_log(), ec);
    std::filesystem::remove(install_->instance_log("example"), ec);
  }
}

// Produce requests failing (retriable errors, then a disconnect) and all
// brokers down for longer than a message may wait: delayed, republished,
// never lost; the republished messages are counted in the log.
TEST_F(KafkaMq, BrokerErrorsAndOutageDelayButLoseNothing) {
  constexpr int kTxns = 300, kRowsPerTxn = 10;
  const std::string table = "mq_err.t";
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql(table)));
  ASSERT_TRUE(mock_->CreateTopic("mq_err", 1));
  install_->WriteServerProperties(
      ServerProperties(kErrorsPort, true, "kafka.message.timeout.ms = 1500\nkafka.retry.backoff.ms = 50\n"));
  install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                         "canal.instance.filter.regex = mq_err\\\\..*\ncanal.mq.topic = mq_err\n");
  ASSERT_TRUE(Startup());
  const std::string sql = sandbox_->dir() + "/mq-err.sql";
  canal::testing::WriteLoadSql(sql, table, 1, kTxns / 2, kRowsPerTxn);
  mock_->FailProduceRequests(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, 5);
  mock_->FailProduceRequests(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, 3);
  ASSERT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error();
  mock_->SetBrokersDown(true);
  canal::testing::WriteLoadSql(sql, table, kTxns / 2 + 1, kTxns, kRowsPerTxn);
  ASSERT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error();
  // Down for longer than kafka.message.timeout.ms: the publisher must give
  // the batch up and publish it again.
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find("will be published again") != std::string::npos; },
                                      30s))
      << Logs();
  mock_->SetBrokersDown(false);

  int64_t duplicates = 0;
  const std::vector<int64_t> rows = ReadLoadStream("mq_err", kTxns, kRowsPerTxn, &duplicates);
  std::printf("[ figures ] broker errors + outage: %lld rows, %lld duplicates (republished)\n",
              static_cast<long long>(rows.size()), static_cast<long long>(duplicates));
  EXPECT_EQ(install_->Stop(), 0);
  EXPECT_NE(Logs().find("republished"), std::string::npos);
}

// kill -9 of canal-server twice while rows stream: restarted, it resumes from
// the cursor the broker confirmed; every row arrives, first arrivals in
// binlog order; the only repeats are batches not confirmed before a kill.
// The broker answers slowly, so batches are in flight at each kill, and the
// writer holds a third of the rows back until each kill, so the topic is
// provably incomplete when the server dies.
TEST_F(KafkaMq, KillNineMidStreamLosesNothing) {
  constexpr int kTxns = 1500, kRowsPerTxn = 20, kChunks = 3;
  const std::string table = "mq_kill.t";
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql(table)));
  ASSERT_TRUE(mock_->CreateTopic("mq_kill", 1));
  mock_->SlowProduceRequests(50, 400);
  // Small batches: with several in flight (publisher.h) a chunk still takes many round trips,
  // so each kill lands while batches wait for the broker.
  install_->WriteServerProperties(ServerProperties(kKillPort, true, "canal.mq.canalBatchSize = 4\n"));
  install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                         "canal.instance.filter.regex = mq_kill\\\\..*\ncanal.mq.topic = mq_kill\n");
  const std::vector<std::string> chunks =
      canal::testing::WriteLoadChunks(sandbox_->dir() + "/mq-kill-", table, kTxns, kRowsPerTxn, kChunks);
  ASSERT_TRUE(Startup());
  const auto messages = [&](std::chrono::milliseconds limit) {
    return CountRecords(mock_->ReadAll("mq_kill", 1, limit, [](const Records&) { return false; }));
  };
  int kills = 0, mid_stream = 0;
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    ASSERT_TRUE(sandbox_->SqlFile(chunks[chunk])) << sandbox_->error();
    if (chunk == kChunks - 1) break;
    // Once part of this chunk is in the topic (one message per transaction).
    const size_t target = static_cast<size_t>(kTxns / kChunks * chunk + kTxns / kChunks / 4);
    mock_->ReadAll("mq_kill", 1, 60s, [&](const Records& r) { return CountRecords(r) >= target; });
    if (install_->Kill9()) ++kills;
    // The server is gone: what the topic holds now is all it published.
    if (messages(2s) < static_cast<size_t>(kTxns / kChunks * (chunk + 1))) ++mid_stream;
    ASSERT_TRUE(Startup());
  }
  int64_t duplicates = 0;
  const std::vector<int64_t> rows = ReadLoadStream("mq_kill", kTxns, kRowsPerTxn, &duplicates);
  EXPECT_EQ(kills, 2);
  EXPECT_EQ(mid_stream, 2);
  // At most the batches in flight at each kill: far fewer than a restart
  // from scratch would give.
  EXPECT_LT(duplicates, int64_t{kTxns} * kRowsPerTxn / 4);
  std::printf("[ figures ] kill -9 x%d: %zu rows received, %lld duplicates\n", kills, rows.size(),
              static_cast<long long>(duplicates));
  EXPECT_EQ(install_->Stop(), 0);
}

}  // namespace
}  // namespace canal::mq
