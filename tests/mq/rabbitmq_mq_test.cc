// canal-server in RabbitMQ mode against a real broker (Debian's
// rabbitmq-server, scripts/rabbitmq-sandbox.sh), read back from the queue:
// the workload arrives once per key in binlog order, in flat and protobuf
// form; stopping and restarting the broker mid-stream, and kill -9 of
// canal-server mid-stream, lose nothing; a message no queue would receive
// stops the destination instead of vanishing. A bad broker (a message over
// its max_message_size, a missing exchange, a wrong password, a listener that
// never answers) is a clear error within seconds, nothing is acked that it
// did not confirm, and the destination holds still in bounded memory.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "mq/broker_faults.h"
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
// The bad-broker tests: their canal-servers and the metrics endpoint they share (one at a time).
constexpr uint16_t kTooLargePort = TestPort("mq", 51);
constexpr uint16_t kWrongPasswordPort = TestPort("mq", 52);
constexpr uint16_t kSilentPort = TestPort("mq", 53);
constexpr uint16_t kMissingExchangePort = TestPort("mq", 54);
constexpr uint16_t kMetricsPort = TestPort("mq", 59);
// The suite's broker refuses messages over 1 MiB (RabbitMQ's default is 128 MiB), so one row
// can be too large; every other test's messages are far smaller.
constexpr uint64_t kMaxMessageSize = 1 << 20;

class RabbitMq : public canal::testing::ServerSuite<kSandboxPort> {
 protected:
  static void SetUpTestSuite() {
    ServerSuite::SetUpTestSuite();
    if (!setup_error_.empty()) return;
    canal::testing::RabbitMqSandboxOptions o;
    o.port = kBrokerPort;
    o.extra_options = {"max_message_size = " + std::to_string(kMaxMessageSize)};
    broker_ = canal::testing::StartSuiteRabbitMq(std::move(o), &setup_error_);
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

  // A server on `port` reading schema `schema` from the primary's end, publishing to the test's
  // routing key, with a small ring and the metrics endpoint on; `server_extra` overrides
  // canal.properties (a later line wins).
  ::testing::AssertionResult StartBadBrokerServer(uint16_t port, const std::string& schema,
                                                  const std::string& server_extra) {
    install_->WriteServerProperties(ServerProperties(port, true) + "canal.metrics.pull.port = " +
                                    std::to_string(kMetricsPort) + "\n" + server_extra);
    install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                           "canal.instance.filter.regex = " + schema + "\\\\..*\ncanal.mq.topic = " +
                                           routing_key() + "\n" + testing::kSmallRing);
    return testing::StartServer(*install_);
  }

  // Writes transactions first..last (5 rows each) into load table `table`.
  bool WriteLoad(const std::string& table, int first, int last) {
    const std::string path = sandbox_->dir() + "/" + name_ + "-" + std::to_string(first) + ".sql";
    canal::testing::WriteLoadSql(path, table, first, last, 5);
    const bool ok = sandbox_->SqlFile(path);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }

  // More changes than the small ring holds, then as many again while it is full: it stays
  // full, nothing is acked, the server does not grow (broker_faults.h).
  void ExpectHeldBack(const std::string& table) {
    ASSERT_TRUE(WriteLoad(table, 1, 400));
    testing::ExpectHeldBack(kMetricsPort, [&] { return WriteLoad(table, 401, 800); });
  }

