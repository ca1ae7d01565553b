// TransactionBuffer's boundary rules on hand-built event sequences (no rows:
// the fixture tests cover rows events and resumes on real binlogs).
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/transaction_buffer.h"

namespace canal::parser {
namespace {

struct Collect : TransactionSink {
  struct Got {
    uint64_t begin, end;
    std::string gtid;
    std::vector<std::string> what;  // kind:sql
    bool last;
  };
  std::vector<Got> got;
  Status OnTransaction(const Transaction& t) override {
    Got g{t.begin_offset, t.end_offset, t.gtid, {}, t.last_piece};
    for (const auto& e : t.events) {
      static const char* kNames[] = {"begin", "rows", "query", "commit"};
      g.what.push_back(std::string(kNames[static_cast<int>(e.kind)]) + ":" + std::string(e.sql));
    }
    got.push_back(std::move(g));
    return Status::OK();
  }
};

class Feeder {
 public:
  explicit Feeder(TransactionBuffer* b) : b_(b) {}
  Status Query(std::string sql) {
    texts_.push_back(std::move(sql));
    binlog::QueryEvent q;
    q.query = texts_.back();
    q.db = "db";
    return Add(binlog::EventBody(q), 60);
  }
  Status Xid(uint64_t xid) { return Add(binlog::EventBody(binlog::XidEvent{xid}), 31); }
  Status MariaGtid(uint64_t seq, bool standalone) {
    binlog::MariaGtidEvent g;
    g.seq_no = seq;
    g.server_id = 1;
    g.flags = standalone ? 1 : 0;
    return Add(binlog::EventBody(g), 42);
  }
  Status MysqlGtid(int64_t gno) {
    binlog::GtidEvent g;
    g.sid[0] = 0xab;
    g.gno = gno;
    return Add(binlog::EventBody(g), 65);
  }
  Status Other() { return Add(binlog::EventBody(binlog::OpaqueEvent{}), 20); }
  uint64_t pos() const { return pos_; }

 private:
  Status Add(binlog::EventBody body, uint64_t size) {
    binlog::Event ev;
    ev.header.timestamp = 1700000000;
    ev.header.server_id = 1;
    ev.body = std::move(body);
    Status s = b_->Add(ev, decoder_, "bin.000001", pos_, pos_ + size);
    pos_ += size;
    return s;
  }
  TransactionBuffer* b_;
  binlog::EventDecoder decoder_;
  std::deque<std::string> texts_;
  uint64_t pos_ = 4;
};

TEST(TransactionBuffer, BeginCommitMakesOneTransactionFromItsFirstEvent) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  ASSERT_TRUE(f.Other().ok());  // FDE-like noise between transactions
  const uint64_t begin = f.pos();
  ASSERT_TRUE(f.Query("BEGIN").ok());
  ASSERT_TRUE(f.Query("INSERT INTO t VALUES (1)").ok());
  ASSERT_TRUE(f.Query("COMMIT").ok());
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].begin, begin);
  EXPECT_EQ(c.got[0].end, f.pos());
  EXPECT_EQ(c.got[0].what, (std::vector<std::string>{"begin:BEGIN", "query:INSERT INTO t VALUES (1)", "commit:COMMIT"}));
  EXPECT_EQ(b.resume_point().position, f.pos());
  EXPECT_FALSE(b.in_transaction());
}

TEST(TransactionBuffer, XidEndsTheTransactionAndIsKeptAsItsCommit) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  ASSERT_TRUE(f.MysqlGtid(7).ok());
  ASSERT_TRUE(f.Query("BEGIN").ok());
  ASSERT_TRUE(f.Xid(99).ok());
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].begin, 4u) << "a transaction starts at its GTID event";
  EXPECT_EQ(c.got[0].gtid, "ab000000-0000-0000-0000-000000000000:7");
  EXPECT_EQ(c.got[0].what.back(), "commit:");
}

TEST(TransactionBuffer, StandaloneStatementsAreTransactionsOfTheirOwn) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  ASSERT_TRUE(f.MariaGtid(1, /*standalone=*/true).ok());
  ASSERT_TRUE(f.Query("CREATE TABLE t (id INT)").ok());
  ASSERT_TRUE(f.Query("DROP TABLE u").ok());  // GTID-less server: no group event at all
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(c.got[0].gtid, "0-1-1");
  EXPECT_EQ(c.got[0].what, (std::vector<std::string>{"query:CREATE TABLE t (id INT)"}));
  EXPECT_EQ(c.got[1].gtid, "");
  EXPECT_EQ(c.got[1].begin, c.got[0].end);
}

