// MySQL failover through the replay primary (docs/replication.md, "Failover"): two servers
// with different server UUIDs sharing one GTID history, written as binlog files (support/
// mysql_binlog_writer.h) — the primary A, and B, its replica promoted in its place, whose
// binlog holds A's transactions (replicated) and then its own, tagged ones too. The parser
// (candidates A,B) streams A, A dies, B is made primary, and the stream follows by GTID:
// every transaction of the history once, in order; each transaction's GTID state (what a
// cursor carries) exactly the transactions before it. What B lacks stops the destination
// (or is counted, diverged=continue); a cursor taken on A resumes on B; without GTIDs the
// destination stops naming the fix, or resumes by time when told to.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "canal/parser/binlog/gtid_set.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/gtid_state.h"
#include "replay_test_util.h"
#include "support/mysql_binlog_writer.h"
#include "support/row_render.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kUuidA = "a1a1a1a1-0000-4000-8000-0000000000a1";
constexpr const char* kUuidB = "b2b2b2b2-0000-4000-8000-0000000000b2";

// One transaction as the sink received it.
struct Received {
  std::string gtid;
  std::string base;  // the GTID state before it ("-" when the transaction carried none)
  std::vector<uint32_t> ids;
  uint32_t timestamp = 0;
  // Where the piece lies (a large transaction arrives in pieces).
  std::string file;
  uint64_t begin = 0, end = 0;
  uint32_t piece = 0;
  bool last_piece = true;
};

class TxnSink : public parser::TransactionSink {
 public:
  Status OnTransaction(const parser::Transaction& t) override {
    Received r;
    r.gtid = t.gtid;
    r.base = t.gtid_base ? *t.gtid_base : "-";
    r.timestamp = t.timestamp;
    r.file = t.file;
    r.begin = t.begin_offset;
    r.end = t.end_offset;
    r.piece = t.piece_index;
    r.last_piece = t.last_piece;
    std::vector<std::string> lines;
    for (const parser::TxEvent& e : t.events) {
      if (e.kind == parser::TxEventKind::kRows) CANAL_RETURN_IF_ERROR(RenderRows(e.rows, &lines));
    }
    for (const std::string& line : lines) {
      const size_t at = line.find("id=");
      if (at != std::string::npos) r.ids.push_back(static_cast<uint32_t>(std::stoul(line.substr(at + 3))));
    }
    std::lock_guard<std::mutex> lock(mu_);
    got_.push_back(std::move(r));
    return Status::OK();
  }
  std::vector<Received> got() const {
    std::lock_guard<std::mutex> lock(mu_);
    return got_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return got_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<Received> got_;
};

// A stored cursor handed to the parser at its start.
class FixedCursor : public parser::CursorSource {
 public:
  explicit FixedCursor(LogPosition p) : p_(std::move(p)) {}
  Status LoadCursor(LogPosition* cursor, bool* found) override {
    *cursor = p_;
    *found = true;
    return Status::OK();
  }

