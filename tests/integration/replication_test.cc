// The replica end to end against a real MariaDB started here: what streams live
// equals what the file decoder reads from the same binlogs; kills of the dump
// connection and a server restart lose and repeat nothing; the three ways of
// choosing a start position start at the right transaction; and each
// misconfiguration ends the parser with its own readable error, promptly.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <atomic>
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/event_parser.h"
#include "support/fixtures.h"
#include "support/mariadb_sandbox.h"
#include "support/row_render.h"
#include "support/sandbox_parser.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
using parser::EventParser;
using parser::EventParserOptions;
using parser::Transaction;
using parser::TxEventKind;

constexpr uint16_t kPort = TestPort("replication");

// Records what the parser hands over: rendered rows, and per transaction the
// first value of its first row's column 1 (the test tables put a txn number there).
struct Recorder : parser::TransactionSink {
  std::mutex mu;
  std::vector<std::string> rows;
  std::vector<int64_t> txn_numbers;
  std::vector<std::string> gtids;
  std::vector<uint64_t> rows_per_txn;
  uint64_t pieces = 0, idles = 0;
  size_t largest_value = 0;
  bool render = true;
  // The transaction being assembled from pieces.
  int64_t number = -1;
  uint64_t n = 0;

  Status OnTransaction(const Transaction& t) override {
    std::lock_guard<std::mutex> lock(mu);
    ++pieces;
    if (t.first_piece()) {
      number = -1;
      n = 0;
    }
    for (const auto& e : t.events) {
      if (e.kind != TxEventKind::kRows) continue;
      binlog::RowsReader reader;
      reader.Reset(e.rows);
      binlog::RowChange change;
      bool done = false;
      while (true) {
        Status s = reader.Next(&change, &done);
        if (!s.ok()) return s;
        if (done) break;
        ++n;
        const auto& img = change.has_after ? change.after : change.before;
        if (number < 0 && img.values.size() > 1 && img.values[1].kind == binlog::ColumnValue::Kind::kSigned) {
          number = img.values[1].i64;
        }
        for (const auto& v : img.values) largest_value = std::max(largest_value, v.raw.size());
      }
      if (render) CANAL_RETURN_IF_ERROR(RenderRows(e.rows, &rows));
    }
    if (t.last_piece && n > 0) {
      txn_numbers.push_back(number);
      rows_per_txn.push_back(n);
      gtids.push_back(t.gtid);
    }
    return Status::OK();
  }
  void OnIdle(const LogPosition&) override {
    std::lock_guard<std::mutex> lock(mu);
    ++idles;
  }
  size_t transactions() {
    std::lock_guard<std::mutex> lock(mu);
    return txn_numbers.size();
  }
};


class Replication : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sandbox_ = StartSuiteSandbox(kPort, &setup_error_); }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override { CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_); }

  static EventParserOptions Options() {
    EventParserOptions o = SandboxParserOptions("test", kPort);
    return o;
  }
  // Options starting at the primary's end as it is now.
  static EventParserOptions OptionsFromNow() {
    EventParserOptions o = Options();
    const auto [file, pos] = MasterStatus();
    o.start.journal_name = file;
    o.start.position = pos;
    return o;
  }
  // SHOW MASTER STATUS as (file, position).
  static std::pair<std::string, uint64_t> MasterStatus() {
    std::string out;
    EXPECT_TRUE(sandbox_->Sql("SHOW MASTER STATUS", &out)) << sandbox_->error();
    // Batch output without column names: "file\tpos\t...".
    const size_t tab = out.find('\t');
    EXPECT_NE(tab, std::string::npos) << out;
    if (tab == std::string::npos) return {"", 4};
    return {out.substr(0, tab), std::strtoull(out.c_str() + tab + 1, nullptr, 10)};
  }
  static bool Sql(const std::string& sql) {
    bool ok = sandbox_->Sql(sql);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  }
  // Runs the parser until `done` holds or the limit passes; returns its status.
  static parser::ParserStatus RunUntil(EventParser* p, const std::function<bool()>& done,
                                       std::chrono::milliseconds limit = 60s) {
    p->Start();
    WaitFor([&] { return done() || !p->running(); }, limit);
    p->Stop();
    return p->status();
  }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
};

