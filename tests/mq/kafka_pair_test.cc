// Two canal-servers in Kafka mode on one ZooKeeper (issue 28, "Pair"): the
// active one is SIGKILLed mid-stream, with batches in flight to a slow
// broker; the standby takes the running node and publishes on from the
// cursor the broker confirmed (/otter/canal/destinations/example/1001/cursor),
// not from the start. A reader consumes the topic the whole time (the mock
// partition keeps only its newest 5 MiB) and judges it at the end: every row
// present, first arrivals in binlog order (one partition: per key and
// overall), and the repeats exactly the transactions between the cursor in
// ZooKeeper at the kill and the last one the killed server published, at most
// canal.mq.canalBatchSize x canal.mq.maxInFlightBatches entries.
//
// One scenario, run per delivery variant (PairVariant, RunKillNineOfTheActive):
//  - at least once (the default): the standby starts at the first transaction
//    the cursor in ZooKeeper does not cover; the repeats are at most the
//    batches in flight at the kill;
//  - exactly once (canal.mq.transaction = true, docs/mq.md): nothing repeats
//    in what a read_committed consumer sees. librdkafka 2.0's mock shows
//    aborted and open transactions too, so the reader applies read_committed
//    itself by the canal.txn tags and the position topic (CommittedView);
//    there the standby resumes from the position committed in Kafka, which
//    the cursor in ZooKeeper follows (never ahead of it).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "canal/coord/canal_layout.h"
#include "canal/coord/zk_client.h"
#include "mq/kafka_mock.h"
#include "mq/mq_fixture.h"
#include "mq/mq_workload.h"
#include "support/canal_install.h"
#include "support/load_table.h"
#include "support/server_suite.h"
#include "support/test_ports.h"
#include "support/wait.h"
#include "support/zk_sandbox.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;
using canal::testing::CanalInstall;
using canal::testing::ReadAll;
using canal::testing::TestPort;
using canal::testing::WaitFor;
using testing::KafkaMock;
using testing::KafkaRecord;
using Clock = std::chrono::steady_clock;

// The "mq" block's 60-79 belong to this file.
constexpr uint16_t kSandboxPort = TestPort("mq", 60);
constexpr uint16_t kZkPort = TestPort("mq", 61);
constexpr uint16_t kAtLeastOncePorts[2] = {TestPort("mq", 62), TestPort("mq", 63)};
constexpr uint16_t kTransactionalPorts[2] = {TestPort("mq", 64), TestPort("mq", 65)};

constexpr int kSessionTimeoutMs = 6000;
// The session must expire (6 s, rounded up to ZooKeeper's 500 ms tick), then
// canal.zookeeper.takeover.delay (1 s), the instance's start and the first
// confirmed batch (docs/cluster.md: "under 10 s" to serving a TCP client).
constexpr double kTakeoverBoundS = 12.0;
// Produce requests the mock answers after 50 ms (KafkaMock::SlowProduceRequests), per broker.
constexpr int kSlowRequests = 1500;
constexpr const char* kDestination = "example";
constexpr const char* kClientId = "1001";  // Canal's MQ client (mq::kMqClientId)
constexpr const char* kPositions = "canal_positions";  // canal.mq.transaction.positionTopic's default

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}
std::string Address(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// A cursor in ZooKeeper (Canal's LogPosition JSON, docs/cluster.md).
struct Cursor {
  std::string journal;
  uint64_t position = 0;
  bool inside = false;  // "transactionBegin": inside a transaction
};
bool ParseCursor(const std::string& body, Cursor* out) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("postion") || !j["postion"].is_object()) return false;
  const nlohmann::json& p = j["postion"];
  if (!p.contains("journalName") || !p["journalName"].is_string() || !p.contains("position") ||
      !p["position"].is_number_unsigned()) {
    return false;
  }
  out->journal = p["journalName"].get<std::string>();
  out->position = p["position"].get<uint64_t>();
  out->inside = p.contains("transactionBegin");
  return true;
}

// How a pair publishes: the servers' extra canal.properties lines and what
// the kill may repeat.
struct PairVariant {
  std::string name;   // install roots, table and topic
  uint16_t ports[2];  // canal.port of the first active server and of the standby
  std::string server_extra;
  int canal_batch_size = 4;  // small batches: a kill always lands with several in flight
  int max_in_flight_batches = 8;
  // Exactly once (canal.mq.transaction = true): nothing repeats in what a
  // read_committed consumer sees. Otherwise at most the batches in flight at
  // the kill: canal_batch_size x max_in_flight_batches entries, each at most
  // one message.
  bool exactly_once = false;
  int64_t max_duplicate_messages() const {
    return exactly_once ? 0 : int64_t{canal_batch_size} * max_in_flight_batches;
  }
};

