// canal-server with canal.mq.transaction = true against librdkafka's mock
// cluster: 300,000 rows with three kill -9s of the server at random points,
// broker failures in the middle of transactions, and a lost local cursor:
// what a read_committed consumer sees is every row exactly once, in binlog
// order.
//
// The mock shows every record whatever became of its transaction (it neither
// filters aborted transactions nor holds back open ones, kafka_transaction_test.cc),
// so the reader applies read_committed itself by the transaction tags
// (testing::CommittedView): a message counts when its transaction's position
// message is in the position topic. The server reads that same position back
// after a crash or an uncertain commit, so the two agree on what committed.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

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
using testing::KafkaMock;
using testing::KafkaRecord;

constexpr uint16_t kSandboxPort = TestPort("mq", 80);
constexpr uint16_t kKillPort = TestPort("mq", 81);
constexpr uint16_t kBrokerFailurePort = TestPort("mq", 82);
constexpr uint16_t kLostCursorPort = TestPort("mq", 83);
constexpr int16_t kEndTxnApiKey = 26;
constexpr const char* kTopic = "eo";
constexpr const char* kPositions = "canal_positions";

// Reads the data topic and the position topic while the server publishes (the mock keeps
// only a partition's newest 5 MiB) and judges the committed stream.
class ExactlyOnceReader {
 public:
  ExactlyOnceReader(const KafkaMock& mock, int rows_per_txn) : mock_(mock), rows_per_txn_(rows_per_txn) {
    data_ = std::thread([this] { Read(kTopic, true); });
    positions_ = std::thread([this] { Read(kPositions, false); });
  }
  ~ExactlyOnceReader() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (data_.joinable()) data_.join();
    if (positions_.joinable()) positions_.join();
  }

  // The committed rows in arrival order (what read_committed shows).
  std::vector<int64_t> CommittedRows(size_t* uncommitted_messages = nullptr) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> rows;
    size_t skipped = 0;
    for (const Message& m : messages_) {
      if (view_.Committed(m.transaction)) {
        rows.insert(rows.end(), m.rows.begin(), m.rows.end());
      } else {
        ++skipped;
      }
    }
    if (uncommitted_messages != nullptr) *uncommitted_messages = skipped;
    return rows;
  }
  // Data messages whose transaction has not committed (yet, or ever).
  size_t UncommittedMessages() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const Message& m : messages_) n += view_.Committed(m.transaction) ? 0 : 1;
    return n;
  }
  // Whether a data message from the `since`-th on (messages() then) belongs to a transaction
  // not committed now: one is open with rows in Kafka.
  bool OpenTransactionSince(size_t since) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = since; i < messages_.size(); ++i) {
      if (!view_.Committed(messages_[i].transaction)) return true;
    }
    return false;
  }
  size_t CommittedRowCount() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const Message& m : messages_) n += view_.Committed(m.transaction) ? m.rows.size() : 0;
    return n;
  }
  size_t committed_transactions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return view_.transactions();
  }
  size_t messages() const {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_.size();
  }
  // "" when the reader saw every record (no gap from the mock's retention) and every data
  // message carried a transaction tag.
  std::string problems() const {
    std::lock_guard<std::mutex> lock(mu_);
    return problems_;
  }

 private:
  struct Message {
    std::string transaction;
    std::vector<int64_t> rows;
  };
  void Read(const std::string& topic, bool data) {
    int64_t next_offset = 0;
    mock_.Consume(topic, {0}, 20min, [&](const KafkaRecord* r) {
      if (r == nullptr) return !stop_.load();
      std::lock_guard<std::mutex> lock(mu_);
      if (r->offset != next_offset) {
        problems_ += topic + ": offset " + std::to_string(r->offset) + " after " + std::to_string(next_offset) +
                     " (the reader fell behind the mock's retention); ";
      }
      next_offset = r->offset + 1;
      if (r->transaction.empty()) problems_ += topic + " offset " + std::to_string(r->offset) + " has no canal.txn; ";
      if (!data) {
        view_.AddPosition(*r);
        return !stop_.load();
      }
      Message m;
      m.transaction = r->transaction;
      std::string error;
      if (!testing::ParseLoadRows(r->payload, true, rows_per_txn_, &m.rows, &error)) problems_ += error + "; ";
      messages_.push_back(std::move(m));
      return !stop_.load();
    });
  }

  const KafkaMock& mock_;
  const int rows_per_txn_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<Message> messages_;
  testing::CommittedView view_;
  std::string problems_;
  std::thread data_, positions_;
};