 private:
  LogPosition p_;
};

// The history's transactions in order, with their GTID texts.
struct Expected {
  std::vector<std::string> gtids;
  std::vector<uint32_t> ids;
};

class ReplayFailover : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/canal-replay-failover-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    history_.uuids = {kUuidA, kUuidB};
  }
  void TearDown() override {
    if (b_) b_->Stop();
    if (a_) a_->Stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // The transactions of runs [first, end).
  Expected RunsOf(size_t first, size_t end) const {
    Expected e;
    std::vector<MysqlTransaction> all;
    Status s = HistoryTransactions(history_, 0, &all);
    EXPECT_TRUE(s.ok()) << s.ToString();
    size_t k = 0;
    for (size_t r = 0; r < history_.runs.size(); ++r) {
      const GtidRun& run = history_.runs[r];
      for (int64_t g = run.first_gno; g <= run.last_gno; ++g, ++k) {
        if (r < first || r >= end) continue;
        e.gtids.push_back(std::string(history_.uuids[run.uuid_index]) + (run.tag.empty() ? "" : ":" + run.tag) + ":" +
                          std::to_string(g));
        e.ids.push_back(IdOf(run.uuid_index, run.tag, g));
      }
    }
    return e;
  }
  std::string SetOf(size_t end_run) const {
    std::string text;
    Status s = HistorySet(history_, end_run, &text);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return text;
  }

  // A server's binlog: one file per group of runs [from, to), each after the runs before it.
  std::vector<std::string> WriteFiles(const std::string& prefix, uint32_t server_id,
                                      const std::vector<std::pair<size_t, size_t>>& groups) {
    return WriteFiles(history_, prefix, server_id, groups);
  }
  std::vector<std::string> WriteFiles(const GtidHistory& history, const std::string& prefix, uint32_t server_id,
                                      const std::vector<std::pair<size_t, size_t>>& groups) {
    std::vector<std::string> paths;
    for (size_t i = 0; i < groups.size(); ++i) {
      MysqlBinlogSpec spec;
      spec.server_id = server_id;
      EXPECT_TRUE(HistoryBinlog(history, groups[i].first, &spec).ok());
      // Only the runs of this group.
      std::vector<uint32_t> keep;
      for (size_t r = groups[i].first; r < groups[i].second; ++r) {
        const GtidRun& run = history.runs[r];
        for (int64_t g = run.first_gno; g <= run.last_gno; ++g) keep.push_back(IdOf(run.uuid_index, run.tag, g));
      }
      std::vector<MysqlTransaction> mine;
      for (const MysqlTransaction& t : spec.transactions) {
        if (std::find(keep.begin(), keep.end(), t.ids.at(0)) != keep.end()) mine.push_back(t);
      }
      spec.transactions = std::move(mine);
      spec.next_file = i + 1 < groups.size() ? prefix + "." + Seq(i + 2) : "";
      std::string path;
      Status s = WriteMysqlBinlog(spec, dir_, prefix + "." + Seq(i + 1), &path);
      EXPECT_TRUE(s.ok()) << s.ToString();
      paths.push_back(path);
    }
    return paths;
  }
  static std::string Seq(size_t n) {
    std::string s = std::to_string(n);
    return std::string(6 - s.size(), '0') + s;
  }

  ReplayPrimaryOptions ServerOptions(uint32_t server_id, const char* uuid, std::vector<std::string> files,
                                     std::string executed) const {
    ReplayPrimaryOptions o;
    o.server_id = server_id;
    o.server_uuid = uuid;
    o.binlog_files = std::move(files);
    o.gtid_executed = std::move(executed);
    o.tls = false;
    o.account_plugin = "mysql_native_password";
    return o;
  }

  parser::EventParserOptions ParserOptions(const ReplayPrimaryOptions& o) const {
    parser::EventParserOptions po;
    po.destination = "failover";
    po.master = ReplicaOptions(*a_, o);
    po.master.port = a_ ? a_->port() : b_->port();
    po.candidates = {{"127.0.0.1", a_->port()}, {"127.0.0.1", b_ ? b_->port() : a_->port()}};
    po.detect_retry_threshold = 1;
    po.slave_id = 9301;
    po.heartbeat_period_ms = 1000;
    po.reconnect_initial_ms = 50;
    po.reconnect_max_ms = 500;
    return po;
  }

  static bool WaitFor(const std::function<bool()>& done, std::chrono::seconds limit = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }

  // Every transaction received: the expected GTIDs in order, each with its row, and each
  // carrying the exact GTID state before it (what a cursor resumes from on any server).
  void ExpectExactly(const std::vector<Received>& got, const Expected& want, const std::string& state_before) {
    ASSERT_EQ(got.size(), want.gtids.size());
    binlog::GtidSet state;
    ASSERT_TRUE(binlog::GtidSet::Parse(state_before, &state).ok());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].gtid, want.gtids[i]) << "transaction " << i;
      ASSERT_EQ(got[i].ids.size(), 1u) << got[i].gtid;
      EXPECT_EQ(got[i].ids[0], want.ids[i]) << got[i].gtid;
      binlog::GtidSet base;
      ASSERT_TRUE(binlog::GtidSet::Parse(got[i].base, &base).ok()) << got[i].base;
      EXPECT_TRUE(base == state) << "before " << got[i].gtid << ": carried " << got[i].base << ", the state is "
                                 << state.ToString();
      binlog::GtidSet own;
      ASSERT_TRUE(binlog::GtidSet::Parse(want.gtids[i], &own).ok());
      ASSERT_TRUE(state.Add(own).ok());
    }
  }

  std::string dir_;
  GtidHistory history_;
  std::unique_ptr<ReplayPrimary> a_, b_;
};