TEST_F(Replication, LiveStreamEqualsTheFileDecoderValueForValue) {
  Recorder rec;
  const EventParserOptions o = OptionsFromNow();
  EventParser p(o, &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming"; }, 20s)) << p.status().last_error;

  std::vector<std::string> workloads = {std::string(CANAL_SOURCE_DIR) + "/tests/integration/sql/workload.sql"};
  const std::string shared_sql = SharedDir().empty() ? "" : SharedDir() + "/fixtures/sql/all_types.sql";
  if (!shared_sql.empty() && std::ifstream(shared_sql).good()) {
    workloads.push_back(shared_sql);
  } else {
    std::printf("[ note ] ../shared/fixtures/sql/all_types.sql not found: streaming our own workload only\n");
  }
  for (const auto& w : workloads) {
    std::string out;
    ASSERT_TRUE(sandbox_->SqlFile(w, &out)) << w << ": " << sandbox_->error();
  }
  Sql("CREATE DATABASE IF NOT EXISTS marker; CREATE TABLE IF NOT EXISTS marker.done (id INT PRIMARY KEY, n INT);"
      "INSERT INTO marker.done VALUES (1, -7)");
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(rec.mu);
    return !rec.rows.empty() && rec.rows.back().rfind("marker.done INSERT", 0) == 0;
  }, 60s)) << p.status().last_error;
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();

  std::vector<std::string> from_files = DecodeFiles(sandbox_->binlog_dir(), o.start.journal_name, o.start.position);
  ASSERT_EQ(rec.rows.size(), from_files.size());
  for (size_t i = 0; i < from_files.size(); ++i) ASSERT_EQ(rec.rows[i], from_files[i]) << "row change " << i;
  uint64_t values = 0;
  for (const auto& r : rec.rows) values += std::count(r.begin(), r.end(), '=');
  std::printf("[ live ] %zu row changes, %llu values streamed live equal the file decoder's\n", rec.rows.size(),
              static_cast<unsigned long long>(values));
  EXPECT_GT(rec.rows.size(), 400u);
}