  std::string Logs() const { return testing::ServerLogs(*install_); }

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

// A change larger than the broker's max_message_size: RabbitMQ closes the channel (406
// PRECONDITION_FAILED). The destination stops at once with an ERROR naming the size, the
// routing key, the table and position, the limit and the fix; the change before it was
// confirmed and the cursor moved past it, but not past the refused batch, and nothing after it
// is published (so nothing is skipped).
TEST_F(RabbitMq, AMessageOverTheBrokersMaxMessageSizeStopsTheDestinationNamingTheFix) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS mq_rbig; DROP TABLE IF EXISTS mq_rbig.t; "
                  "CREATE TABLE mq_rbig.t (id INT PRIMARY KEY, v LONGTEXT)"));
  ASSERT_TRUE(StartBadBrokerServer(kTooLargePort, "mq_rbig", ""));
  ASSERT_TRUE(Sql("INSERT INTO mq_rbig.t VALUES (1, 'small')"));
  std::string error;
  const auto first = testing::ReadQueue(kBrokerPort, queue(), 30s, [](const auto& m) { return !m.empty(); }, &error);
  ASSERT_EQ(first.size(), 1u) << error;
  // The confirmed change's cursor is written (meta.dat's running form) before the next batch.
  std::string confirmed;
  ASSERT_TRUE(canal::testing::WaitFor(
      [&] { return !(confirmed = testing::ClientCursor(install_->meta_file("example"))).empty(); }, 10s));

  ASSERT_TRUE(Sql("INSERT INTO mq_rbig.t VALUES (2, REPEAT('x', 1200000))"));
  const auto inserted = std::chrono::steady_clock::now();
  ASSERT_TRUE(Sql("INSERT INTO mq_rbig.t VALUES (3, 'after')"));
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find("MQ publishing stopped") != std::string::npos; }, 30s))
      << Logs();
  const double seconds = canal::testing::SecondsSince(inserted);
  const std::string line = testing::LineWith(Logs(), "MQ publishing stopped");
  std::printf("[ figures ] RabbitMQ max_message_size: stopped %.2f s after the insert: %s\n", seconds, line.c_str());
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(line.find(" error "), std::string::npos) << line;
  EXPECT_NE(line.find("refused a message of 1200"), std::string::npos) << line;
  EXPECT_NE(line.find("for routing key " + routing_key() + " (mq_rbig.t at mariadb-bin."), std::string::npos) << line;
  EXPECT_NE(line.find("max_message_size of 1048576 bytes"), std::string::npos) << line;
  EXPECT_NE(line.find("406 PRECONDITION_FAILED"), std::string::npos) << line;
  EXPECT_NE(line.find("raise max_message_size in the broker's rabbitmq.conf"), std::string::npos) << line;
  EXPECT_NE(line.find("make the transaction smaller"), std::string::npos) << line;
  // Neither the large change nor the one after it arrives.
  const auto later = testing::ReadQueue(kBrokerPort, queue(), 2s, [](const auto&) { return false; }, &error);
  EXPECT_EQ(later.size(), 0u);
  EXPECT_EQ(install_->Stop(), 0);
  // The cursor moved past the first change but not to the refused one: a restart publishes it
  // again (meta.dat may hold a point inside its transaction, before the row: the begin entry
  // makes no flat message, so its batch was confirmed as it was).
  const auto position = [](const std::string& p) { return std::strtoull(p.c_str() + p.rfind(':') + 1, nullptr, 10); };
  const std::string cursor = testing::ClientCursor(install_->meta_file("example"));
  const std::string marker = "(mq_rbig.t at ";
  const size_t at = line.find(marker);
  ASSERT_NE(at, std::string::npos) << line;
  const std::string refused = line.substr(at + marker.size(), line.find(')', at) - at - marker.size());
  ASSERT_NE(cursor.rfind(':'), std::string::npos) << cursor;
  EXPECT_EQ(cursor.substr(0, cursor.rfind(':')), refused.substr(0, refused.rfind(':')));
  EXPECT_GE(position(cursor), position(confirmed)) << cursor << " " << confirmed;
  EXPECT_LT(position(cursor), position(refused)) << "the cursor " << cursor << " moved past the refused change at "
                                                  << refused;
  std::printf("[ figures ] RabbitMQ max_message_size: cursor %s after the first change, %s at the stop, the refused "
              "change at %s\n", confirmed.c_str(), cursor.c_str(), refused.c_str());
}

// The exchange does not exist (and rabbitmq.deliveryMode does not ask canal-server to declare
// it): RabbitMQ closes the channel (404) at the first publish; the destination stops naming the
// exchange, the change and the fix. Nothing is acked.
TEST_F(RabbitMq, AMissingExchangeStopsTheDestinationNamingTheFix) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS mq_rnox; DROP TABLE IF EXISTS mq_rnox.t; "
                  "CREATE TABLE mq_rnox.t (id INT PRIMARY KEY)"));
  ASSERT_TRUE(StartBadBrokerServer(kMissingExchangePort, "mq_rnox",
                                   "rabbitmq.exchange = ex.missing." + name_ + "\nrabbitmq.deliveryMode = 2\n"
                                   "rabbitmq.queue =\n"));
  ASSERT_TRUE(Sql("INSERT INTO mq_rnox.t VALUES (1)"));
  const auto inserted = std::chrono::steady_clock::now();
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find("MQ publishing stopped") != std::string::npos; }, 30s))
      << Logs();
  const double seconds = canal::testing::SecondsSince(inserted);
  const std::string line = testing::LineWith(Logs(), "MQ publishing stopped");
  std::printf("[ figures ] RabbitMQ missing exchange: stopped %.2f s after the insert: %s\n", seconds, line.c_str());
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(line.find(" error "), std::string::npos) << line;
  EXPECT_NE(line.find("has no exchange 'ex.missing." + name_ + "' to take mq_rnox.t at mariadb-bin."),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("404 NOT_FOUND"), std::string::npos) << line;
  EXPECT_NE(line.find("set rabbitmq.deliveryMode to its type"), std::string::npos) << line;
  EXPECT_EQ(install_->Stop(), 0);
  EXPECT_EQ(testing::ClientCursor(install_->meta_file("example")), "");
}