// While it lives, every broker answers a produce request late now and then (one in flight at a
// time is held `rtt`), so a transaction's rows sit in Kafka a while before its position: a
// reader sees open transactions, whatever the machine's load (a fixed number of slow requests
// can all be used up before the moment a test waits for).
class SlowBroker {
 public:
  SlowBroker(KafkaMock& mock, std::chrono::milliseconds rtt) {
    thread_ = std::thread([this, &mock, rtt] {
      while (!stop_.load()) {
        mock.SlowProduceRequests(static_cast<int>(rtt.count()), 1);
        std::this_thread::sleep_for(rtt / 2);
      }
    });
  }
  ~SlowBroker() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class KafkaExactlyOnce : public canal::testing::ServerSuite<kSandboxPort> {
 protected:
  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    mock_ = std::make_unique<KafkaMock>(3);
    ASSERT_TRUE(mock_->ok()) << mock_->error();
    ASSERT_TRUE(mock_->CreateTopic(kTopic, 1));
    ASSERT_TRUE(mock_->CreateTopic(kPositions, 1));
    install_ = std::make_unique<CanalInstall>(
        "kafka-eo-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()), kSandboxPort);
  }
  void TearDown() override {
    reader_.reset();
    install_.reset();  // the server goes before the brokers
    mock_.reset();
  }

  void Configure(uint16_t port, const std::string& table, const std::string& extra = "") {
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        port, "canal.serverMode = kafka\nkafka.bootstrap.servers = " + mock_->bootstraps() +
                  "\ncanal.mq.flatMessage = true\ncanal.mq.transaction = true\nkafka.linger.ms = 5\n"
                  "kafka.log_level = 3\n" + extra));
    install_->WriteInstance("example", canal::testing::StartAtPrimaryEnd(*sandbox_) +
                                           "canal.instance.filter.regex = " + table.substr(0, table.find('.')) +
                                           "\\\\..*\ncanal.mq.topic = " + kTopic + "\n");
  }

  // Waits until the committed stream holds every row (or `limit`), then judges it: every row
  // once, first arrivals in binlog order, and no duplicate in what read_committed shows.
  // Returns the messages of transactions that never committed.
  size_t ExpectExactlyOnce(int64_t expected, std::chrono::milliseconds limit, const std::string& what) {
    int64_t duplicates = 0;
    std::vector<int64_t> rows;
    const bool complete = canal::testing::WaitFor(
        [&] { return static_cast<int64_t>(reader_->CommittedRowCount()) >= expected; },
        limit);
    // A little longer: anything published twice would show now.
    std::this_thread::sleep_for(500ms);
    size_t uncommitted = 0;
    rows = reader_->CommittedRows(&uncommitted);
    EXPECT_TRUE(complete) << what << ": " << rows.size() << " of " << expected << " rows committed\n" << Logs();
    EXPECT_EQ(testing::JudgeStream(rows, expected, &duplicates), "") << what;
    EXPECT_EQ(duplicates, 0) << what;
    EXPECT_EQ(static_cast<int64_t>(rows.size()), expected) << what;
    EXPECT_EQ(reader_->problems(), "") << what;
    std::printf("[ figures ] %s: %zu rows committed once each in %zu transactions; %zu messages of transactions "
                "that never committed (a read_committed consumer skips them)\n",
                what.c_str(), rows.size(), reader_->committed_transactions(), uncommitted);
    return uncommitted;
  }

  std::string Logs() const { return testing::ServerLogs(*install_); }

  std::unique_ptr<KafkaMock> mock_;
  std::unique_ptr<CanalInstall> install_;
  std::unique_ptr<ExactlyOnceReader> reader_;
};