// One flat message of the load table, as the reader received it.
struct Received {
  Clock::time_point at;
  int64_t batch_id = 0;     // "id": counts from 1 at each start of a publisher
  std::string transaction;  // canal.txn (exactly once), "" without
  std::vector<int64_t> rows;
};

// Reads the one partition of a topic from the beginning on its own thread
// until Stop(), so the mock's 5 MiB window never drops what it did not read;
// and, for exactly once, the position topic, whose records say which
// transactions committed.
class TopicReader {
 public:
  TopicReader(const KafkaMock& mock, std::string topic, std::string positions, int rows_per_txn)
      : mock_(mock), topic_(std::move(topic)), positions_(std::move(positions)), rows_per_txn_(rows_per_txn) {
    data_thread_ = std::thread([this] { Read(topic_, true); });
    if (!positions_.empty()) positions_thread_ = std::thread([this] { Read(positions_, false); });
  }
  ~TopicReader() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (data_thread_.joinable()) data_thread_.join();
    if (positions_thread_.joinable()) positions_thread_.join();
  }
  // Every message, or only those of committed transactions (what read_committed shows).
  std::vector<Received> Messages(bool committed_only) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!committed_only) return messages_;
    std::vector<Received> out;
    for (const Received& m : messages_) {
      if (view_.Committed(m.transaction)) out.push_back(m);
    }
    return out;
  }
  size_t Count(bool committed_only) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!committed_only) return messages_.size();
    size_t n = 0;
    for (const Received& m : messages_) n += view_.Committed(m.transaction) ? 1 : 0;
    return n;
  }
  // Messages whose transaction has not committed (yet, or ever).
  size_t Uncommitted() const { return Count(false) - Count(true); }
  int64_t DistinctRows(bool committed_only) const {
    std::set<int64_t> rows;
    for (const Received& m : Messages(committed_only)) rows.insert(m.rows.begin(), m.rows.end());
    return static_cast<int64_t>(rows.size());
  }
  // When the first message of a publisher started after the first one ("id"
  // went back) arrived, if one did.
  std::optional<Clock::time_point> FirstOfALaterStart() const {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 1; i < messages_.size(); ++i) {
      if (messages_[i].batch_id < messages_[i - 1].batch_id) return messages_[i].at;
    }
    return std::nullopt;
  }
  // "" when every record came (no gap from the mock's retention) and parsed.
  std::string problems() const {
    std::lock_guard<std::mutex> lock(mu_);
    return problems_;
  }

 private:
  void Read(const std::string& topic, bool data) {
    int64_t next_offset = 0;
    mock_.Consume(topic, {0}, 10min, [&](const KafkaRecord* r) {
      if (r == nullptr) return !stop_.load();
      Received m;
      m.at = Clock::now();
      m.transaction = r->transaction;
      std::string error;
      if (data) {
        const nlohmann::json j = nlohmann::json::parse(r->payload, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer()) {
          error = "not a flat message: " + r->payload.substr(0, 200);
        } else {
          m.batch_id = j["id"].get<int64_t>();
          testing::ParseLoadRows(r->payload, true, rows_per_txn_, &m.rows, &error);
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (r->offset != next_offset) {
        problems_ += topic + ": offset " + std::to_string(r->offset) + " after " + std::to_string(next_offset) +
                     " (the reader fell behind the mock's retention); ";
      }
      next_offset = r->offset + 1;
      if (!error.empty()) problems_ += topic + " offset " + std::to_string(r->offset) + ": " + error + "; ";
      if (data) {
        messages_.push_back(std::move(m));
      } else {
        view_.AddPosition(*r);
      }
      return !stop_.load();
    });
  }

  const KafkaMock& mock_;
  const std::string topic_, positions_;
  const int rows_per_txn_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<Received> messages_;
  testing::CommittedView view_;
  std::string problems_;
  std::thread data_thread_, positions_thread_;
};

class KafkaPair : public canal::testing::ServerSuite<kSandboxPort> {
 protected:
  static void SetUpTestSuite() {
    ServerSuite::SetUpTestSuite();
    zk_sandbox_ = canal::testing::StartSuiteZk(kZkPort, &zk_setup_error_);
  }
  static void TearDownTestSuite() {
    zk_sandbox_.reset();
    ServerSuite::TearDownTestSuite();
  }

  void SetUp() override {
    ServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CANAL_REQUIRE_ZK(zk_sandbox_, zk_setup_error_);
    mock_ = std::make_unique<KafkaMock>(3);
    ASSERT_TRUE(mock_->ok()) << mock_->error();
    coord::ZkOptions o;
    o.servers = zk_sandbox_->servers();
    o.session_timeout_ms = 30'000;
    ASSERT_TRUE(coord::ZkClient::Create(o, &zk_).ok());
    Status s = zk_->WaitConnected(10s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // No running node, cursor or subscription of an earlier test.
    ASSERT_TRUE((s = zk_->Delete("/otter", /*recursive=*/true)).ok()) << s.ToString();
  }
  void TearDown() override {
    installs_[0].reset();  // the servers go before the brokers
    installs_[1].reset();
    if (zk_) zk_->Close();
    mock_.reset();
  }

  // A Canal pair's canal.properties: ZooKeeper for the running node and the
  // cursors (Canal's default-instance.xml keeps its meta in ZooKeeper; here
  // canal.meta.mode = auto does, and the Spring keys are ignored), Kafka mode.
  std::string ServerProperties(const PairVariant& v, int i) const {
    return CanalInstall::ServerProperties(
        v.ports[i],
        "canal.zkServers = " + zk_sandbox_->servers() +
            "\ncanal.zookeeper.session.timeout = " + std::to_string(kSessionTimeoutMs) +
            "\ncanal.instance.global.mode = spring"
            "\ncanal.instance.global.spring.xml = classpath:spring/default-instance.xml"
            "\ncanal.serverMode = kafka\nkafka.bootstrap.servers = " +
            mock_->bootstraps() +
            "\ncanal.mq.flatMessage = true\nkafka.linger.ms = 5\nkafka.log_level = 3"
            "\ncanal.mq.canalBatchSize = " +
            std::to_string(v.canal_batch_size) +
            "\ncanal.mq.maxInFlightBatches = " + std::to_string(v.max_in_flight_batches) + "\n" + v.server_extra);
  }

  std::string Get(const std::string& path) const {
    std::string body;
    return zk_->Get(path, &body).ok() ? body : std::string();
  }
  // The address in the running node, "" when there is none.
  std::string RunningAddress() const {
    coord::layout::RunningNode node;
    if (!coord::layout::ParseRunningNode(Get(coord::layout::ServerRunningPath(kDestination)), &node).ok()) return "";
    return node.address;
  }
  std::string CursorBody() const { return Get(coord::layout::ClientCursorPath(kDestination, kClientId)); }
  std::string Logs(int i) const {
    return installs_[i] ? ReadAll(installs_[i]->server_log()) + ReadAll(installs_[i]->instance_log(kDestination)) : "";
  }
  std::string BothLogs() const {
    return "--- server a ---\n" + Logs(0) + "\n--- server b ---\n" + Logs(1);
  }

  // The end (End_log_pos) of every rows event of the primary's binlog `file` from `from` on, in
  // binlog order.
  static std::vector<uint64_t> RowsEventEnds(const std::string& file, uint64_t from) {
    std::vector<uint64_t> ends;
    std::string out;
    if (!sandbox_->Sql("SHOW BINLOG EVENTS IN '" + file + "' FROM " + std::to_string(from), &out)) {
      ADD_FAILURE() << sandbox_->error();
      return ends;
    }
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      // Log_name, Pos, Event_type, Server_id, End_log_pos, Info
      std::vector<std::string> f;
      std::istringstream fields(line);
      for (std::string field; std::getline(fields, field, '\t');) f.push_back(field);
      if (f.size() >= 5 && f[2].rfind("Write_rows", 0) == 0) ends.push_back(std::stoull(f[4]));
    }
    return ends;
  }

  // The scenario (see the top of the file) for one variant.
  void RunKillNineOfTheActive(const PairVariant& v);

  static inline std::unique_ptr<canal::testing::ZkSandbox> zk_sandbox_;
  static inline std::string zk_setup_error_;
  std::unique_ptr<KafkaMock> mock_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<CanalInstall> installs_[2];
};

void KafkaPair::RunKillNineOfTheActive(const PairVariant& v) {
  constexpr int kTxns = 1200, kRowsPerTxn = 20, kChunks = 4;
  const std::string table = "mq_pair.t_" + v.name, topic = "mq_pair_" + v.name;
  const std::string active = Address(v.ports[0]), standby = Address(v.ports[1]);
  ASSERT_TRUE(Sql(canal::testing::LoadTableSql(table)));
  ASSERT_TRUE(mock_->CreateTopic(topic, 1));
  if (v.exactly_once) {
    ASSERT_TRUE(mock_->CreateTopic(kPositions, 1));
  }
  const bool committed = v.exactly_once;  // judge only what a read_committed consumer sees
  std::string start_file;
  uint64_t start_position = 0;
  ASSERT_TRUE(canal::testing::PrimaryEnd(*sandbox_, &start_file, &start_position)) << sandbox_->error();
  for (int i = 0; i < 2; ++i) {
    installs_[i] = std::make_unique<CanalInstall>("kafka-pair-" + v.name + "-" + "ab"[i], kSandboxPort);
    installs_[i]->WriteServerProperties(ServerProperties(v, i));
    installs_[i]->WriteInstance(kDestination, canal::testing::StartPositionProperties(start_file, start_position) +
                                                  "canal.instance.filter.regex = mq_pair\\\\.t_" + v.name +
                                                  "\ncanal.mq.topic = " + topic + "\n");
  }
  // The first server takes the running node, then the standby registers.
  ASSERT_TRUE(testing::StartServer(*installs_[0]));
  ASSERT_TRUE(WaitFor([&] { return RunningAddress() == active; }, 20s))
      << "the running node says \"" << RunningAddress() << "\"\n" << BothLogs();
  ASSERT_TRUE(testing::StartServer(*installs_[1]));
  ASSERT_TRUE(WaitFor([&] {
    std::vector<std::string> names;
    return zk_->Children(coord::layout::DestinationPath(kDestination) + "/cluster", &names).ok() && names.size() == 2;
  }, 20s)) << BothLogs();
  EXPECT_TRUE(canal::testing::WaitForText(installs_[1]->server_log(), "stands by", 20s)) << BothLogs();

  TopicReader reader(*mock_, topic, v.exactly_once ? kPositions : "", kRowsPerTxn);
  // A slow broker (50 ms a produce request, while the first server publishes):
  // batches wait in flight for their confirmation.
  mock_->SlowProduceRequests(50, kSlowRequests);
  const std::vector<std::string> chunks = canal::testing::WriteLoadChunks(
      sandbox_->dir() + "/kafka-pair-" + v.name + "-", table, kTxns, kRowsPerTxn, kChunks);
  const auto writes_start = Clock::now();
  // Half the transactions before the kill, the rest while no server is
  // active: the standby must catch up on a backlog, from where the cursor is.
  for (int c = 0; c < kChunks / 2; ++c) ASSERT_TRUE(sandbox_->SqlFile(chunks[c])) << sandbox_->error();
  const int written_before_kill = kTxns / 2;
  // (Exactly once: also with rows of an open transaction in Kafka, which the kill leaves
  // uncommitted for ever.)
  EXPECT_TRUE(WaitFor([&] {
    return reader.Count(committed) >= static_cast<size_t>(kTxns / 8) && (!committed || reader.Uncommitted() > 0);
  }, 60s, 1ms)) << reader.Count(committed) << " messages\n" << BothLogs();
  EXPECT_FALSE(reader.FirstOfALaterStart()) << "batch ids went back before the kill: two servers publishing?";

  ASSERT_EQ(RunningAddress(), active);
  const auto killed_at = Clock::now();
  ASSERT_TRUE(installs_[0]->Kill9());
  const std::string cursor_at_kill = CursorBody();
  std::jthread writer([&] {
    for (int c = kChunks / 2; c < kChunks; ++c) {
      if (!sandbox_->SqlFile(chunks[c])) ADD_FAILURE() << chunks[c] << ": " << sandbox_->error();
    }
  });
  // The killed server's session expires (and its running node goes) before
  // the standby contends (canal.zookeeper.takeover.delay later): the cursor
  // then is the last one the killed server wrote, the one the standby reads.
  std::string cursor_left;
  ASSERT_TRUE(WaitFor([&] {
    if (RunningAddress() != active) cursor_left = CursorBody();
    return !cursor_left.empty();
  }, 30s)) << "the running node still says \"" << RunningAddress() << "\" 30 s after the kill";
  const auto session_gone = Clock::now();
  std::optional<Clock::time_point> node_moved, first_from_standby;
  if (WaitFor([&] { return RunningAddress() == standby; }, 20s)) node_moved = Clock::now();
  ASSERT_TRUE(node_moved) << "the running node says \"" << RunningAddress() << "\" 20 s after the kill\n"
                          << BothLogs();
  if (WaitFor([&] { return reader.FirstOfALaterStart().has_value(); }, 30s)) {
    first_from_standby = reader.FirstOfALaterStart();
  }
  ASSERT_TRUE(first_from_standby) << "the standby " << standby << " published nothing within 30 s of taking over\n"
                                  << BothLogs();
  writer.join();
  const int64_t expected_rows = int64_t{kTxns} * kRowsPerTxn;
  EXPECT_TRUE(WaitFor([&] { return reader.DistinctRows(committed) >= expected_rows; }, 60s, 100ms))
      << reader.DistinctRows(committed) << " of " << expected_rows << " rows\n" << BothLogs();
  const auto all_rows_at = Clock::now();

  // Done when the standby's cursor is at the primary's end: every batch it
  // sent was confirmed, so nothing more can come.
  std::string end_file;
  uint64_t end_position = 0;
  ASSERT_TRUE(canal::testing::PrimaryEnd(*sandbox_, &end_file, &end_position)) << sandbox_->error();
  Cursor final_cursor;
  EXPECT_TRUE(WaitFor([&] {
    return ParseCursor(CursorBody(), &final_cursor) && final_cursor.journal == end_file &&
           final_cursor.position == end_position;
  }, 30s)) << "the cursor in ZooKeeper: " << CursorBody() << "; the primary's end " << end_file << ":" << end_position;
  reader.Stop();
  // What a consumer sees: read_committed for exactly once, every message otherwise.
  const std::vector<Received> all = reader.Messages(committed);
  const size_t never_committed = reader.Uncommitted();
  EXPECT_EQ(reader.problems(), "");
  if (v.exactly_once) {
    EXPECT_GE(never_committed, 1u) << "the kill landed inside a transaction with rows in Kafka";
  }
  ASSERT_FALSE(all.empty());

  // Each message is one transaction (one 20-row INSERT, one rows event).
  std::vector<int64_t> txn_of(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const Received& m = all[i];
    ASSERT_EQ(m.rows.size(), static_cast<size_t>(kRowsPerTxn)) << "message " << i;
    txn_of[i] = m.rows.front() / kRowsPerTxn + 1;
    for (int k = 0; k < kRowsPerTxn; ++k) ASSERT_EQ(m.rows[k], (txn_of[i] - 1) * kRowsPerTxn + k) << "message " << i;
  }
  // The killed server's messages, then the standby's ("id" counts from 1 at
  // each start of a publisher): exactly one change of publisher.
  std::vector<size_t> restarts;
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].batch_id < all[i - 1].batch_id) restarts.push_back(i);
  }
  ASSERT_EQ(restarts.size(), 1u) << "publisher starts seen in the topic (batch id going back)";
  const size_t first_b = restarts[0];
  // Each publisher's transactions follow one another without a gap or a repeat.
  for (size_t i = 1; i < all.size(); ++i) {
    if (i != first_b) {
      ASSERT_EQ(txn_of[i], txn_of[i - 1] + 1) << "message " << i;
    }
  }
  const int64_t a_last = txn_of[first_b - 1], b_first = txn_of[first_b];
  EXPECT_EQ(txn_of.front(), 1);
  EXPECT_EQ(txn_of.back(), kTxns);
  EXPECT_LE(b_first, a_last + 1) << "transactions " << a_last + 1 << ".." << b_first - 1 << " were never published";
  // Mid-stream: the killed server had published only part of what the binlog held.
  EXPECT_LT(a_last, written_before_kill) << "the kill did not land mid-stream";

  // The standby resumed from the cursor the killed server left in ZooKeeper:
  // its first transaction is the first one whose rows that cursor does not
  // cover (rows events from the binlog itself, transaction k the k-th).
  Cursor left;
  ASSERT_TRUE(ParseCursor(cursor_left, &left)) << cursor_left;
  ASSERT_EQ(left.journal, start_file) << cursor_left;
  const std::vector<uint64_t> rows_ends = RowsEventEnds(start_file, start_position);
  ASSERT_EQ(rows_ends.size(), static_cast<size_t>(kTxns));
  int64_t covered = 0;  // transactions whose rows the cursor covers
  while (covered < kTxns && rows_ends[covered] <= left.position) ++covered;
  EXPECT_LE(covered, a_last) << "the cursor covers transactions the killed server never published";
  if (v.exactly_once) {
    // The standby resumes from the position committed in Kafka; the cursor in ZooKeeper follows
    // it, so it is never ahead of it.
    EXPECT_LE(covered + 1, b_first) << "the cursor in ZooKeeper is ahead of what committed: " << cursor_left;
  } else {
    EXPECT_EQ(b_first, covered + 1) << "the standby did not resume from the cursor in ZooKeeper, " << cursor_left;
  }
  if (cursor_at_kill != cursor_left) {
    std::printf("[ figures ] (the cursor moved after the kill: a write the killed server had sent)\n");
  }

  const int64_t duplicate_messages = a_last - b_first + 1;
  int64_t duplicate_rows = 0;
  std::vector<int64_t> rows;
  for (const Received& m : all) rows.insert(rows.end(), m.rows.begin(), m.rows.end());
  EXPECT_EQ(testing::JudgeStream(rows, expected_rows, &duplicate_rows), "");
  EXPECT_EQ(duplicate_rows, duplicate_messages * kRowsPerTxn);
  if (!v.exactly_once) {
    // (A slow broker: the kill always lands with batches in flight, whose rows come again.)
    EXPECT_GE(duplicate_messages, 1) << "no batch was in flight at the kill";
  }
  EXPECT_LE(duplicate_messages, v.max_duplicate_messages())
      << "more repeats than the batches in flight at the kill (canal.mq.canalBatchSize " << v.canal_batch_size
      << " x canal.mq.maxInFlightBatches " << v.max_in_flight_batches << ")";

  const double node_s = SecondsBetween(killed_at, *node_moved);
  const double first_s = SecondsBetween(killed_at, *first_from_standby);
  std::printf("[ figures ] kafka pair (%s): kill -9 of the active server %.1f s into the load, after it published %lld "
              "of the %d transactions written; its session gone after %.2f s, running node moved after %.2f s, first "
              "message from the standby after %.2f s (session timeout %d ms); cursor it left in ZooKeeper: %s:%llu%s, "
              "covering %lld transactions; the standby resumed at transaction %lld; %lld of %lld rows (all %.1f s "
              "after the kill), %lld duplicate messages (%lld rows; bound %lld = canal.mq.canalBatchSize %d x "
              "canal.mq.maxInFlightBatches %d), %zu messages%s\n",
              v.name.c_str(), SecondsBetween(writes_start, killed_at), static_cast<long long>(a_last),
              written_before_kill, SecondsBetween(killed_at, session_gone), node_s, first_s, kSessionTimeoutMs,
              left.journal.c_str(), static_cast<unsigned long long>(left.position),
              left.inside ? " (inside a transaction)" : "", static_cast<long long>(covered),
              static_cast<long long>(b_first), static_cast<long long>(expected_rows),
              static_cast<long long>(expected_rows), SecondsBetween(killed_at, all_rows_at),
              static_cast<long long>(duplicate_messages), static_cast<long long>(duplicate_rows),
              static_cast<long long>(v.max_duplicate_messages()), v.canal_batch_size, v.max_in_flight_batches,
              all.size(),
              v.exactly_once ? (" of committed transactions (" + std::to_string(never_committed) +
                                " more of transactions that never committed, which read_committed skips)")
                                   .c_str()
                             : "");
  EXPECT_LT(node_s, kTakeoverBoundS);
  EXPECT_LT(first_s, kTakeoverBoundS);

  const std::string logs_b = Logs(1);
  EXPECT_NE(logs_b.find("HA: destination example: active on server " + standby), std::string::npos) << logs_b;
  EXPECT_NE(logs_b.find("cursors in ZooKeeper"), std::string::npos) << logs_b;
  EXPECT_EQ(installs_[1]->Stop(), 0);
}

// At least once: the standby starts at the first transaction the cursor in
// ZooKeeper does not cover; only the batches unconfirmed at the kill come again.
TEST_F(KafkaPair, KillNineOfTheActiveStandbyPublishesOnFromTheCursorInZooKeeper) {
  RunKillNineOfTheActive({"alo", {kAtLeastOncePorts[0], kAtLeastOncePorts[1]}, "", 4, 8, /*exactly_once=*/false});
}

// Exactly once: a read_committed consumer sees every row once across the
// takeover.
TEST_F(KafkaPair, KillNineOfTheActiveWithTransactionsRepeatsNothing) {
  RunKillNineOfTheActive({"eo", {kTransactionalPorts[0], kTransactionalPorts[1]}, "canal.mq.transaction = true\n", 4,
                          8, /*exactly_once=*/true});
}

}  // namespace
}  // namespace canal::mq
