// The whole replica (EventParser: query connection through Connector/C, dump
// connection, decoder, transaction buffer, reconnect policy) against the replay
// primary serving two MySQL 8.0 fixtures one after the other: every row of both
// delivered once, in order; a connection dropped in the middle of an event and
// an event with a bad checksum are recovered from by reconnecting; an
// authentication plugin nobody has and a purged binlog stop it with a clear
// error instead of retrying forever.
#include <chrono>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "canal/parser/event_parser.h"
#include "replay_test_util.h"
#include "support/fixtures.h"
#include "support/row_render.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string>& Files() {
  static const std::vector<std::string> kFiles = {"rust_mysql_common/binlog-invisible-columns.000001",
                                                  "rust_mysql_common/mysql-enum-string-set.000001"};
  return kFiles;
}

class RowSink : public parser::TransactionSink {
 public:
  Status OnTransaction(const parser::Transaction& t) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const parser::TxEvent& e : t.events) {
      if (e.kind == parser::TxEventKind::kRows) CANAL_RETURN_IF_ERROR(RenderRows(e.rows, &rows_));
    }
    return Status::OK();
  }
  std::vector<std::string> rows() const {
    std::lock_guard<std::mutex> lock(mu_);
    return rows_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> rows_;
};

class ReplayParser : public ::testing::Test {
 protected:
  void SetUp() override {
    CANAL_REQUIRE_FIXTURES();
    for (const std::string& f : Files()) {
      FileDecode d;
      Status s = DecodeFixtureFile(FixturePath(f), &d);
      ASSERT_TRUE(s.ok()) << s.ToString();
      for (const auto& row : d.rows) expected_.push_back(row.second);
      decoded_.push_back(std::move(d));
      o_.binlog_files.push_back(FixturePath(f));
    }
    ASSERT_GE(expected_.size(), 4u);
  }

  void StartPrimary() {
    primary_ = testing::StartPrimary(o_);
    ASSERT_TRUE(primary_);
  }

  std::unique_ptr<parser::EventParser> MakeParser(RowSink* sink) {
    return std::make_unique<parser::EventParser>(Options(), sink);
  }

  parser::EventParserOptions Options() const {
    parser::EventParserOptions po;
    po.destination = "replay";
    po.master = ReplicaOptions(*primary_, o_);
    po.slave_id = 9001;
    po.start.journal_name = Files()[0].substr(Files()[0].rfind('/') + 1);
    po.start.position = 4;
    po.heartbeat_period_ms = 2000;  // the parser drops a connection silent for 3 periods: room for a busy machine
    po.reconnect_initial_ms = 50;
    po.reconnect_max_ms = 500;
    return po;
  }