// The history of these tests: A writes runs 0-3 (untagged and tagged); B replicated them and,
// once promoted, writes runs 4-5 of its own.
void ShareHistory(GtidHistory* h) {
  h->runs = {{0, "", 1, 40}, {0, "blue", 1, 10}, {0, "", 41, 50}, {0, "", 51, 60}, {1, "", 1, 30}, {1, "green", 1, 5}};
}

TEST_F(ReplayFailover, AKilledPrimarysPromotedReplicaIsFollowedByGtidExactly) {
  ShareHistory(&history_);
  ReplayPrimaryOptions ao = ServerOptions(1, kUuidA, WriteFiles("a-bin", 1, {{0, 2}, {2, 4}}), SetOf(4));
  ReplayPrimaryOptions bo = ServerOptions(2, kUuidB, WriteFiles("b-bin", 2, {{0, 3}, {3, 4}, {4, 6}}), SetOf(6));
  bo.read_only = true;  // a replica until the promotion
  bo.replicating_from = "127.0.0.1:1";
  a_ = StartPrimary(ao);
  b_ = StartPrimary(bo);
  ASSERT_TRUE(a_ && b_);
  TxnSink sink;
  parser::EventParserOptions po = ParserOptions(ao);
  po.start.journal_name = "a-bin.000001";
  po.start.position = 4;
  parser::EventParser p(po, &sink);
  p.Start();
  const Expected on_a = RunsOf(0, 4);
  ASSERT_TRUE(WaitFor([&] { return sink.size() >= on_a.gtids.size() || !p.running(); })) << p.status().last_error;
  ASSERT_EQ(sink.size(), on_a.gtids.size()) << p.status().last_error;

  // A dies; B is promoted as orchestrator does (replication stopped and reset, writable).
  a_->Stop();
  const auto killed = std::chrono::steady_clock::now();
  b_->SetReplicatingFrom("");
  b_->SetReadOnly(false);
  const Expected all = RunsOf(0, 6);
  ASSERT_TRUE(WaitFor([&] { return sink.size() >= all.gtids.size() || !p.running(); })) << p.status().last_error;
  const double follow_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  std::printf("[ figure ] MySQL failover followed in %.2f s (from the kill to B's last transaction)\n", follow_s);
  EXPECT_LT(follow_s, 10.0);
  std::this_thread::sleep_for(300ms);  // nothing more may come
  ExpectExactly(sink.got(), all, "");
  const parser::ParserStatus st = p.status();
  EXPECT_TRUE(p.running()) << st.last_error;
  EXPECT_EQ(st.failovers, 1u);
  EXPECT_EQ(st.failover_lost_transactions, 0u);
  EXPECT_EQ(st.failover_new_transactions, 35u) << "B:1-30 and B:green:1-5";
  EXPECT_NE(st.server.find(std::to_string(b_->port())), std::string::npos) << st.server;
  EXPECT_EQ(b_->stats().gtid_dumps, 1u);
  EXPECT_EQ(b_->stats().transactions_skipped, on_a.gtids.size()) << "B skipped exactly what A had delivered";
  p.Stop();
}