// 2,000 transactions of 100 rows; three KILLs of the dump thread and one server
// restart while they stream: every transaction arrives once, in order. With
// max_events = 2 every transaction arrives in pieces, so kills also land
// between the pieces of one transaction and the resume must skip what was
// handed over.
void RunFaultWorkload(MariadbSandbox* sandbox_, EventParserOptions o, const std::string& table) {
  constexpr int kTxns = 2000, kRowsPerTxn = 100, kChunks = 10;
  auto Sql = [&](const std::string& sql) {
    const bool ok = sandbox_->Sql(sql);
    EXPECT_TRUE(ok) << sandbox_->error();
    return ok;
  };
  auto MasterStatus = [&]() {
    std::string out;
    EXPECT_TRUE(sandbox_->Sql("SHOW MASTER STATUS", &out)) << sandbox_->error();
    const size_t tab = out.find('\t');
    return std::pair<std::string, uint64_t>(out.substr(0, tab), std::strtoull(out.c_str() + tab + 1, nullptr, 10));
  };
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS load_db; DROP TABLE IF EXISTS load_db." + table + ";"
                  "CREATE TABLE load_db." + table + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, txn INT NOT NULL, seq INT NOT NULL,"
                  " pad VARCHAR(40)) ENGINE=InnoDB"));
  const auto [file, pos] = MasterStatus();
  // One SQL file per chunk of 200 transactions.
  std::vector<std::string> chunk_files;
  for (int c = 0; c < kChunks; ++c) {
    const std::string path = sandbox_->dir() + "/load-" + std::to_string(c) + ".sql";
    std::ofstream out(path);
    for (int t = c * kTxns / kChunks + 1; t <= (c + 1) * kTxns / kChunks; ++t) {
      out << "BEGIN;\nINSERT INTO load_db." << table << " (txn, seq, pad) VALUES ";
      for (int r = 0; r < kRowsPerTxn; ++r) out << (r ? "," : "") << "(" << t << "," << r << ",'row-" << t << "-" << r << "')";
      out << ";\nCOMMIT;\n";
    }
    chunk_files.push_back(path);
  }

  Recorder rec;
  rec.render = false;
  o.start.journal_name = file;
  o.start.position = pos;
  EventParser p(o, &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming"; }, 20s)) << p.status().last_error;

  std::atomic<int> chunks_written{0};
  std::atomic<bool> pause_after_7{true};
  std::string writer_error;
  std::thread writer([&] {
    for (int c = 0; c < kChunks; ++c) {
      if (c == 7) {
        while (pause_after_7.load()) std::this_thread::sleep_for(10ms);
      }
      if (!sandbox_->SqlFile(chunk_files[c])) {
        writer_error = sandbox_->error();
        return;
      }
      chunks_written = c + 1;
    }
  });
  auto kill_dump = [&] {
    const std::string id = sandbox_->SqlValue(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' LIMIT 1");
    if (id.empty()) return false;
    return sandbox_->Sql("KILL " + id);
  };
  int kills = 0;
  for (size_t at : {300u, 700u, 1100u}) {
    EXPECT_TRUE(WaitFor([&] { return rec.transactions() >= at; }, 60s)) << p.status().last_error;
    if (WaitFor(kill_dump, 5s)) ++kills;
  }
  EXPECT_TRUE(WaitFor([&] { return chunks_written.load() >= 7; }, 120s));
  EXPECT_TRUE(sandbox_->Restart()) << sandbox_->error();
  pause_after_7 = false;
  writer.join();
  ASSERT_EQ(writer_error, "");
  EXPECT_TRUE(WaitFor([&] { return rec.transactions() >= static_cast<size_t>(kTxns); }, 120s))
      << "got " << rec.transactions() << "; " << p.status().last_error;
  std::this_thread::sleep_for(1500ms);  // room for a late duplicate to show up
  const auto st = p.status();
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();

  std::map<int64_t, int> seen;
  int64_t duplicates = 0, out_of_order = 0, last = 0;
  for (int64_t n : rec.txn_numbers) {
    if (++seen[n] > 1) ++duplicates;
    if (n <= last) ++out_of_order;
    last = std::max(last, n);
  }
  int64_t gaps = 0;
  for (int t = 1; t <= kTxns; ++t) gaps += seen.count(t) == 0;
  uint64_t short_txns = 0;
  for (uint64_t n : rec.rows_per_txn) short_txns += n != kRowsPerTxn;
  std::printf("[ faults ] max_events %zu, %llu pieces: %zu transactions, %d kills, 1 restart, %llu reconnects, %llu events skipped on resume: %lld duplicates, %lld gaps, "
              "%lld out of order\n",
              o.buffer.max_events, static_cast<unsigned long long>(rec.pieces), rec.txn_numbers.size(), kills,
              static_cast<unsigned long long>(st.reconnects),
              static_cast<unsigned long long>(st.skipped_events), static_cast<long long>(duplicates), static_cast<long long>(gaps), static_cast<long long>(out_of_order));
  EXPECT_EQ(kills, 3);
  EXPECT_GE(st.reconnects, 4u);
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(gaps, 0);
  EXPECT_EQ(out_of_order, 0);
  EXPECT_EQ(short_txns, 0u);
  EXPECT_EQ(rec.txn_numbers.size(), static_cast<size_t>(kTxns));
}

TEST_F(Replication, KillsAndARestartLoseAndRepeatNoTransaction) { RunFaultWorkload(sandbox_.get(), Options(), "whole"); }

TEST_F(Replication, KillsBetweenThePiecesOfTransactionsLoseAndRepeatNothing) {
  EventParserOptions o = Options();
  o.buffer.max_events = 2;  // BEGIN + rows, then COMMIT: every transaction in two pieces
  RunFaultWorkload(sandbox_.get(), o, "pieces");
}

// A connection lost inside a large transaction: the server's dump thread is
// killed right after the parser handed over the third piece of a 300,000-row
// transaction (its remaining megabytes not yet sent), so the resume must start
// at the transaction and skip exactly the pieces already handed over.
TEST_F(Replication, ALostConnectionInsideALargeTransactionResumesAfterTheDeliveredPieces) {
  constexpr int kRows = 300000;
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS big_db; DROP TABLE IF EXISTS big_db.many;"
                  "CREATE TABLE big_db.many (id INT AUTO_INCREMENT PRIMARY KEY, seq INT NOT NULL, pad CHAR(40))"));
  struct SeqSink : parser::TransactionSink {
    MariadbSandbox* sandbox;
    std::mutex mu;
    std::vector<uint8_t> seen = std::vector<uint8_t>(kRows + 1, 0);
    uint64_t rows = 0, duplicates = 0, pieces = 0;
    bool killed = false, complete = false;
    Status OnTransaction(const Transaction& t) override {
      std::lock_guard<std::mutex> lock(mu);
      ++pieces;
      for (const auto& e : t.events) {
        if (e.kind != TxEventKind::kRows) continue;
        binlog::RowsReader reader;
        reader.Reset(e.rows);
        binlog::RowChange change;
        for (bool done = false;;) {
          CANAL_RETURN_IF_ERROR(reader.Next(&change, &done));
          if (done) break;
          const int64_t seq = change.after.values[1].i64;
          if (seq < 1 || seq > kRows) return Status::Corruption("seq out of range");
          if (seen[seq]++ != 0) ++duplicates;
          ++rows;
        }
      }
      if (t.piece_index == 2 && !killed) {
        killed = true;
        const std::string id = sandbox->SqlValue(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' LIMIT 1");
        if (!id.empty()) sandbox->Sql("KILL " + id);
      }
      if (t.last_piece) complete = true;
      return Status::OK();
    }
  } sink;
  sink.sandbox = sandbox_.get();
  EventParserOptions o = OptionsFromNow();
  o.buffer.max_events = 20;
  EventParser p(o, &sink);
  ASSERT_TRUE(Sql("USE big_db; INSERT INTO big_db.many (seq, pad) SELECT seq, REPEAT('p', 40) FROM seq_1_to_" +
                  std::to_string(kRows)));
  p.Start();
  EXPECT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(sink.mu);
    return sink.complete;
  }, 60s)) << p.status().last_error;
  const parser::ParserStatus st = p.status();
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  std::printf("[ resume ] %llu rows in %llu pieces, %llu reconnects, %llu events skipped on resume, %llu duplicates\n",
              static_cast<unsigned long long>(sink.rows), static_cast<unsigned long long>(sink.pieces),
              static_cast<unsigned long long>(st.reconnects), static_cast<unsigned long long>(st.skipped_events),
              static_cast<unsigned long long>(sink.duplicates));
  EXPECT_TRUE(sink.killed);
  EXPECT_GE(st.reconnects, 1u);
  EXPECT_GT(st.skipped_events, 0u) << "the resume did not start inside the transaction";
  EXPECT_EQ(sink.duplicates, 0u);
  EXPECT_EQ(sink.rows, static_cast<uint64_t>(kRows));
}