// 300,000 rows in 3,000 transactions, written in four parts; after each of the first three
// the server is killed (kill -9) once a random share of that part is in Kafka, with
// produce requests slowed so that transactions are open at the kill.
TEST_F(KafkaExactlyOnce, ThreeKillNinesAtRandomPointsDeliverEveryRowOnce) {
  constexpr int kTxns = 3000, kRowsPerTxn = 100, kChunks = 4;
  const std::string table = "mq_eo_kill.t";
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql(table)));
  Configure(kKillPort, table, "canal.mq.canalBatchSize = 16\n");
  const std::vector<std::string> chunks =
      canal::testing::WriteLoadChunks(sandbox_->dir() + "/mq-eo-kill-", table, kTxns, kRowsPerTxn, kChunks);
  reader_ = std::make_unique<ExactlyOnceReader>(*mock_, kRowsPerTxn);
  ASSERT_TRUE(testing::StartServer(*install_));
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> share(10, 70);
  const auto start = std::chrono::steady_clock::now();
  int kills = 0, seen_open = 0;
  std::string points;
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    ASSERT_TRUE(sandbox_->SqlFile(chunks[chunk])) << sandbox_->error();
    if (chunk == kChunks - 1) break;
    const int percent = share(random);
    const size_t target = static_cast<size_t>(int64_t{kTxns} * kRowsPerTxn / kChunks * chunk +
                                              int64_t{kTxns} * kRowsPerTxn / kChunks * percent / 100);
    {
      // Past the share, and with rows of an open transaction already in Kafka: the kill leaves
      // them in a transaction that never commits.
      SlowBroker slow(*mock_, 150ms);
      ASSERT_TRUE(canal::testing::WaitFor([&] { return reader_->CommittedRowCount() >= target; }, 120s, 1ms))
          << Logs();
      // Preferably with rows of an open transaction already in Kafka (seen so here, a kill leaves
      // them in a transaction that never commits); the reader's own lag can hide that moment on a
      // loaded machine, so the kill does not wait for it for long.
      const size_t since = reader_->messages();
      if (canal::testing::WaitFor([&] { return reader_->OpenTransactionSince(since); }, 10s, 1ms)) ++seen_open;
      if (install_->Kill9()) ++kills;
    }
    points += std::to_string(percent) + "% of part " + std::to_string(chunk + 1) + ", ";
    ASSERT_TRUE(testing::StartServer(*install_));
  }
  const size_t never_committed = ExpectExactlyOnce(int64_t{kTxns} * kRowsPerTxn, 240s, "kill -9 x3");
  EXPECT_EQ(kills, 3);
  std::printf("[ figures ] %d of the 3 kills seen to land inside an open transaction with rows in Kafka; %zu "
              "messages of such transactions in all\n",
              seen_open, never_committed);
  std::printf("[ figures ] kill -9 at %s%.1f s from the first start to the last row\n", points.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_EQ(install_->Stop(), 0);
  EXPECT_NE(Logs().find("exactly-once publishing"), std::string::npos);
}