// A wrong rabbitmq.password: RabbitMQ refuses the login (403 ACCESS_REFUSED). A setting only the
// operator can fix, as a wrong replication password is: the destination's publishing stops at
// once with an ERROR naming the user, the broker, the virtual host and the keys to fix, rather
// than retry every second for ever. Nothing is acked; the ring fills, the parser waits.
TEST_F(RabbitMq, AWrongPasswordStopsTheDestinationNamingUserHostAndVirtualHost) {
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql("mq_rpw.t")));
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(StartBadBrokerServer(kWrongPasswordPort, "mq_rpw", "rabbitmq.password = not-the-password\n"));
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find("MQ publishing stopped") != std::string::npos; }, 30s))
      << Logs();
  const double seconds = canal::testing::SecondsSince(started);
  const std::string line = testing::LineWith(Logs(), "MQ publishing stopped");
  std::printf("[ figures ] RabbitMQ wrong password: stopped %.2f s after startup.sh: %s\n", seconds, line.c_str());
  EXPECT_LT(seconds, 10.0);
  EXPECT_NE(line.find(" error "), std::string::npos) << line;
  EXPECT_NE(line.find("RabbitMQ refused the login of user 'guest' on 127.0.0.1:" + std::to_string(kBrokerPort) +
                      ", virtual host '/'"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("403 ACCESS_REFUSED"), std::string::npos) << line;
  EXPECT_NE(line.find("check rabbitmq.username and rabbitmq.password"), std::string::npos) << line;
  EXPECT_EQ(line.find("not-the-password"), std::string::npos) << "the password is in the log: " << line;
  ASSERT_NO_FATAL_FAILURE(ExpectHeldBack("mq_rpw.t"));
  EXPECT_EQ(install_->Stop(), 0);
  EXPECT_EQ(testing::ClientCursor(install_->meta_file("example")), "");
}

// rabbitmq.host is a listener that accepts the connection and never answers (a hung broker, or
// not RabbitMQ): each attempt gives up after 5 s with a WARN saying so, and is retried (the
// broker may come back); the attempts do not pile up connections. Nothing is acked; the ring
// fills, the parser waits, nothing grows.
TEST_F(RabbitMq, ABrokerThatNeverAnswersIsAWarningWithinSecondsAndRetried) {
  testing::SilentBroker silent;
  ASSERT_TRUE(silent.ok());
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql("mq_rsil.t")));
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(StartBadBrokerServer(kSilentPort, "mq_rsil", "rabbitmq.host = " + silent.address() + "\n"));
  const std::string says = "accepted the connection but did not answer the AMQP handshake within 5 s";
  EXPECT_TRUE(canal::testing::WaitFor([&] { return Logs().find(says) != std::string::npos; }, 30s)) << Logs();
  const double seconds = canal::testing::SecondsSince(started);
  const std::string line = testing::LineWith(Logs(), says);
  std::printf("[ figures ] RabbitMQ silent broker: warned %.2f s after startup.sh: %s\n", seconds, line.c_str());
  EXPECT_LT(seconds, 10.0);
  EXPECT_NE(line.find(" warning "), std::string::npos) << line;
  EXPECT_NE(line.find("cannot connect to the broker: IO error: RabbitMQ " + silent.address() + " " + says),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("retrying in"), std::string::npos) << line;
  // Tried again, each attempt's connection closed before the next.
  EXPECT_TRUE(canal::testing::WaitFor([&] { return silent.accepted() >= 2; }, 20s)) << silent.accepted();
  EXPECT_LE(silent.open_connections(), 1);
  ASSERT_NO_FATAL_FAILURE(ExpectHeldBack("mq_rsil.t"));
  EXPECT_LE(silent.open_connections(), 1);
  EXPECT_EQ(Logs().find("MQ publishing stopped"), std::string::npos) << "a silent broker is retried";
  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(install_->Stop(), 0);
  std::printf("[ figures ] RabbitMQ silent broker: %d connections, stop took %.2f s\n", silent.accepted(),
              canal::testing::SecondsSince(stopping));
  EXPECT_EQ(testing::ClientCursor(install_->meta_file("example")), "");
}

}  // namespace
}  // namespace canal::mq