// A stopped parser leaves no dump thread on the primary: one left to linger (until its next
// write fails) makes the next dump under the same replica id wait for the primary to end it.
TEST_F(Replication, AStoppedParserLeavesNoDumpThreadOnThePrimary) {
  const auto dump_threads = [] {
    std::string out;
    EXPECT_TRUE(sandbox_->Sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'",
                              &out))
        << sandbox_->error();
    return std::atoi(out.c_str());
  };
  ASSERT_TRUE(WaitFor([&] { return dump_threads() == 0; }, 10s)) << "a dump thread of an earlier test";
  Recorder rec;
  EventParser p(OptionsFromNow(), &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming"; }, 20s)) << p.status().last_error;
  EXPECT_EQ(dump_threads(), 1);
  p.Stop();
  // At once, not at the next heartbeat (1 s here) or event.
  EXPECT_TRUE(WaitFor([&] { return dump_threads() == 0; }, 300ms, 10ms));
}

TEST_F(Replication, IdleHeartbeatsKeepThePositionFreshAndLagAtZero) {
  Recorder rec;
  EventParser p(Options(), &rec);
  p.Start();
  ASSERT_TRUE(WaitFor([&] { return p.status().state == "streaming"; }, 20s)) << p.status().last_error;
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS idle_db"));
  const auto [file, pos] = MasterStatus();
  // Heartbeats every second (Options()); wait for a few.
  EXPECT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(rec.mu);
    return rec.idles >= 3;
  }, 10s));
  const parser::ParserStatus st = p.status();
  p.Stop();
  EXPECT_EQ(st.lag_ms, 0);
  EXPECT_EQ(st.reconnects, 0u);
  EXPECT_EQ(st.position.journal_name, file);
  EXPECT_EQ(st.position.position, pos);
}