  // Waits (generously) until the sink has `n` rows or the parser stopped.
  static void WaitForRows(const RowSink& sink, const parser::EventParser& p, size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (sink.rows().size() < n && p.running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
  }
  // A parser into `sink`, started, once it has stopped for good or 60 s
  // have passed (then it is still running: retrying).
  std::unique_ptr<parser::EventParser> RunUntilStopped(RowSink* sink) {
    auto p = MakeParser(sink);
    p->Start();
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (p->running() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
    return p;
  }

  parser::StartPosition GtidStart(size_t* k, std::vector<std::string>* expected);

  // A parser starting at `start` delivers exactly `expected`, and streams on;
  // its status at the end.
  parser::ParserStatus ExpectRowsFrom(const parser::StartPosition& start, const std::vector<std::string>& expected) {
    RowSink sink;
    parser::EventParserOptions po = Options();
    po.start = start;
    parser::EventParser p(po, &sink);
    p.Start();
    WaitForRows(sink, p, expected.size());
    EXPECT_EQ(sink.rows(), expected);
    const parser::ParserStatus st = p.status();
    EXPECT_TRUE(p.running()) << st.last_error;
    p.Stop();
    return st;
  }

  // Index (as the primary counts events in a dump) of the first rows event of
  // the second row transaction of the first file: the middle of the stream.
  size_t MidStreamRowsEvent() const {
    const FileDecode& d = decoded_[0];
    size_t seen = 0;
    for (size_t i = 0; i < d.events.size(); ++i) {
      const uint8_t type = static_cast<uint8_t>(d.events[i][4]);
      if (type >= 30 && type <= 32 && ++seen == 2) return i;
    }
    ADD_FAILURE() << "no second rows event";
    return 0;
  }

  ReplayPrimaryOptions o_;
  std::vector<FileDecode> decoded_;
  std::vector<std::string> expected_;
  std::unique_ptr<ReplayPrimary> primary_;
};

TEST_F(ReplayParser, StreamsBothFilesWithCachingSha2) {
  StartPrimary();
  if (HasFatalFailure()) return;
  RowSink sink;
  auto p = MakeParser(&sink);
  p->Start();
  WaitForRows(sink, *p, expected_.size());
  EXPECT_TRUE(p->running()) << p->status().last_error;
  EXPECT_EQ(sink.rows(), expected_);
  const parser::ParserStatus st = p->status();
  EXPECT_EQ(st.reconnects, 0u) << st.last_error;
  EXPECT_EQ(st.position.journal_name, Files()[1].substr(Files()[1].rfind('/') + 1));
  p->Stop();
  EXPECT_TRUE(p->fatal_error().ok()) << p->fatal_error().ToString();
  const ReplayPrimaryStats ps = primary_->stats();
  // Connector/C's first login is a full one (RSA), the dump connection's then fast.
  EXPECT_EQ(ps.full_auths_rsa, 1u);
  EXPECT_GE(ps.fast_auths, 1u);
  EXPECT_EQ(ps.registrations, 1u);
  EXPECT_EQ(ps.last_slave_server_id, 9001u);
}

// A GTID start skips what the set holds. Dropped before anything was
// delivered, the parser asks by GTID again; after, it resumes by position.
// Every row once either way.
TEST_F(ReplayParser, GtidStartSkipsTheExecutedTransactions) {
  for (int64_t drop_at : {int64_t{-1}, int64_t{0}, int64_t{6}}) {
    SCOPED_TRACE("drop at event " + std::to_string(drop_at));
    StartPrimary();
    if (HasFatalFailure()) return;
    size_t k = 0;
    std::vector<std::string> expected;
    const parser::StartPosition start = GtidStart(&k, &expected);
    if (HasFatalFailure()) return;
    if (drop_at >= 0) primary_->ArmDropMidEvent(static_cast<uint64_t>(drop_at));
    const parser::ParserStatus st = ExpectRowsFrom(start, expected);
    const ReplayPrimaryStats ps = primary_->stats();
    if (drop_at < 0) {
      EXPECT_EQ(ps.gtid_dumps, 1u);
      EXPECT_EQ(ps.transactions_skipped, k);
      EXPECT_EQ(st.reconnects, 0u) << st.last_error;
    } else {
      EXPECT_GE(st.reconnects, 1u);
      EXPECT_EQ(ps.faults_fired, 1u);
      EXPECT_EQ(ps.gtid_dumps + ps.dumps, 2u);
    }
  }
}

// GTID set of the first file's transactions up to its first row change (their
// count in *k) and the rows a dump from it must give.
parser::StartPosition ReplayParser::GtidStart(size_t* k_out, std::vector<std::string>* expected_out) {
  const FileDecode& first = decoded_[0];
  // The first file's transactions up to and including its first row change.
  size_t k = 0;
  while (k < first.gtids.size() && first.gtids[k] != first.rows.front().first) ++k;
  if (k + 1 >= first.gtids.size()) {
    ADD_FAILURE() << "the first file has no GTID transaction after its first row change";
    return {};
  }
  ++k;
  std::string executed;
  for (size_t i = 0; i < k; ++i) executed += (i ? "," : "") + first.gtids[i];
  std::vector<std::string> expected = RowsAfterGtids(first, k);
  for (const auto& row : decoded_[1].rows) expected.push_back(row.second);
  EXPECT_LT(expected.size(), expected_.size());
  *k_out = k;
  *expected_out = std::move(expected);
  parser::StartPosition start;
  start.gtid = executed;
  return start;
}

// MySQL 8.0.28 and 8.0.32 transactions compressed into TRANSACTION_PAYLOAD
// events, written with MINIMAL row metadata: the parser asks information_schema
// for the column names, finds no table, and keeps the binlog's positional names.
TEST_F(ReplayParser, StreamsTransactionPayloads) {
  ReplayPrimaryOptions o;
  o.variables["binlog_row_metadata"] = "MINIMAL";  // as the servers that wrote them
  std::vector<std::string> expected;
  for (const char* f : {"mysql-binlog-connector-java/mysql-bin.compressed",
                        "rust_mysql_common/transaction_compression.000001"}) {
    o.binlog_files.push_back(FixturePath(f));
    FileDecode d;
    ASSERT_TRUE(DecodeFixtureFile(o.binlog_files.back(), &d).ok());
    for (const auto& row : d.rows) expected.push_back(row.second);
  }
  ASSERT_FALSE(expected.empty());
  o_ = o;
  StartPrimary();
  if (HasFatalFailure()) return;
  parser::StartPosition start;
  start.journal_name = "mysql-bin.compressed";
  start.position = 4;
  const parser::ParserStatus st = ExpectRowsFrom(start, expected);
  EXPECT_EQ(st.reconnects, 0u) << st.last_error;
  EXPECT_GE(primary_->stats().schema_queries, 1u);  // the names were asked for
}

// No start position: the primary's current end, from SHOW MASTER STATUS on 8.0
// and SHOW BINARY LOG STATUS on 8.4 (which no longer has the old statement).
TEST_F(ReplayParser, StartsAtTheCurrentEndOnMysql80And84) {
  for (const std::string version : {"8.0.36-replay", "8.4.3-replay"}) {
    SCOPED_TRACE(version);
    o_.server_version = version;
    StartPrimary();
    if (HasFatalFailure()) return;
    RowSink sink;
    parser::EventParserOptions po = Options();
    po.start = parser::StartPosition{};
    parser::EventParser p(po, &sink);
    p.Start();
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (primary_->stats().heartbeats == 0 && p.running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(p.running()) << p.status().last_error;
    EXPECT_GE(primary_->stats().heartbeats, 1u);
    const ReplayPrimaryStats ps = primary_->stats();
    EXPECT_EQ(ps.last_dump_file, Files()[1].substr(Files()[1].rfind('/') + 1));
    EXPECT_EQ(ps.last_dump_position, decoded_[1].offsets.back() + decoded_[1].events.back().size());
    EXPECT_EQ(ps.events_sent, 0u);
    p.Stop();
    EXPECT_TRUE(sink.rows().empty());
  }
}

// Event time (seconds) of an event's raw bytes.
uint32_t EventTime(std::string_view ev) {
  uint32_t t = 0;
  for (int i = 3; i >= 0; --i) t = (t << 8) | static_cast<uint8_t>(ev[i]);
  return t;
}

// canal.instance.master.timestamp: the parser scans the files it finds in
// SHOW BINARY LOGS through dumps of its own, then starts at the first
// transaction at or after the time. The first file ends with STOP (a restart),
// so its dump runs straight on into the second file.
TEST_F(ReplayParser, TimestampStartFindsTheTransaction) {
  StartPrimary();
  if (HasFatalFailure()) return;
  auto run = [&](uint32_t ts, const std::vector<std::string>& expected) {
    SCOPED_TRACE("timestamp " + std::to_string(ts));
    parser::StartPosition start;
    start.timestamp_ms = int64_t{ts} * 1000;
    ExpectRowsFrom(start, expected);
  };
  std::vector<std::string> second_file;
  for (const auto& row : decoded_[1].rows) second_file.push_back(row.second);
  // The second row transaction of each file.
  for (size_t f = 0; f < 2; ++f) {
    const FileDecode& d = decoded_[f];
    size_t i = 0;
    while (i < d.offsets.size() && d.offsets[i] != d.row_offsets[1]) ++i;
    ASSERT_LT(i, d.offsets.size());
    std::vector<std::string> expected;
    for (size_t k = 1; k < d.rows.size(); ++k) expected.push_back(d.rows[k].second);
    if (f == 0) expected.insert(expected.end(), second_file.begin(), second_file.end());
    run(EventTime(d.events[i]), expected);
  }
  // After everything in the first file, before the second was created: the
  // second file from its start (not the second file's offsets in the first).
  const uint32_t first_end = EventTime(decoded_[0].events.back());
  const uint32_t second_start = EventTime(decoded_[1].events.front());
  ASSERT_LT(first_end + 1, second_start);
  run(first_end + 1, second_file);
}

TEST_F(ReplayParser, RecoversFromAConnectionDroppedMidEvent) {
  StartPrimary();
  if (HasFatalFailure()) return;
  primary_->ArmDropMidEvent(MidStreamRowsEvent());
  RowSink sink;
  auto p = MakeParser(&sink);
  p->Start();
  WaitForRows(sink, *p, expected_.size());
  EXPECT_EQ(sink.rows(), expected_);  // nothing lost, nothing twice
  EXPECT_GE(p->status().reconnects, 1u);
  EXPECT_EQ(primary_->stats().faults_fired, 1u);
  EXPECT_GE(primary_->stats().dumps, 2u);
  EXPECT_TRUE(p->running()) << p->status().last_error;
  p->Stop();
}

TEST_F(ReplayParser, RecoversFromABadChecksum) {
  StartPrimary();
  if (HasFatalFailure()) return;
  primary_->ArmCorruptChecksum(MidStreamRowsEvent());
  RowSink sink;
  auto p = MakeParser(&sink);
  p->Start();
  WaitForRows(sink, *p, expected_.size());
  EXPECT_EQ(sink.rows(), expected_);
  const parser::ParserStatus st = p->status();
  EXPECT_GE(st.reconnects, 1u);
  EXPECT_EQ(primary_->stats().faults_fired, 1u);
  EXPECT_NE(st.last_error.find("checksum"), std::string::npos) << st.last_error;
  EXPECT_TRUE(p->running()) << st.last_error;
  p->Stop();
}

TEST_F(ReplayParser, UnknownAuthPluginStopsWithAClearError) {
  StartPrimary();
  if (HasFatalFailure()) return;
  primary_->SetUnknownAuthPlugin(true);
  RowSink sink;
  auto p = RunUntilStopped(&sink);
  ASSERT_FALSE(p->running()) << "still retrying: " << p->status().last_error;
  const Status s = p->fatal_error();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("replay_unknown_plugin"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("mysql_native_password"), std::string::npos) << s.ToString();  // the fix
  EXPECT_EQ(parser::ParserErrorKind(s), "authentication") << s.ToString();
  EXPECT_EQ(p->status().state, "failed");
}

TEST_F(ReplayParser, PurgedBinlogStopsWithErrorAndHint) {
  StartPrimary();
  if (HasFatalFailure()) return;
  primary_->SetBinlogPurged(true);
  RowSink sink;
  auto p = RunUntilStopped(&sink);
  ASSERT_FALSE(p->running()) << "still retrying: " << p->status().last_error;
  const Status s = p->fatal_error();
  EXPECT_NE(s.message().find("1236"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("purged"), std::string::npos) << s.ToString();
  EXPECT_EQ(parser::ParserErrorKind(s), "position") << s.ToString();
  EXPECT_TRUE(sink.rows().empty());
}

}  // namespace
}  // namespace canal::testing

namespace canal::testing {
namespace {

// Two MySQL servers with gtid_mode=OFF as candidates (canal.instance.master.address = A,B):
// the stream is on A when A goes away, and B is the primary now. Without GTIDs the stream has
// no state to resume by on B, and A's binlog offsets mean nothing there, so the parser stops
// naming the fix instead of reading B's binlog at A's offsets.
TEST_F(ReplayParser, AMysqlStreamWithoutGtidsThatReachesAnotherServerStopsInsteadOfReadingItsOffsets) {
  o_.variables["read_only"] = "0";
  o_.variables["gtid_mode"] = "OFF";
  StartPrimary();
  if (HasFatalFailure()) return;
  ReplayPrimaryOptions other = o_;
  other.server_id = 2;
  other.server_uuid = "5a1b2c3d-0000-4000-8000-00000000beef";
  std::unique_ptr<ReplayPrimary> second = testing::StartPrimary(other);
  ASSERT_TRUE(second);
  RowSink sink;
  parser::EventParserOptions po = Options();
  po.candidates = {{po.master.host, primary_->port()}, {po.master.host, second->port()}};
  po.detect_retry_threshold = 1;
  parser::EventParser p(po, &sink);
  p.Start();
  WaitForRows(sink, p, expected_.size());
  ASSERT_EQ(sink.rows().size(), expected_.size()) << p.status().last_error;
  primary_->Stop();
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (p.running() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  ASSERT_FALSE(p.running()) << "the parser went on after reaching another server: " << p.status().last_error;
  const std::string error = p.fatal_error().ToString();
  EXPECT_NE(error.find("moved from server_id 1 to 127.0.0.1:" + std::to_string(second->port()) + " (server_id 2)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("gtid_mode=OFF"), std::string::npos) << error;
  EXPECT_NE(error.find("gtid_mode=ON and enforce_gtid_consistency=ON"), std::string::npos) << error;
  EXPECT_NE(error.find("canal.instance.failover.timestamp.fallback=true"), std::string::npos) << error;
  EXPECT_EQ(parser::ParserErrorKind(p.fatal_error()), "no_gtid");
  EXPECT_NE(p.status().server.find("to 127.0.0.1:" + std::to_string(second->port())), std::string::npos)
      << p.status().server;
  EXPECT_EQ(sink.rows(), expected_) << "nothing more was delivered";
  p.Stop();
}

}  // namespace
}  // namespace canal::testing