TEST_F(ReplayFailover, APromotedReplicaThatLacksDeliveredTransactionsStopsNamingThem) {
  ShareHistory(&history_);
  // B stopped replicating after A:50: A:51-60 reached clients, never B.
  ReplayPrimaryOptions ao = ServerOptions(1, kUuidA, WriteFiles("a-bin", 1, {{0, 4}}), SetOf(4));
  std::string b_set;
  GtidHistory b_history = history_;
  b_history.runs.erase(b_history.runs.begin() + 3);
  ASSERT_TRUE(HistorySet(b_history, 5, &b_set).ok());
  ReplayPrimaryOptions bo = ServerOptions(2, kUuidB, WriteFiles(b_history, "b-bin", 2, {{0, 3}, {3, 5}}), b_set);
  bo.read_only = true;
  a_ = StartPrimary(ao);
  b_ = StartPrimary(bo);
  ASSERT_TRUE(a_ && b_);
  for (const bool go_on : {false, true}) {
    SCOPED_TRACE(go_on ? "diverged=continue" : "diverged=stop");
    if (!a_) {
      a_ = StartPrimary(ao);
      ASSERT_TRUE(a_);
    }
    TxnSink sink;
    parser::EventParserOptions po = ParserOptions(ao);
    po.start.journal_name = "a-bin.000001";
    po.start.position = 4;
    po.on_diverged = go_on ? parser::DivergedAction::kContinue : parser::DivergedAction::kStop;
    b_->SetReadOnly(true);
    parser::EventParser p(po, &sink);
    p.Start();
    const size_t on_a = RunsOf(0, 4).gtids.size();
    ASSERT_TRUE(WaitFor([&] { return sink.size() >= on_a || !p.running(); })) << p.status().last_error;
    a_->Stop();
    a_.reset();
    b_->SetReadOnly(false);
    if (!go_on) {
      ASSERT_TRUE(WaitFor([&] { return !p.running(); })) << "still running: " << p.status().last_error;
      const Status error = p.fatal_error();
      EXPECT_EQ(parser::ParserErrorKind(error), "diverged") << error.ToString();
      EXPECT_NE(error.message().find("lacks 10 transaction(s) that clients already received: " +
                                     std::string(kUuidA) + ":51-60"),
                std::string::npos)
          << error.ToString();
      EXPECT_NE(error.message().find("canal.instance.failover.diverged=continue"), std::string::npos);
      EXPECT_EQ(sink.size(), on_a) << "nothing of B's was delivered";
      continue;
    }
    // B's own (runs 4-5) follow what was delivered; A:51-60 is counted as lost.
    Expected want = RunsOf(0, 4);
    const Expected own = RunsOf(4, 6);
    want.gtids.insert(want.gtids.end(), own.gtids.begin(), own.gtids.end());
    want.ids.insert(want.ids.end(), own.ids.begin(), own.ids.end());
    ASSERT_TRUE(WaitFor([&] { return sink.size() >= want.gtids.size() || !p.running(); })) << p.status().last_error;
    std::this_thread::sleep_for(300ms);
    const std::vector<Received> got = sink.got();
    ASSERT_EQ(got.size(), want.gtids.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].gtid, want.gtids[i]) << i;
    // After the move, the state is what B has of the delivered set: A:51-60 is not in it.
    binlog::GtidSet first_on_b;
    ASSERT_TRUE(binlog::GtidSet::Parse(got[RunsOf(0, 4).gtids.size()].base, &first_on_b).ok());
    binlog::GtidSet expected_base;
    ASSERT_TRUE(binlog::GtidSet::Parse(SetOf(3), &expected_base).ok());
    EXPECT_TRUE(first_on_b == expected_base) << first_on_b.ToString();
    const parser::ParserStatus st = p.status();
    EXPECT_TRUE(p.running()) << st.last_error;
    EXPECT_EQ(st.failover_lost_transactions, 10u);
    EXPECT_EQ(st.failover_new_transactions, 35u);
    p.Stop();
  }
}