TEST_F(Replication, AnEventOver16MiBArrivesWhole) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS big_db; DROP TABLE IF EXISTS big_db.b;"
                  "CREATE TABLE big_db.b (id INT PRIMARY KEY, txn INT, data LONGBLOB)"));
  Recorder rec;
  rec.render = false;
  const EventParserOptions o = OptionsFromNow();
  EventParser p(o, &rec);
  p.Start();
  constexpr size_t kBlob = 20u << 20;  // the event spans two 16 MiB packets
  ASSERT_TRUE(Sql("INSERT INTO big_db.b VALUES (1, 1, REPEAT('x', " + std::to_string(kBlob) + "))"));
  EXPECT_TRUE(WaitFor([&] { return rec.transactions() > 0; }, 30s)) << p.status().last_error;
  p.Stop();
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  EXPECT_EQ(rec.largest_value, kBlob);
}

TEST_F(Replication, ColumnNamesComeFromTheSchemaWhenTheBinlogHasNone) {
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS meta_db; DROP TABLE IF EXISTS meta_db.t;"
                  "CREATE TABLE meta_db.t (id INT PRIMARY KEY, txn INT, label VARCHAR(10))"));
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = 'MINIMAL'"));
  Recorder rec;
  const EventParserOptions o = OptionsFromNow();
  EventParser p(o, &rec);
  p.Start();
  // A new connection takes the new global value.
  const bool written = Sql("INSERT INTO meta_db.t VALUES (1, 7, 'named')");
  EXPECT_TRUE(WaitFor([&] { return rec.transactions() > 0; }, 30s)) << p.status().last_error;
  p.Stop();
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = 'FULL'"));
  ASSERT_TRUE(written);
  ASSERT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  ASSERT_EQ(rec.rows.size(), 1u);
  EXPECT_EQ(rec.rows[0], "meta_db.t INSERT after: id=1 txn=7 label=named");
}

// Two marker transactions A then B; a start configured between them must
// deliver B first.
class StartPositions : public Replication {
 protected:
  void SetUp() override {
    Replication::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS start_db; DROP TABLE IF EXISTS start_db.m;"
                    "CREATE TABLE start_db.m (id INT AUTO_INCREMENT PRIMARY KEY, mark INT NOT NULL)"));
  }
  static int64_t FirstMark(EventParserOptions o) {
    Recorder rec;
    EventParser p(o, &rec);
    RunUntil(&p, [&] { return rec.transactions() > 0; }, 30s);
    EXPECT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
    std::lock_guard<std::mutex> lock(rec.mu);
    return rec.txn_numbers.empty() ? -1 : rec.txn_numbers.front();
  }
};

TEST_F(StartPositions, ByFileAndPosition) {
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (101)"));
  const auto [file, pos] = MasterStatus();
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (102)"));
  EventParserOptions o = Options();
  o.start.journal_name = file;
  o.start.position = pos;
  EXPECT_EQ(FirstMark(o), 102);
}

TEST_F(StartPositions, ByMariadbGtid) {
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (201)"));
  const std::string gtid = sandbox_->SqlValue("SELECT @@gtid_binlog_pos");
  ASSERT_FALSE(gtid.empty());
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (202)"));
  EventParserOptions o = Options();
  o.start.gtid = gtid;
  EXPECT_EQ(FirstMark(o), 202) << "start after GTID " << gtid;
}

TEST_F(StartPositions, ByTimestamp) {
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (301)"));
  // Binlog times are whole seconds: put a second boundary between A and B.
  std::this_thread::sleep_for(1100ms);
  const int64_t t = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100 - t % 1000));
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (302)"));
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (303)"));
  EventParserOptions o = Options();
  o.start.timestamp_ms = t;
  EXPECT_EQ(FirstMark(o), 302);
}

// The parser must end on its own with the error, not retry forever.
class Misconfigured : public Replication {
 protected:
  // Purges binlogs up to and including `file`. MariaDB keeps a file until its
  // binlog checkpoint has moved on, so flush and retry until it is gone.
  static bool PurgeThrough(const std::string& file) {
    return WaitFor([&] {
      if (!sandbox_->Sql("FLUSH BINARY LOGS")) return false;
      const std::string current = MasterStatus().first;
      std::string out;
      return sandbox_->Sql("PURGE BINARY LOGS TO '" + current + "'") && sandbox_->Sql("SHOW BINARY LOGS", &out) &&
             out.find(file + "\t") == std::string::npos;
    }, 10s);
  }
  static Status RunToFailure(EventParserOptions o, uint64_t* reconnects) {
    Recorder rec;
    EventParser p(o, &rec);
    p.Start();
    const bool ended = WaitFor([&] { return !p.running(); }, 20s);
    *reconnects = p.status().reconnects;
    p.Stop();
    EXPECT_TRUE(ended) << "the parser kept retrying: " << p.status().last_error;
    return p.fatal_error();
  }
};