TEST(TransactionBuffer, MariadbGtidOpensATransactionWithoutABeginStatement) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  ASSERT_TRUE(f.MariaGtid(5, false).ok());
  EXPECT_TRUE(b.in_transaction());
  ASSERT_TRUE(f.Query("INSERT INTO t VALUES (2)").ok());
  EXPECT_TRUE(c.got.empty()) << "a statement inside a MariaDB transaction does not end it";
  ASSERT_TRUE(f.Xid(1).ok());
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].what.front(), "begin:BEGIN");
}

TEST(TransactionBuffer, RollbackEndsButSavepointRollbackDoesNot) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  ASSERT_TRUE(f.Query("BEGIN").ok());
  ASSERT_TRUE(f.Query("SAVEPOINT a").ok());
  ASSERT_TRUE(f.Query("ROLLBACK TO SAVEPOINT a").ok());
  EXPECT_TRUE(c.got.empty());
  ASSERT_TRUE(f.Query("ROLLBACK").ok());
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].what.back(), "commit:ROLLBACK");
}

TEST(TransactionBuffer, XaPrepareStatementEndsTheXaGroupAndXaCommitStandsAlone) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  ASSERT_TRUE(f.MysqlGtid(1).ok());
  ASSERT_TRUE(f.Query("XA START X'31',X'',1").ok());
  ASSERT_TRUE(f.Query("XA END X'31',X'',1").ok());
  ASSERT_TRUE(f.Query("XA PREPARE X'31',X'',1").ok());
  ASSERT_EQ(c.got.size(), 1u);
  ASSERT_TRUE(f.MysqlGtid(2).ok());
  ASSERT_TRUE(f.Query("XA COMMIT X'31',X'',1").ok());
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(c.got[1].what, (std::vector<std::string>{"query:XA COMMIT X'31',X'',1"}));
}

TEST(TransactionBuffer, AGroupWithoutCommitIsHandedOverWhenTheNextOneStarts) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  ASSERT_TRUE(f.MariaGtid(1, false).ok());
  ASSERT_TRUE(f.Query("INSERT INTO t VALUES (1)").ok());
  const uint64_t cut = f.pos();
  ASSERT_TRUE(f.MariaGtid(2, false).ok());
  ASSERT_EQ(c.got.size(), 1u) << "never lost, never glued to the next transaction";
  EXPECT_EQ(c.got[0].end, cut);
}

TEST(TransactionBuffer, XidOutsideATransactionIsAnErrorNamingFileAndOffset) {
  Collect c;
  TransactionBuffer b(&c);
  Feeder f(&b);
  Status s = f.Xid(3);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("bin.000001 at 4"), std::string::npos) << s.ToString();
}

TEST(TransactionBuffer, ASinkErrorStopsAndLeavesTheResumePointBeforeThatTransaction) {
  struct Refuse : TransactionSink {
    Status OnTransaction(const Transaction&) override { return Status::Aborted("store stopped"); }
  } sink;
  TransactionBuffer b(&sink);
  Feeder f(&b);
  ASSERT_TRUE(f.Query("BEGIN").ok());
  Status s = f.Query("COMMIT");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("store stopped"), std::string::npos);
  EXPECT_TRUE(b.resume_point().empty());
}

TEST(TransactionBuffer, ResumingAtAPositionThatIsNotTheTransactionStartIsRefused) {
  Collect c;
  TransactionBuffer b(&c);
  ResumePoint p;
  p.file = "bin.000001";
  p.position = 100;
  p.skip_until = 200;
  b.ResetTo(p);
  Feeder f(&b);  // starts at 4, not 100
  Status s = f.Query("BEGIN");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("resuming inside the transaction at 100"), std::string::npos) << s.ToString();
}

TEST(TransactionBuffer, AStreamResumedAtACanalCursorSkipsTheCommitEventItNames) {
  Collect c;
  TransactionBuffer b(&c);
  ResumePoint p;
  p.file = "bin.000001";
  p.position = 4;  // Canal's cursor: the offset of the last acked transaction's XID
  b.ResetTo(p);
  Feeder f(&b);
  ASSERT_TRUE(f.Xid(41).ok());
  ASSERT_TRUE(f.Query("BEGIN").ok());
  ASSERT_TRUE(f.Xid(42).ok());
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].begin, 35u) << "the next transaction is the first handed over";
}