TEST_F(ReplayFailover, ACursorTakenOnTheOldPrimaryResumesOnTheNewOneAfterARestart) {
  ShareHistory(&history_);
  ReplayPrimaryOptions ao = ServerOptions(1, kUuidA, WriteFiles("a-bin", 1, {{0, 4}}), SetOf(4));
  ReplayPrimaryOptions bo = ServerOptions(2, kUuidB, WriteFiles("b-bin", 2, {{0, 2}, {2, 6}}), SetOf(6));
  a_ = StartPrimary(ao);
  ASSERT_TRUE(a_);
  // Stream A to a point inside run 2, as a client acked it: the cursor a restart reads.
  TxnSink first;
  parser::EventParserOptions po = ParserOptions(ao);
  po.candidates.clear();
  po.start.journal_name = "a-bin.000001";
  po.start.position = 4;
  LogPosition cursor;
  {
    parser::EventParser p(po, &first);
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return first.size() >= RunsOf(0, 4).gtids.size() || !p.running(); }));
    p.Stop();
    const std::vector<Received> got = first.got();
    const size_t k = RunsOf(0, 2).gtids.size() + 3;  // the 3rd transaction of run 2 (A:43)
    ASSERT_GT(got.size(), k);
    cursor.journal_name = "a-bin.000001";
    cursor.position = 4;  // A's offsets: wrong on B, which must not matter
    cursor.gtid = got[k - 1].gtid;
    cursor.gtid_set = std::make_shared<const std::string>(got[k - 1].base);
  }
  a_->Stop();
  // canal-server restarts while B is primary: only B is there.
  b_ = StartPrimary(bo);
  ASSERT_TRUE(b_);
  TxnSink sink;
  parser::EventParserOptions pb = po;
  pb.master.port = b_->port();
  pb.start = {};
  FixedCursor stored(cursor);
  parser::EventParser p(pb, &sink, &stored);
  p.Start();
  const Expected rest = RunsOf(0, 6);
  Expected want;
  const size_t done = RunsOf(0, 2).gtids.size() + 3;
  want.gtids.assign(rest.gtids.begin() + done, rest.gtids.end());
  want.ids.assign(rest.ids.begin() + done, rest.ids.end());
  ASSERT_TRUE(WaitFor([&] { return sink.size() >= want.gtids.size() || !p.running(); })) << p.status().last_error;
  std::this_thread::sleep_for(300ms);
  // The state before the first transaction on B: runs 0-1 and A:41-43.
  binlog::GtidSet before;
  ASSERT_TRUE(binlog::GtidSet::Parse(cursor.gtid_set ? *cursor.gtid_set : "", &before).ok());
  binlog::GtidSet own;
  ASSERT_TRUE(binlog::GtidSet::Parse(cursor.gtid, &own).ok());
  ASSERT_TRUE(before.Add(own).ok());
  ExpectExactly(sink.got(), want, before.ToString());
  EXPECT_EQ(b_->stats().gtid_dumps, 1u) << "a MySQL cursor with a GTID set resumes by it";
  EXPECT_TRUE(p.running()) << p.status().last_error;
  p.Stop();
}

// A damaged gtidSet in a stored cursor (a hand edit, a bad copy): a WARN names it and the
// position still says where on this server; it is never taken for an empty state (which on
// MySQL would mean "from the first transaction").
TEST_F(ReplayFailover, ADamagedGtidSetInTheCursorIsReportedAndThePositionUsed) {
  ShareHistory(&history_);
  ReplayPrimaryOptions ao = ServerOptions(1, kUuidA, WriteFiles("a-bin", 1, {{0, 2}, {2, 4}}), SetOf(4));
  a_ = StartPrimary(ao);
  ASSERT_TRUE(a_);
  LogPosition cursor;
  cursor.journal_name = "a-bin.000002";
  cursor.position = 4;
  cursor.gtid_set = std::make_shared<const std::string>(std::string(kUuidA) + ":1-\x01zz");
  FixedCursor stored(cursor);
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>("failover", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  TxnSink sink;
  parser::EventParserOptions po = ParserOptions(ao);
  po.candidates.clear();
  parser::EventParser p(po, &sink, &stored, logger);
  p.Start();
  const Expected want = RunsOf(2, 4);  // a-bin.000002 holds runs 2-3
  ASSERT_TRUE(WaitFor([&] { return sink.size() >= want.gtids.size() || !p.running(); })) << p.status().last_error;
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(sink.size(), want.gtids.size());
  const std::vector<Received> got = sink.got();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].gtid, want.gtids[i]);
  EXPECT_EQ(a_->stats().gtid_dumps, 0u);
  logger->flush();
  const std::string text = log.str();
  EXPECT_NE(text.find("the stored cursor's GTID state is unusable"), std::string::npos) << text;
  EXPECT_NE(text.find("gtidSet"), std::string::npos);
  EXPECT_EQ(text.find('\x01'), std::string::npos) << "the damaged bytes are not written to the log raw";
  p.Stop();
}