TEST_F(Misconfigured, WrongPasswordSaysAccessDeniedAndWhichSetting) {
  EventParserOptions o = Options();
  o.master.password = "not-the-password";
  uint64_t reconnects = 0;
  Status s = RunToFailure(o, &reconnects);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("Access denied"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("canal.instance.dbPassword"), std::string::npos) << s.ToString();
  EXPECT_EQ(reconnects, 0u);
}

TEST_F(Misconfigured, UserWithoutReplicationSlaveIsToldTheGrant) {
  ASSERT_TRUE(Sql("SET SESSION sql_log_bin=0; CREATE USER IF NOT EXISTS 'norepl'@'127.0.0.1' IDENTIFIED BY 'norepl';"
                  "GRANT SELECT ON *.* TO 'norepl'@'127.0.0.1'"));
  EventParserOptions o = Options();
  o.master.user = "norepl";
  const auto [file, pos] = MasterStatus();
  o.start.journal_name = file;  // past SHOW MASTER STATUS, which needs a privilege of its own
  o.start.position = pos;
  o.master.password = "norepl";
  uint64_t reconnects = 0;
  Status s = RunToFailure(o, &reconnects);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("REPLICATION SLAVE"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("GRANT"), std::string::npos) << s.ToString();
  EXPECT_EQ(reconnects, 0u);
}

TEST_F(Misconfigured, MixedBinlogFormatIsRefusedWithTheFix) {
  ASSERT_TRUE(Sql("SET GLOBAL binlog_format = 'MIXED'"));
  EventParserOptions o = Options();
  uint64_t reconnects = 0;
  Status s = RunToFailure(o, &reconnects);
  ASSERT_TRUE(Sql("SET GLOBAL binlog_format = 'ROW'"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("binlog_format is MIXED; set binlog_format=ROW"), std::string::npos) << s.ToString();
}

TEST_F(Misconfigured, PurgedPositionStopsByDefaultAndNamesTheChoices) {
  const auto [old_file, old_pos] = MasterStatus();
  ASSERT_TRUE(PurgeThrough(old_file));
  EventParserOptions o = Options();
  o.start.journal_name = old_file;
  o.start.position = old_pos;
  uint64_t reconnects = 0;
  Status s = RunToFailure(o, &reconnects);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("1236"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(old_file), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("invalid.position.action"), std::string::npos) << s.ToString();
}

TEST_F(Misconfigured, PurgedPositionWithLatestJumpsAndStreamsOn) {
  const auto [old_file, old_pos] = MasterStatus();
  ASSERT_TRUE(PurgeThrough(old_file));
  ASSERT_TRUE(Sql("CREATE DATABASE IF NOT EXISTS start_db; CREATE TABLE IF NOT EXISTS start_db.m "
                  "(id INT AUTO_INCREMENT PRIMARY KEY, mark INT NOT NULL)"));
  EventParserOptions o = Options();
  o.start.journal_name = old_file;
  o.start.position = old_pos;
  o.on_invalid_position = parser::InvalidPositionAction::kLatest;
  Recorder rec;
  EventParser p(o, &rec);
  p.Start();
  // Streaming again after the refused start, from the end as it was then.
  ASSERT_TRUE(WaitFor([&] { return p.status().reconnects >= 1 && p.status().state == "streaming"; }, 20s))
      << p.status().last_error;
  ASSERT_TRUE(Sql("INSERT INTO start_db.m (mark) VALUES (401)"));
  EXPECT_TRUE(WaitFor([&] { return rec.transactions() > 0; }, 20s));
  p.Stop();
  EXPECT_TRUE(p.fatal_error().ok()) << p.fatal_error().ToString();
  ASSERT_FALSE(rec.txn_numbers.empty());
  EXPECT_EQ(rec.txn_numbers.front(), 401);
}

}  // namespace
}  // namespace canal::testing