// Produce requests failing, the transaction coordinator refusing and then failing a commit,
// and every broker down for longer than a message may wait, all while transactions are open.
TEST_F(KafkaExactlyOnce, BrokerFailuresMidTransactionDeliverEveryRowOnce) {
  constexpr int kTxns = 600, kRowsPerTxn = 20;
  const std::string table = "mq_eo_err.t";
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql(table)));
  Configure(kBrokerFailurePort, table,
            "canal.mq.canalBatchSize = 8\nkafka.message.timeout.ms = 1500\nkafka.retry.backoff.ms = 50\n");
  reader_ = std::make_unique<ExactlyOnceReader>(*mock_, kRowsPerTxn);
  ASSERT_TRUE(testing::StartServer(*install_));
  const std::string sql = sandbox_->dir() + "/mq-eo-err.sql";
  const auto committed = [&](int txns) {
    return canal::testing::WaitFor(
        [&] { return reader_->CommittedRowCount() >= static_cast<size_t>(txns * kRowsPerTxn); }, 60s);
  };
  // Retriable failures: produce requests refused, the coordinator unavailable for commits.
  canal::testing::WriteLoadSql(sql, table, 1, kTxns / 3, kRowsPerTxn);
  mock_->FailProduceRequests(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, 5);
  mock_->FailRequests(kEndTxnApiKey, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, 3);
  ASSERT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error();
  ASSERT_TRUE(committed(kTxns / 3)) << Logs();
  // A commit the coordinator refuses outright: the producer is rebuilt, and the position
  // read back decides whether the transaction is sent again.
  mock_->FailRequests(kEndTxnApiKey, RD_KAFKA_RESP_ERR_INVALID_TXN_STATE, 1);
  canal::testing::WriteLoadSql(sql, table, kTxns / 3 + 1, 2 * kTxns / 3, kRowsPerTxn);
  ASSERT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error();
  ASSERT_TRUE(committed(2 * kTxns / 3)) << Logs();
  EXPECT_NE(Logs().find("reading the committed position back"), std::string::npos) << Logs();
  // Every broker down while a transaction is open with rows already in Kafka, for longer
  // than kafka.message.timeout.ms.
  {
    SlowBroker slow(*mock_, 150ms);
    const size_t since = reader_->messages();
    canal::testing::WriteLoadSql(sql, table, 2 * kTxns / 3 + 1, kTxns, kRowsPerTxn);
    ASSERT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error();
    // Preferably while a transaction is open with rows in Kafka (the reader's lag can hide it).
    const bool open = canal::testing::WaitFor([&] { return reader_->OpenTransactionSince(since); }, 10s, 1ms);
    std::printf("[ figures ] the outage began %s\n", open ? "inside an open transaction" : "(no open transaction seen)");
  }
  mock_->SetBrokersDown(true);
  std::this_thread::sleep_for(3s);  // the outage itself
  mock_->SetBrokersDown(false);
  ExpectExactlyOnce(int64_t{kTxns} * kRowsPerTxn, 120s, "broker failures");
  EXPECT_EQ(install_->Stop(), 0);
  const std::string logs = Logs();
  size_t failures = 0;
  for (size_t at = logs.find(" failed: "); at != std::string::npos; at = logs.find(" failed: ", at + 1)) ++failures;
  EXPECT_GE(failures, 2u) << "the refused commit and the outage each failed a transaction\n" << logs;
}

// The local cursor lost (meta.dat deleted, as on a new host): the server takes the position
// from Kafka and publishes nothing twice.
TEST_F(KafkaExactlyOnce, TheCursorFollowsKafkaNotTheLocalFile) {
  constexpr int kTxns = 200, kRowsPerTxn = 10;
  const std::string table = "mq_eo_meta.t";
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql(table)));
  Configure(kLostCursorPort, table);
  reader_ = std::make_unique<ExactlyOnceReader>(*mock_, kRowsPerTxn);
  ASSERT_TRUE(testing::StartServer(*install_));
  const std::string sql = sandbox_->dir() + "/mq-eo-meta.sql";
  canal::testing::WriteLoadSql(sql, table, 1, kTxns / 2, kRowsPerTxn);
  ASSERT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error();
  ASSERT_TRUE(canal::testing::WaitFor(
      [&] { return reader_->CommittedRowCount() >= static_cast<size_t>(kTxns / 2 * kRowsPerTxn); }, 60s))
      << Logs();
  EXPECT_EQ(install_->Stop(), 0);
  std::error_code ec;
  ASSERT_TRUE(std::filesystem::remove(install_->meta_file("example"), ec)) << install_->meta_file("example");
  canal::testing::WriteLoadSql(sql, table, kTxns / 2 + 1, kTxns, kRowsPerTxn);
  ASSERT_TRUE(sandbox_->SqlFile(sql)) << sandbox_->error();
  ASSERT_TRUE(testing::StartServer(*install_));
  ExpectExactlyOnce(int64_t{kTxns} * kRowsPerTxn, 60s, "meta.dat deleted");
  EXPECT_EQ(install_->Stop(), 0);
  EXPECT_NE(Logs().find("the cursor follows Kafka's committed transaction"), std::string::npos) << Logs();
}

}  // namespace
}  // namespace canal::mq