// A cursor inside a large transaction (a client acked its first piece). On the server that
// wrote it the place is kept (SHOW BINLOG EVENTS shows that very transaction at that offset):
// the rest of it follows, nothing twice. On another server whose binlog has the same file name
// but another layout, the transaction is delivered again whole, by GTID, and the WARN says so.
TEST_F(ReplayFailover, ACursorInsideALargeTransactionKeepsItsPlaceOnlyWhereTheBinlogHoldsIt) {
  std::vector<MysqlTransaction> txns(3);
  for (int64_t g = 1; g <= 3; ++g) {
    MysqlTransaction& t = txns[g - 1];
    t.uuid = kUuidA;
    t.gno = g;
    t.timestamp = 1'700'000'000 + static_cast<uint32_t>(g);
    const uint32_t rows = g == 2 ? 20 : 1;
    for (uint32_t i = 0; i < rows; ++i) t.ids.push_back(static_cast<uint32_t>(g * 100 + i));
    t.rows_per_event = 5;
  }
  MysqlBinlogSpec a;
  a.transactions = txns;
  MysqlBinlogSpec b = a;
  b.server_id = 2;
  b.checksum = false;  // the same transactions at other offsets
  std::string pa, pb;
  std::filesystem::create_directories(dir_ + "/b");
  ASSERT_TRUE(WriteMysqlBinlog(a, dir_, "binlog.000001", &pa).ok());
  ASSERT_TRUE(WriteMysqlBinlog(b, dir_ + "/b", "binlog.000001", &pb).ok());
  const std::string all = std::string(kUuidA) + ":1-3";
  ReplayPrimaryOptions ao = ServerOptions(1, kUuidA, {pa}, all);
  ReplayPrimaryOptions bo = ServerOptions(2, kUuidB, {pb}, all);
  a_ = StartPrimary(ao);
  ASSERT_TRUE(a_);

  // The first piece of A:2, as the sink got it: the cursor a client's ack of it stores.
  parser::EventParserOptions po = ParserOptions(ao);
  po.candidates.clear();
  po.start.journal_name = "binlog.000001";
  po.start.position = 4;
  po.buffer.max_events = 2;
  LogPosition cursor;
  size_t acked_rows = 0;
  {
    TxnSink sink;
    parser::EventParser p(po, &sink);
    p.Start();
    ASSERT_TRUE(WaitFor([&] {
      const std::vector<Received> got = sink.got();
      return (!got.empty() && got.back().gtid == std::string(kUuidA) + ":3") || !p.running();
    }));
    p.Stop();
    for (const Received& r : sink.got()) {
      if (r.gtid != std::string(kUuidA) + ":2" || r.piece != 0) continue;
      ASSERT_FALSE(r.last_piece) << "A:2 must arrive in pieces";
      cursor.journal_name = r.file;
      cursor.position = r.end;
      cursor.transaction_begin = r.begin;
      cursor.gtid = r.gtid;
      cursor.gtid_set = std::make_shared<const std::string>(r.base);
      acked_rows = r.ids.size();
    }
    ASSERT_GT(acked_rows, 0u);
    ASSERT_LT(acked_rows, 20u);
  }
  auto rows_after = [](const std::vector<Received>& got) {
    std::vector<uint32_t> ids;
    for (const Received& r : got) ids.insert(ids.end(), r.ids.begin(), r.ids.end());
    return ids;
  };
  std::vector<uint32_t> whole;  // A:2 and A:3, every row
  for (size_t t = 1; t < 3; ++t) whole.insert(whole.end(), txns[t].ids.begin(), txns[t].ids.end());

  // The same server after a restart: the rest of A:2, then A:3.
  {
    TxnSink sink;
    FixedCursor stored(cursor);
    parser::EventParserOptions pr = po;
    pr.start = {};
    parser::EventParser p(pr, &sink, &stored);
    p.Start();
    const size_t want = whole.size() - acked_rows;
    ASSERT_TRUE(WaitFor([&] { return rows_after(sink.got()).size() >= want || !p.running(); }))
        << p.status().last_error;
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(rows_after(sink.got()), std::vector<uint32_t>(whole.begin() + static_cast<ptrdiff_t>(acked_rows),
                                                           whole.end()));
    EXPECT_EQ(a_->stats().gtid_dumps, 0u) << "the place inside the transaction was kept, by position";
    EXPECT_GT(p.status().skipped_events, 0u);
    p.Stop();
  }
  a_->Stop();
  // Another server, the same file name, another layout: A:2 whole again, by GTID, then A:3.
  b_ = StartPrimary(bo);
  ASSERT_TRUE(b_);
  {
    TxnSink sink;
    FixedCursor stored(cursor);
    parser::EventParserOptions pr = po;
    pr.start = {};
    pr.master.port = b_->port();
    parser::EventParser p(pr, &sink, &stored);
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return rows_after(sink.got()).size() >= whole.size() || !p.running(); }))
        << p.status().last_error;
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(rows_after(sink.got()), whole);
    EXPECT_EQ(b_->stats().gtid_dumps, 1u);
    EXPECT_EQ(b_->stats().transactions_skipped, 1u) << "A:1 only";
    p.Stop();
  }
}