TEST(TransactionBuffer, AStreamResumedAtACommitStatementSkipsIt) {
  Collect c;
  TransactionBuffer b(&c);
  ResumePoint p;
  p.file = "bin.000001";
  p.position = 4;
  b.ResetTo(p);
  Feeder f(&b);
  ASSERT_TRUE(f.Query("COMMIT").ok());
  EXPECT_TRUE(c.got.empty());
  ASSERT_TRUE(f.Query("CREATE TABLE t (id INT)").ok());
  ASSERT_EQ(c.got.size(), 1u);
}

// Counts what arrives and checks the biggest statement it sees, keeping no copy.
struct Sizes : TransactionSink {
  size_t pieces = 0, events = 0, largest_sql = 0;
  Status OnTransaction(const Transaction& t) override {
    ++pieces;
    events += t.events.size();
    for (const auto& e : t.events) largest_sql = std::max(largest_sql, e.sql.size());
    return Status::OK();
  }
};

// A buffer handing over pieces of 1 MiB, its counting sink and a feeder.
struct OneMiBPieces {
  Sizes c;
  TransactionBuffer b{&c, TransactionBufferOptions{.max_events = 4096, .max_bytes = 1u << 20}};
  Feeder f{&b};
};

TEST(TransactionBuffer, AChunkMadeForAnOversizedValueIsFreedOnceItsPieceIsDelivered) {
  OneMiBPieces t;
  auto& [c, b, f] = t;
  const size_t big = 24u << 20;
  ASSERT_TRUE(f.Query("INSERT INTO t VALUES ('" + std::string(big, 'x') + "')").ok());
  ASSERT_EQ(c.pieces, 1u);
  EXPECT_GT(c.largest_sql, big);  // delivered whole
  // Held afterwards: the standard chunks a piece may need, not the 24 MiB one.
  EXPECT_LE(b.retained_bytes(), 2u << 20);
  ASSERT_TRUE(f.Query("CREATE TABLE t2 (id INT)").ok());
  EXPECT_LE(b.retained_bytes(), 2u << 20);
}

TEST(TransactionBuffer, MemoryStaysBoundedByThePieceSizeWhateverTheTransactionSize) {
  Sizes c;
  TransactionBufferOptions o;
  o.max_events = 64;
  o.max_bytes = 1u << 20;
  TransactionBuffer b(&c, o);
  Feeder f(&b);
  ASSERT_TRUE(f.Query("BEGIN").ok());
  const std::string value(4000, 'v');
  const int statements = 6000;  // 24 MB of statements in one transaction
  size_t peak = 0;
  for (int i = 0; i < statements; ++i) {
    ASSERT_TRUE(f.Query("INSERT INTO t VALUES (" + std::to_string(i) + ", '" + value + "')").ok());
    peak = std::max(peak, b.retained_bytes());
  }
  ASSERT_TRUE(f.Xid(9).ok());
  EXPECT_EQ(c.events, static_cast<size_t>(statements) + 2);  // BEGIN + statements + COMMIT
  EXPECT_GT(c.pieces, 20u);
  // 1 MiB of copies plus the chunk the cut falls in, and the event list.
  EXPECT_LE(peak, (2u << 20) + 4 * o.max_events * sizeof(TxEvent));
  EXPECT_FALSE(b.in_transaction());
}

TEST(TransactionBuffer, AResetDropsAHalfBuiltOversizedPieceAndItsMemory) {
  OneMiBPieces t;
  auto& [c, b, f] = t;
  ASSERT_TRUE(f.Query("BEGIN").ok());
  ASSERT_TRUE(f.Query("INSERT INTO t VALUES ('" + std::string(8u << 20, 'y') + "')").ok());
  EXPECT_GT(b.retained_bytes(), 8u << 20);  // still building: no commit yet
  EXPECT_EQ(c.pieces, 0u);
  b.ResetForReconnect();
  EXPECT_LE(b.retained_bytes(), 2u << 20);
  EXPECT_FALSE(b.in_transaction());
}

}  // namespace
}  // namespace canal::parser
