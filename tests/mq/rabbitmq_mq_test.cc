// canal-server in RabbitMQ mode against a real broker (Debian's
// rabbitmq-server, scripts/rabbitmq-sandbox.sh), read back from the queue:
// the workload arrives once per key in binlog order, in flat and protobuf
// form; stopping and restarting the broker mid-stream, and kill -9 of
// canal-server mid-stream, lose nothing; a message no queue would receive
// stops the destination instead of vanishing.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "mq/mq_fixture.h"
#include "mq/mq_workload.h"
#include "mq/rabbitmq_reader.h"
#include "support/canal_install.h"
#include "support/load_table.h"
#include "support/mariadb_sandbox.h"
#include "support/rabbitmq_sandbox.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;
using canal::testing::CanalInstall;
using canal::testing::RabbitMqSandbox;
using canal::testing::TestPort;
using testing::Change;

// Ports 14200-14299 belong to the MQ tests; the broker takes 14220..14229.
constexpr uint16_t kSandboxPort = TestPort("mq", 2);
constexpr uint16_t kBrokerPort = TestPort("mq", 20);
constexpr uint16_t kFlatPort = TestPort("mq", 30);
constexpr uint16_t kProtobufPort = TestPort("mq", 31);
constexpr uint16_t kRestartPort = TestPort("mq", 32);
constexpr uint16_t kKillPort = TestPort("mq", 33);
constexpr uint16_t kUnroutablePort = TestPort("mq", 34);

class RabbitMq : public canal::testing::ServerSuite<kSandboxPort> {
 protected:
  static void SetUpTestSuite() {
    ServerSuite::SetUpTestSuite();
    if (setup_error_.empty()) broker_ = canal::testing::StartSuiteRabbitMq(kBrokerPort, &setup_error_);
  }
  static void TearDownTestSuite() {
    broker_.reset();
    ServerSuite::TearDownTestSuite();
  }

  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CANAL_REQUIRE_RABBITMQ(broker_, setup_error_);
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    install_ = std::make_unique<CanalInstall>("rabbitmq-mq-" + name_, kSandboxPort);
  }
  void TearDown() override { install_.reset(); }

  // canal.properties publishing to exchange ex.<test>, declared direct, with
  // queue q.<test> bound by routing key rk.<test>.
  std::string ServerProperties(uint16_t port, bool flat) const {
    return CanalInstall::ServerProperties(
        port, "canal.serverMode = rabbitMQ\nrabbitmq.host = 127.0.0.1:" + std::to_string(kBrokerPort) +
                  "\nrabbitmq.virtual.host = /\nrabbitmq.username = guest\nrabbitmq.password = guest\n"
                  "rabbitmq.exchange = ex." + name_ + "\nrabbitmq.deliveryMode = direct\nrabbitmq.queue = " + queue() +
                  "\nrabbitmq.routingKey = " + routing_key() + "\ncanal.mq.flatMessage = " + (flat ? "true" : "false") +
                  "\n");
  }
  std::string queue() const { return "q." + name_; }
  std::string routing_key() const { return "rk." + name_; }

  // The workload through the broker, in the given form.
  void RunWorkload(uint16_t port, bool flat) {
    ASSERT_TRUE(Sql(testing::WorkloadSetupSql()));
    install_->WriteServerProperties(ServerProperties(port, flat));
    install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                           "canal.instance.filter.regex = mqdb\\\\..*\ncanal.mq.topic = " +
                                           routing_key() + "\n");
    ASSERT_TRUE(testing::StartServer(*install_));
    ASSERT_TRUE(sandbox_->Sql(testing::WorkloadSql())) << sandbox_->error();
    std::vector<Change> changes;
    std::string error, parse_error;
    testing::ReadQueue(kBrokerPort, queue(), 60s, [&](const std::vector<std::string>& messages) {
      changes.clear();
      for (const std::string& m : messages) {
        if (!testing::ParseChanges(m, flat, 0, &changes, &parse_error)) return true;
      }
      return changes.size() >= testing::ExpectedRowChanges();
    }, &error);
    EXPECT_EQ(parse_error, "");
    testing::CheckWorkload(changes, flat, [](const Change&) { return 0; });
    EXPECT_EQ(install_->Stop(), 0);
  }

  // Reads the queue until every load row came (or 120 s pass), judges the
  // stream (JudgeStream) and returns the rows in arrival order.
  std::vector<int64_t> ReadLoadStream(int txns, int rows_per_txn, int64_t* duplicates) {
    const int64_t expected = int64_t{txns} * rows_per_txn;
    std::vector<int64_t> rows;
    std::string error, parse_error;
    size_t parsed = 0;  // messages already turned into rows
    testing::ReadQueue(kBrokerPort, queue(), 120s, [&](const std::vector<std::string>& messages) {
      for (; parsed < messages.size(); ++parsed) {
        if (!testing::ParseLoadRows(messages[parsed], true, rows_per_txn, &rows, &parse_error)) return true;
      }
      return messages.size() >= static_cast<size_t>(txns) &&
             testing::JudgeStream(rows, expected, duplicates).empty();
    }, &error);
    EXPECT_EQ(parse_error, "");
    EXPECT_EQ(testing::JudgeStream(rows, expected, duplicates), "");
    return rows;
  }

  // A paced load of `txns` transactions in `chunks` files, 300 ms apart.
  std::jthread PacedWriter(const std::string& table, int txns, int rows_per_txn, int chunks,
                           std::atomic<int>* written) {
    auto files = canal::testing::WriteLoadChunks(sandbox_->dir() + "/" + name_ + "-", table, txns, rows_per_txn,
                                                 chunks);
    return std::jthread([files, written] {
      for (const auto& f : files) {
        if (!sandbox_->SqlFile(f)) ADD_FAILURE() << sandbox_->error();
        ++*written;
        std::this_thread::sleep_for(300ms);
      }
    });
  }

  // Starts the server on a load table `table` published to the test's queue.
  void StartOnLoadTable(uint16_t port, const std::string& table) {
    ASSERT_TRUE(Sql(canal::testing::LoadTableSql(table)));
    install_->WriteServerProperties(ServerProperties(port, true));
    const std::string schema = table.substr(0, table.find('.'));
    install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                           "canal.instance.filter.regex = " + schema +
                                           "\\\\..*\ncanal.mq.topic = " + routing_key() + "\n");
    ASSERT_TRUE(testing::StartServer(*install_));
  }

  static inline std::unique_ptr<RabbitMqSandbox> broker_;
  std::string name_;
  std::unique_ptr<CanalInstall> install_;
};