// canal.instance.detecting.*: the statement runs while the stream is caught up; a failure is
// counted, and with heartbeatHaEnable `threshold` failures in a row end the session and the
// candidates are asked again (here A is still the only primary: the stream goes back to it,
// resuming exactly).
TEST_F(ReplayFailover, AFailingDetectingStatementIsCountedAndWithHaEndsTheSession) {
  ShareHistory(&history_);
  ReplayPrimaryOptions ao = ServerOptions(1, kUuidA, WriteFiles("a-bin", 1, {{0, 4}}), SetOf(4));
  ReplayPrimaryOptions bo = ServerOptions(2, kUuidB, WriteFiles("b-bin", 2, {{0, 4}}), SetOf(4));
  bo.read_only = true;
  a_ = StartPrimary(ao);
  b_ = StartPrimary(bo);
  ASSERT_TRUE(a_ && b_);
  const Expected want = RunsOf(0, 4);
  for (const bool ha : {false, true}) {
    SCOPED_TRACE(ha ? "heartbeatHaEnable" : "detection only");
    TxnSink sink;
    parser::EventParserOptions po = ParserOptions(ao);
    po.start.journal_name = "a-bin.000001";
    po.start.position = 4;
    po.heartbeat_period_ms = 200;  // the statement runs at most once per period
    po.detect_retry_threshold = 2;
    po.detecting_enable = true;
    po.detecting_sql = "SELECT canal_health_check()";  // the replay primary knows no such function
    po.detecting_ha = ha;
    parser::EventParser p(po, &sink);
    p.Start();
    ASSERT_TRUE(WaitFor([&] { return p.status().detecting_failures >= 4 || !p.running(); })) << p.status().last_error;
    std::this_thread::sleep_for(300ms);
    const parser::ParserStatus st = p.status();
    EXPECT_TRUE(p.running()) << st.last_error;
    ExpectExactly(sink.got(), want, "");
    if (ha) {
      EXPECT_GE(st.reconnects, 1u) << "the session ended after 2 failures in a row";
    } else {
      EXPECT_EQ(st.reconnects, 0u) << "without heartbeatHaEnable a failure is only counted";
    }
    EXPECT_EQ(st.failovers, 0u);
    p.Stop();
  }
}

// gtid_mode=OFF: anonymous transactions, no set to resume by. A and B hold the same
// transactions (B replicated A) at different offsets; B has more.
class ReplayFailoverWithoutGtids : public ReplayFailover {
 protected:
  void Build() {
    std::vector<MysqlTransaction> txns;
    for (uint32_t i = 0; i < 70; ++i) {
      MysqlTransaction t;
      t.timestamp = 1'700'000'000 + i;
      t.ids = {1000 + i};
      txns.push_back(t);
    }
    MysqlBinlogSpec a;
    a.server_id = 1;
    a.transactions.assign(txns.begin(), txns.begin() + 50);
    MysqlBinlogSpec b;
    b.server_id = 2;
    b.transactions = txns;
    std::string pa, pb;
    ASSERT_TRUE(WriteMysqlBinlog(a, dir_, "a-bin.000001", &pa).ok());
    ASSERT_TRUE(WriteMysqlBinlog(b, dir_, "b-bin.000001", &pb).ok());
    a_size_ = std::filesystem::file_size(pa);  // B's offset of transaction 50: the same events before it
    ao_ = ServerOptions(1, kUuidA, {pa}, "");
    bo_ = ServerOptions(2, kUuidB, {pb}, "");
    ao_.variables["gtid_mode"] = "OFF";
    bo_.variables["gtid_mode"] = "OFF";
    bo_.read_only = true;
    a_ = StartPrimary(ao_);
    b_ = StartPrimary(bo_);
    ASSERT_TRUE(a_ && b_);
  }
  // A parser (candidates A, B) started on A's first file; true once it delivered A's 50.
  bool StreamA(parser::EventParserOptions po, TxnSink* sink) {
    po.start.journal_name = "a-bin.000001";
    po.start.position = 4;
    parser_ = std::make_unique<parser::EventParser>(po, sink);
    parser_->Start();
    return WaitFor([&] { return sink->size() >= 50 || !parser_->running(); }) && sink->size() == 50;
  }
  ReplayPrimaryOptions ao_, bo_;
  uint64_t a_size_ = 0;
  std::unique_ptr<parser::EventParser> parser_;
};

// Canal's standby keys: where the standby's binlog goes on, for a stream without GTID state.
TEST_F(ReplayFailoverWithoutGtids, TheStandbyStartKeysSayWhereTheStandbyGoesOn) {
  Build();
  if (HasFatalFailure()) return;
  TxnSink sink;
  parser::EventParserOptions po = ParserOptions(ao_);
  po.standby = po.candidates[1];
  po.standby_start.journal_name = "b-bin.000001";
  po.standby_start.position = a_size_;
  ASSERT_TRUE(StreamA(po, &sink));
  parser::EventParser& p = *parser_;
  a_->Stop();
  b_->SetReadOnly(false);
  ASSERT_TRUE(WaitFor([&] { return sink.size() >= 70 || !p.running(); })) << p.status().last_error;
  std::this_thread::sleep_for(300ms);
  const std::vector<Received> got = sink.got();
  ASSERT_EQ(got.size(), 70u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].ids.at(0), 1000 + i) << i;
  EXPECT_EQ(p.status().failovers, 1u);
  EXPECT_EQ(p.status().failover_timestamp_fallbacks, 0u);
  EXPECT_TRUE(p.running()) << p.status().last_error;
  p.Stop();
}

TEST_F(ReplayFailoverWithoutGtids, StopsNamingTheFixOrResumesByTimeWhenToldTo) {
  for (const int window : {0, 10}) {
    SCOPED_TRACE("fallback window " + std::to_string(window));
    Build();
    if (HasFatalFailure()) return;
    TxnSink sink;
    parser::EventParserOptions po = ParserOptions(ao_);
    po.failover_timestamp_fallback_s = window;
    ASSERT_TRUE(StreamA(po, &sink));
    parser::EventParser& p = *parser_;
    a_->Stop();
    b_->SetReadOnly(false);
    if (window == 0) {
      ASSERT_TRUE(WaitFor([&] { return !p.running(); })) << p.status().last_error;
      const Status error = p.fatal_error();
      EXPECT_EQ(parser::ParserErrorKind(error), "no_gtid") << error.ToString();
      EXPECT_NE(error.message().find("gtid_mode=ON and enforce_gtid_consistency=ON"), std::string::npos)
          << error.ToString();
      EXPECT_EQ(sink.size(), 50u);
      b_->Stop();
      a_.reset();
      b_.reset();
      continue;
    }
    // Resumed on B at the first transaction at or after (the last delivered one's time - 10 s):
    // transactions 39..49 again (the documented window), then 50..69 once.
    const size_t want = 50 + 11 + 20;
    ASSERT_TRUE(WaitFor([&] { return sink.size() >= want || !p.running(); })) << p.status().last_error;
    std::this_thread::sleep_for(300ms);
    const std::vector<Received> got = sink.got();
    ASSERT_EQ(got.size(), want);
    for (size_t i = 0; i < 50; ++i) EXPECT_EQ(got[i].ids.at(0), 1000 + i);
    for (size_t i = 0; i < 31; ++i) EXPECT_EQ(got[50 + i].ids.at(0), 1039 + i) << i;
    const parser::ParserStatus st = p.status();
    EXPECT_EQ(st.failovers, 1u);
    EXPECT_EQ(st.failover_timestamp_fallbacks, 1u);
    EXPECT_TRUE(p.running()) << st.last_error;
    p.Stop();
  }
}

}  // namespace
}  // namespace canal::testing