TEST_F(RabbitMq, WorkloadFlat) { RunWorkload(kFlatPort, true); }

TEST_F(RabbitMq, WorkloadProtobuf) { RunWorkload(kProtobufPort, false); }

// The broker stopped (cleanly) and started again while rows stream: the
// publisher loses its connection, publishes the unconfirmed batch again on a
// new one, and every row arrives; persistent messages in the durable queue
// survive the restart.
TEST_F(RabbitMq, BrokerRestartMidStreamLosesNothing) {
  // 30 chunks 300 ms apart: rows keep coming while the broker is down.
  constexpr int kTxns = 1500, kRowsPerTxn = 10, kChunks = 30;
  ASSERT_NO_FATAL_FAILURE(StartOnLoadTable(kRestartPort, "mq_rr.t"));
  std::atomic<int> written{0};
  std::jthread writer = PacedWriter("mq_rr.t", kTxns, kRowsPerTxn, kChunks, &written);
  ASSERT_TRUE(canal::testing::WaitFor([&] { return written.load() >= 3; }, 60s));
  ASSERT_TRUE(broker_->Stop()) << broker_->error();
  const bool mid_stream = written.load() < kChunks;  // rows were written after the broker went down
  EXPECT_TRUE(canal::testing::WaitFor(
      [&] { return testing::ServerLogs(*install_).find("cannot connect to the broker") != std::string::npos; }, 30s))
      << testing::ServerLogs(*install_);
  std::this_thread::sleep_for(1s);
  ASSERT_TRUE(broker_->Start()) << broker_->error();
  writer.join();
  int64_t duplicates = 0;
  const std::vector<int64_t> rows = ReadLoadStream(kTxns, kRowsPerTxn, &duplicates);
  EXPECT_TRUE(mid_stream);
  std::printf("[ figures ] RabbitMQ restart: %zu rows received, %lld duplicates\n", rows.size(),
              static_cast<long long>(duplicates));
  EXPECT_EQ(install_->Stop(), 0);
}

// kill -9 of canal-server twice while rows stream: it resumes from the cursor
// the broker confirmed. The writer holds each third of the rows back until
// the kill before it, so the server always dies with rows still to publish.
TEST_F(RabbitMq, KillNineMidStreamLosesNothing) {
  constexpr int kTxns = 1200, kRowsPerTxn = 10, kChunks = 3;
  ASSERT_NO_FATAL_FAILURE(StartOnLoadTable(kKillPort, "mq_rk.t"));
  const auto chunks = canal::testing::WriteLoadChunks(sandbox_->dir() + "/" + name_ + "-", "mq_rk.t", kTxns,
                                                      kRowsPerTxn, kChunks);
  int kills = 0;
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    ASSERT_TRUE(sandbox_->SqlFile(chunks[chunk])) << sandbox_->error();
    if (chunk == kChunks - 1) break;
    // Kill while this chunk streams: after a moment, whatever has arrived.
    std::this_thread::sleep_for(200ms);
    if (install_->Kill9()) ++kills;
    ASSERT_TRUE(testing::StartServer(*install_));
  }
  int64_t duplicates = 0;
  const std::vector<int64_t> rows = ReadLoadStream(kTxns, kRowsPerTxn, &duplicates);
  EXPECT_EQ(kills, 2);
  std::printf("[ figures ] RabbitMQ kill -9 x%d: %zu rows received, %lld duplicates\n", kills, rows.size(),
              static_cast<long long>(duplicates));
  EXPECT_EQ(install_->Stop(), 0);
}

// A change whose routing key no queue is bound by would be dropped by the
// exchange: the destination stops, naming the table and the position, and the
// change is not skipped (after a fix and restart it is published).
TEST_F(RabbitMq, UnroutableMessageStopsTheDestination) {
  ASSERT_TRUE(Sql(testing::WorkloadSetupSql()));
  install_->WriteServerProperties(ServerProperties(kUnroutablePort, true));
  // Nothing is confirmed before the stop, so no cursor exists: both runs
  // start at this position.
  const std::string start = canal::testing::StartAtPrimaryEnd(*sandbox_);
  install_->WriteInstance("example", start + "canal.instance.filter.regex = mqdb\\\\..*\ncanal.mq.topic = " +
                                         routing_key() + "\ncanal.mq.dynamicTopic = nobody:mqdb\\\\.orders\n");
  ASSERT_TRUE(testing::StartServer(*install_));
  ASSERT_TRUE(Sql("INSERT INTO mqdb.orders VALUES (1, 1, 1)"));
  EXPECT_TRUE(canal::testing::WaitFor(
      [&] { return testing::ServerLogs(*install_).find("MQ publishing stopped") != std::string::npos; }, 30s));
  const std::string logs = testing::ServerLogs(*install_);
  EXPECT_NE(logs.find("no queue for routing key nobody"), std::string::npos) << logs;
  EXPECT_NE(logs.find("mqdb.orders at "), std::string::npos) << logs;
  EXPECT_EQ(install_->Stop(), 0);
  // Fixed (the orders go to the bound key) and restarted: the change comes.
  install_->WriteInstance("example",
                          start + "canal.instance.filter.regex = mqdb\\\\..*\ncanal.mq.topic = " + routing_key() + "\n");
  ASSERT_TRUE(testing::StartServer(*install_));
  std::vector<Change> changes;
  std::string error, parse_error;
  testing::ReadQueue(kBrokerPort, queue(), 30s, [&](const std::vector<std::string>& messages) {
    changes.clear();
    for (const std::string& m : messages) testing::ParseChanges(m, true, 0, &changes, &parse_error);
    return !changes.empty();
  }, &error);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].table, "orders");
  EXPECT_EQ(install_->Stop(), 0);
}

}  // namespace
}  // namespace canal::mq
