// EntrySink: transactions in, Canal entries out through a RingStore. Hand-built
// transactions check the rules one by one (the fixture binlog's real events:
// entry_sink_fixture_test.cc; snapshot chunks: entry_sink_snapshot_test.cc).
#include "canal/sink/entry_sink.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "sink_harness.h"
#include "sink_test_support.h"

namespace canal::sink {
namespace {

using parser::Transaction;
using parser::TxEvent;
using parser::TxEventKind;
using store::EntryKind;
using store::RingStore;

using testing_support::Commit;
using testing_support::Drain;
using testing_support::Ev;
using testing_support::Filtered;
using testing_support::Got;
using testing_support::Harness;
using testing_support::kFile;
using testing_support::kTime;
using testing_support::MakeStore;
using testing_support::Rows;
using testing_support::Stmt;
using testing_support::Tx;
using testing_support::Txn;

// ---- hand-built: sequence, headers, positions ---------------------------------------

TEST(EntrySink, TransactionIsBeginRowsQueryEndWithHeadersAndOneSafeEnd) {
  Harness h;
  auto got = h.Run(Tx(1000, {Rows(1042, 1100, "shop", "orders"), Ev(TxEventKind::kQuery, 1100, 1180, "INSERT INTO log VALUES (1)", "shop")}, 4242));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].type(), entry::TRANSACTIONBEGIN);
  EXPECT_EQ(got[1].type(), entry::ROWDATA);
  EXPECT_EQ(got[2].type(), entry::ROWDATA);
  EXPECT_EQ(got[3].type(), entry::TRANSACTIONEND);

  EXPECT_EQ(got[0].entry.header().logfileoffset(), 1000);
  EXPECT_EQ(got[1].entry.header().logfileoffset(), 1042);
  EXPECT_EQ(got[1].entry.header().schemaname(), "shop");
  EXPECT_EQ(got[1].entry.header().tablename(), "orders");
  EXPECT_EQ(got[1].entry.header().eventtype(), entry::INSERT);
  EXPECT_EQ(got[2].change.sql(), "INSERT INTO log VALUES (1)");
  EXPECT_FALSE(got[2].change.isddl());
  EXPECT_EQ(got[3].entry.header().logfileoffset(), 1180);
  entry::TransactionEnd end;
  ASSERT_TRUE(end.ParseFromString(got[3].entry.storevalue()));
  EXPECT_EQ(end.transactionid(), "4242");
  for (const auto& g : got) {
    EXPECT_EQ(g.entry.header().logfilename(), kFile);
    EXPECT_EQ(g.entry.header().gtid(), "0-1-9");
    EXPECT_EQ(g.entry.header().executetime(), int64_t{kTime} * 1000);
    EXPECT_EQ(g.entry.header().serverid(), 1);
  }

  EXPECT_EQ(got[0].meta.kind, EntryKind::kTransactionBegin);
  EXPECT_EQ(got[1].meta.kind, EntryKind::kOther);
  EXPECT_EQ(got[3].meta.kind, EntryKind::kTransactionEnd);
  // Every entry ends its event, so each is a resume point inside the transaction:
  // after it, at the end of its event (where the next entry's event starts).
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(got[i].safe()) << i;
    EXPECT_EQ(static_cast<int64_t>(got[i].meta.position.position), got[i + 1].entry.header().logfileoffset());
    EXPECT_TRUE(got[i].meta.position.included);
    EXPECT_EQ(got[i].meta.position.transaction_begin, 1000u);
  }
  ASSERT_TRUE(got[3].safe());
  const LogPosition& p = got[3].meta.position;
  EXPECT_EQ(p.journal_name, kFile);
  EXPECT_EQ(p.position, 1211u) << "resume at the transaction's end";
  EXPECT_FALSE(p.included);
  EXPECT_EQ(p.transaction_begin, 0u);
  EXPECT_EQ(p.gtid, "0-1-9");
  EXPECT_EQ(p.timestamp_ms, int64_t{kTime} * 1000);
}

TEST(EntrySink, StandaloneDdlIsOneSafeDdlEntryAtTheStatementsEnd) {
  Harness h;
  auto got = h.Run(Stmt(500, "ALTER TABLE `orders` ADD note TEXT"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), entry::ROWDATA);
  EXPECT_TRUE(got[0].change.isddl());
  EXPECT_EQ(got[0].change.eventtype(), entry::ALTER);
  EXPECT_EQ(got[0].entry.header().schemaname(), "shop");
  EXPECT_EQ(got[0].entry.header().logfileoffset(), 542);
  EXPECT_EQ(got[0].meta.kind, EntryKind::kDdl);
  EXPECT_TRUE(got[0].safe());
  EXPECT_EQ(got[0].meta.position.position, 700u);
  EXPECT_FALSE(got[0].meta.position.included);
}

TEST(EntrySink, DdlOnAQualifiedTableNamesThatSchema) {
  Harness h;
  auto got = h.Run(Stmt(500, "CREATE TABLE IF NOT EXISTS `billing`.`invoices` (id INT)", "shop"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].entry.header().schemaname(), "billing");
  EXPECT_EQ(got[0].change.ddlschemaname(), "billing");
}

TEST(EntrySink, TableFilterDropsRowsAndDdlOfOtherTables) {
  Harness h(Filtered("shop\\.orders"));
  auto got = h.Run(Tx(1000, {Rows(1042, 1100, "shop", "orders"), Rows(1100, 1150, "shop", "audit"),
                             Rows(1150, 1200, "other", "orders")}));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].entry.header().tablename(), "orders");
  EXPECT_EQ(got[1].entry.header().schemaname(), "shop");
  EXPECT_TRUE(got[2].safe());
  EXPECT_EQ(got[2].meta.position.position, 1231u);

  EXPECT_TRUE(h.Run(Stmt(2000, "ALTER TABLE audit ADD x INT")).empty());
  EXPECT_TRUE(h.Run(Stmt(3000, "DROP TABLE IF EXISTS shop.audit, shop.orders")).empty()) << "first table decides";
  EXPECT_EQ(h.Run(Stmt(4000, "ALTER TABLE orders ADD x INT")).size(), 1u);
  EXPECT_EQ(h.Run(Stmt(5000, "CREATE INDEX i ON other.t (a)", "shop")).size(), 0u);
  // No table to match: kept, as Canal keeps it.
  EXPECT_EQ(h.Run(Stmt(6000, "CREATE DATABASE archive")).size(), 1u);
  EXPECT_EQ(h.sink->stats().filtered_events, 5u);
}

TEST(EntrySink, BlackListDropsItsTablesEvenWhenTheIncludeListTakesThem) {
  Harness h(Filtered(".*\\..*", "shop\\.audit"));
  auto got = h.Run(Tx(1000, {Rows(1042, 1100, "shop", "orders"), Rows(1100, 1150, "shop", "audit")}));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].entry.header().tablename(), "orders");
  EXPECT_TRUE(h.Run(Stmt(2000, "TRUNCATE TABLE audit")).empty());
}

TEST(EntrySink, EventTypeSwitchesDropRowKindsAndStatements) {
  EntrySinkOptions o;
  o.event_types.dml_delete = true;
  o.event_types.query_ddl = true;
  o.event_types.query_dml = true;
  Harness h(std::move(o));
  auto got = h.Run(Tx(1000, {Rows(1042, 1100, "shop", "a", binlog::RowsKind::kDelete),
                             Rows(1100, 1150, "shop", "b", binlog::RowsKind::kUpdate),
                             Ev(TxEventKind::kQuery, 1150, 1200, "DELETE FROM shop.c", "shop")}));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].entry.header().tablename(), "b");
  EXPECT_EQ(got[1].entry.header().eventtype(), entry::UPDATE);
  EXPECT_TRUE(h.Run(Stmt(2000, "CREATE TABLE t (a INT)")).empty());
}

TEST(EntrySink, TransactionEntrySwitchDropsBeginAndEndAndTheLastKeptEntryIsSafe) {
  EntrySinkOptions o;
  o.event_types.transaction_entry = true;
  Harness h(std::move(o));
  auto got = h.Run(Tx(1000, {Rows(1042, 1100, "shop", "a"), Rows(1100, 1150, "shop", "b")}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].type(), entry::ROWDATA);
  ASSERT_TRUE(got[0].safe());
  EXPECT_EQ(got[0].meta.position.position, 1100u);
  EXPECT_EQ(got[0].meta.position.transaction_begin, 1000u);
  EXPECT_TRUE(got[1].safe());
  EXPECT_EQ(got[1].meta.position.position, 1181u) << "the transaction's end, past its commit";
  EXPECT_EQ(got[1].entry.header().logfileoffset(), 1100) << "the header keeps the event's own offset";
}

TEST(EntrySink, StatementCommitEndsWithAnEmptyTransactionId) {
  Harness h;
  std::vector<TxEvent> events = {Ev(TxEventKind::kBegin, 100, 142, "BEGIN"), Rows(142, 200, "s", "t"),
                                 Ev(TxEventKind::kCommit, 200, 240, "COMMIT")};
  auto got = h.Run(Txn(100, std::move(events)));
  ASSERT_EQ(got.size(), 3u);
  entry::TransactionEnd end;
  ASSERT_TRUE(end.ParseFromString(got[2].entry.storevalue()));
  EXPECT_EQ(end.transactionid(), "");
  entry::TransactionBegin begin;
  ASSERT_TRUE(begin.ParseFromString(got[0].entry.storevalue()));
}

TEST(EntrySink, BeginCarriesTheStatementsThreadId) {
  Harness h;
  Transaction t = Tx(100, {Rows(142, 200, "s", "t")});
  t.events[0].thread_id = 4711;
  auto got = h.Run(t);
  entry::TransactionBegin begin;
  ASSERT_TRUE(begin.ParseFromString(got[0].entry.storevalue()));
  EXPECT_EQ(begin.threadid(), 4711);
}

TEST(EntrySink, UndecodableRowsAreAnErrorNamingTheTable) {
  Harness h;
  Transaction t = Tx(100, {Rows(142, 200, "shop", "orders")});
  const std::string garbage("\x00\x01", 2);  // null bitmap, then 1 byte of a 4-byte INT
  t.events[1].rows.rows = garbage;
  t.events[1].rows.column_count = 3;
  t.events[1].rows.columns_before = "\x07";
  auto map = std::make_shared<binlog::TableMap>(*t.events[1].table);
  map->columns.resize(3);
  for (auto& c : map->columns) {
    c.type = c.real_type = binlog::ColumnType::kLong;  // 4 bytes each: the one byte given is too short
    c.nullable = false;
  }
  t.events[1].table = map;
  t.events[1].rows.table = map.get();
  Status s = h.sink->OnTransaction(t);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("orders"), std::string::npos) << s.ToString();
}

// ---- pieces ---------------------------------------------------------------------------------

TEST(EntrySink, PieceEndsAreSafeInsideTheTransactionAndTheLastPieceEndsIt) {
  Harness h;
  Transaction p0 = Txn(1000, {Ev(TxEventKind::kBegin, 1000, 1042, "BEGIN"), Rows(1042, 1100, "s", "a"),
                              Rows(1100, 1150, "s", "b")});
  p0.last_piece = false;
  auto got = h.Run(p0);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].type(), entry::TRANSACTIONBEGIN);
  ASSERT_TRUE(got[1].safe());
  EXPECT_EQ(got[1].meta.position.position, 1100u);
  ASSERT_TRUE(got[2].safe());
  EXPECT_EQ(got[2].meta.position.position, 1150u);
  EXPECT_TRUE(got[2].meta.position.included);
  EXPECT_EQ(got[2].meta.position.transaction_begin, 1000u);

  // A piece with nothing kept puts nothing (the cursor stays at the last piece).
  Transaction p1 = Txn(1000, {Ev(TxEventKind::kQuery, 1150, 1200, "SAVEPOINT x", "s")});
  p1.piece_index = 1;
  p1.last_piece = false;
  auto mid = h.Run(p1);
  ASSERT_EQ(mid.size(), 1u);  // SAVEPOINT is a plain QUERY entry, kept
  EXPECT_TRUE(mid[0].safe());
  EXPECT_EQ(mid[0].meta.position.position, 1200u);

  Transaction p2 = Txn(1000, {Rows(1200, 1250, "s", "c"), Commit(1250, 9)});
  p2.piece_index = 2;
  auto last = h.Run(p2);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0].type(), entry::ROWDATA);
  EXPECT_EQ(last[1].type(), entry::TRANSACTIONEND);
  EXPECT_TRUE(last[1].safe());
  EXPECT_EQ(last[1].meta.position.position, 1281u);
  EXPECT_FALSE(last[1].meta.position.included);
  EXPECT_EQ(last[1].meta.position.transaction_begin, 0u);
  EXPECT_EQ(h.sink->stats().transactions, 1u);
  EXPECT_EQ(h.sink->stats().pieces, 3u);
}

TEST(EntrySink, FilteredFirstPieceDefersBeginToTheFirstKeptEntry) {
  Harness h(Filtered("s\\.keep"));
  Transaction p0 = Txn(1000, {Ev(TxEventKind::kBegin, 1000, 1042, "BEGIN"), Rows(1042, 1100, "s", "drop")});
  p0.last_piece = false;
  EXPECT_TRUE(h.Run(p0).empty());
  Transaction p1 = Txn(1000, {Rows(1100, 1150, "s", "keep"), Commit(1150, 3)});
  p1.piece_index = 1;
  auto got = h.Run(p1);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].type(), entry::TRANSACTIONBEGIN);
  EXPECT_EQ(got[0].entry.header().logfileoffset(), 1000) << "BEGIN keeps the transaction's own offset";
  EXPECT_EQ(got[2].type(), entry::TRANSACTIONEND);
}

TEST(EntrySink, ContinuationWithoutItsFirstPieceStillEndsTheTransaction) {
  // After a restart from a cursor inside a transaction, the parser hands over
  // the rest as piece 1: BEGIN went out before the restart, END must follow.
  Harness h;
  Transaction rest = Txn(1000, {Rows(1100, 1150, "s", "a"), Commit(1150, 3)});
  rest.piece_index = 1;
  auto got = h.Run(rest);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].type(), entry::ROWDATA);
  EXPECT_EQ(got[1].type(), entry::TRANSACTIONEND);
}

// ---- empty transactions -----------------------------------------------------------------------

EntrySinkOptions Throttled(uint64_t threshold, int64_t interval_ms) {
  EntrySinkOptions o = Filtered("s\\.keep");
  o.empty_transaction_threshold = threshold;
  o.empty_transaction_interval_ms = interval_ms;
  return o;
}

Transaction EmptyTx(uint64_t begin, uint64_t xid) { return Tx(begin, {Rows(begin + 42, begin + 100, "s", "drop")}, xid); }

TEST(EntrySink, EmptyTransactionsPutOneMarkerAtTheThreshold) {
  Harness h(Throttled(3, 1'000'000));
  EXPECT_TRUE(h.Run(EmptyTx(1000, 1)).empty());
  EXPECT_TRUE(h.Run(EmptyTx(2000, 2)).empty());
  auto got = h.Run(EmptyTx(3000, 3));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].type(), entry::TRANSACTIONBEGIN);
  EXPECT_EQ(got[0].entry.header().logfileoffset(), 3000);
  EXPECT_FALSE(got[0].safe());
  EXPECT_EQ(got[1].type(), entry::TRANSACTIONEND);
  entry::TransactionEnd end;
  ASSERT_TRUE(end.ParseFromString(got[1].entry.storevalue()));
  EXPECT_EQ(end.transactionid(), "3");
  EXPECT_EQ(got[1].entry.header().logfileoffset(), 3100) << "the skipped transaction's commit";
  ASSERT_TRUE(got[1].safe());
  EXPECT_EQ(got[1].meta.position.position, 3131u) << "the last skipped transaction's end";
  EXPECT_FALSE(got[1].meta.position.included);
  EXPECT_EQ(got[1].meta.position.gtid, "0-1-9");
  // The count starts again.
  EXPECT_TRUE(h.Run(EmptyTx(4000, 4)).empty());
  EXPECT_TRUE(h.Run(EmptyTx(5000, 5)).empty());
  EXPECT_EQ(h.Run(EmptyTx(6000, 6)).size(), 2u);
  EXPECT_EQ(h.sink->stats().skipped_transactions, 6u);
  EXPECT_EQ(h.sink->stats().empty_markers, 2u);
}

TEST(EntrySink, EmptyTransactionsPutOneMarkerPerInterval) {
  Harness h(Throttled(1'000'000, 5000));
  h.now_ms = 1000;
  EXPECT_TRUE(h.Run(EmptyTx(1000, 1)).empty());
  h.now_ms = 4999;
  EXPECT_TRUE(h.Run(EmptyTx(2000, 2)).empty());
  h.now_ms = 5000;
  auto got = h.Run(EmptyTx(3000, 3));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].meta.position.position, 3131u);
  h.now_ms = 9999;
  EXPECT_TRUE(h.Run(EmptyTx(4000, 4)).empty());
  h.now_ms = 10000;
  EXPECT_EQ(h.Run(EmptyTx(5000, 5)).size(), 2u);
}

TEST(EntrySink, KeptChangesRestartTheEmptyTransactionCount) {
  Harness h(Throttled(3, 1'000'000));
  EXPECT_TRUE(h.Run(EmptyTx(1000, 1)).empty());
  EXPECT_TRUE(h.Run(EmptyTx(2000, 2)).empty());
  EXPECT_EQ(h.Run(Tx(3000, {Rows(3042, 3100, "s", "keep")})).size(), 3u);
  EXPECT_TRUE(h.Run(EmptyTx(4000, 4)).empty());
  EXPECT_TRUE(h.Run(EmptyTx(5000, 5)).empty());
  EXPECT_EQ(h.Run(EmptyTx(6000, 6)).size(), 2u);
}

TEST(EntrySink, IdleHeartbeatFlushesPendingEmptyTransactionsOnly) {
  Harness h(Throttled(1'000'000, 1'000'000));
  LogPosition idle;
  idle.journal_name = kFile;
  idle.position = 9000;
  h.sink->OnIdle(idle);
  EXPECT_TRUE(Drain(h.store.get()).empty()) << "nothing pending, nothing put";
  EXPECT_TRUE(h.Run(EmptyTx(1000, 1)).empty());
  EXPECT_TRUE(h.Run(EmptyTx(2000, 2)).empty());
  h.sink->OnIdle(idle);
  auto got = Drain(h.store.get());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].meta.position.position, 2131u);
  h.sink->OnIdle(idle);
  EXPECT_TRUE(Drain(h.store.get()).empty()) << "one marker per pending run";
}

TEST(EntrySink, IdleInsideAnOpenTransactionPutsNothing) {
  Harness h(Throttled(1'000'000, 1'000'000));
  EXPECT_TRUE(h.Run(EmptyTx(1000, 1)).empty());
  Transaction p0 = Txn(2000, {Ev(TxEventKind::kBegin, 2000, 2042, "BEGIN"), Rows(2042, 2100, "s", "drop")});
  p0.last_piece = false;
  EXPECT_TRUE(h.Run(p0).empty());
  h.sink->OnIdle(LogPosition{});
  EXPECT_TRUE(Drain(h.store.get()).empty());
}

TEST(EntrySink, EmptyStandaloneStatementsCountAsEmptyTransactions) {
  Harness h(Throttled(2, 1'000'000));
  EXPECT_TRUE(h.Run(Stmt(1000, "ALTER TABLE s.drop ADD x INT")).empty());
  auto got = h.Run(Stmt(2000, "ALTER TABLE s.drop ADD y INT"));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].meta.position.position, 2200u);
  entry::TransactionEnd end;
  ASSERT_TRUE(end.ParseFromString(got[1].entry.storevalue()));
  EXPECT_EQ(end.transactionid(), "");
}

TEST(EntrySink, MarkerStillGoesOutUnderTheTransactionEntrySwitch) {
  EntrySinkOptions o = Throttled(1, 1'000'000);
  o.event_types.transaction_entry = true;
  Harness h(std::move(o));
  auto got = h.Run(EmptyTx(1000, 1));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[1].safe());
}

// ---- subscription filter ------------------------------------------------------------------------

TEST(EntrySink, SubscriptionFilterReplacesTheIncludeListButNotTheBlackList) {
  Harness h(Filtered("s\\.a", "s\\.c"));
  auto tx = [](uint64_t at) {
    return Tx(at, {Rows(at + 42, at + 50, "s", "a"), Rows(at + 50, at + 60, "s", "b"), Rows(at + 60, at + 70, "s", "c")});
  };
  auto tables = [](const std::vector<Got>& got) {
    std::string t;
    for (const auto& g : got) {
      if (g.type() == entry::ROWDATA) t += g.entry.header().tablename();
    }
    return t;
  };
  EXPECT_EQ(tables(h.Run(tx(1000))), "a");
  ASSERT_TRUE(h.sink->SetSubscriptionFilter("s\\..*").ok());
  EXPECT_EQ(tables(h.Run(tx(2000))), "ab") << "the black list still drops c";
  Status bad = h.sink->SetSubscriptionFilter("s\\.(a");
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument) << bad.ToString();
  EXPECT_EQ(tables(h.Run(tx(3000))), "ab") << "a bad filter leaves the one in force";
  ASSERT_TRUE(h.sink->SetSubscriptionFilter("").ok());
  EXPECT_EQ(tables(h.Run(tx(4000))), "a") << "empty goes back to the instance's filter";
}

TEST(EntrySink, SubscriptionFilterChangesOnlyBetweenTransactions) {
  Harness h(Filtered("s\\.a"));
  Transaction p0 = Txn(1000, {Ev(TxEventKind::kBegin, 1000, 1042, "BEGIN"), Rows(1042, 1050, "s", "a")});
  p0.last_piece = false;
  EXPECT_EQ(h.Run(p0).size(), 2u);
  ASSERT_TRUE(h.sink->SetSubscriptionFilter("s\\.b").ok());
  Transaction p1 = Txn(1000, {Rows(1050, 1060, "s", "a"), Rows(1060, 1070, "s", "b"), Commit(1070, 1)});
  p1.piece_index = 1;
  auto got = h.Run(p1);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].entry.header().tablename(), "a");
}

TEST(EntrySink, SubscriptionFilterCanBeSwappedFromAnotherThread) {
  Harness h(Filtered(".*\\..*"));
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    for (int i = 0; !stop.load(); ++i) {
      EXPECT_TRUE(h.sink->SetSubscriptionFilter(i % 2 ? "s\\.a" : "").ok());
    }
  });
  for (uint64_t i = 0; i < 500; ++i) {
    uint64_t at = 1000 + i * 100;
    auto got = h.Run(Tx(at, {Rows(at + 42, at + 50, "s", "a"), Rows(at + 50, at + 60, "s", "b")}));
    ASSERT_TRUE(got.size() == 3u || got.size() == 4u) << got.size();
  }
  stop = true;
  swapper.join();
}

// ---- store -------------------------------------------------------------------------------------

TEST(EntrySink, StoppedStoreIsAbortedAndStopsTheParser) {
  Harness h;
  h.store->Stop();
  Status s = h.sink->OnTransaction(Tx(1000, {Rows(1042, 1100, "s", "a")}));
  EXPECT_EQ(s.code(), Status::Code::kAborted) << s.ToString();
}

TEST(EntrySink, FullStoreBlocksUntilStopThenAborted) {
  Harness h(EntrySinkOptions{}, 4);
  std::vector<TxEvent> body;
  for (uint64_t i = 0; i < 10; ++i) body.push_back(Rows(1042 + i * 10, 1052 + i * 10, "s", "a"));
  std::atomic<bool> returned{false};
  Status result;
  std::thread producer([&] {
    result = h.sink->OnTransaction(Tx(1000, std::move(body)));
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned.load()) << "the put must wait for space (back-pressure)";
  h.store->Stop();
  producer.join();
  EXPECT_EQ(result.code(), Status::Code::kAborted) << result.ToString();
}

// ---- DdlTable ----------------------------------------------------------------------------------

TEST(DdlTable, ReadsTheTableOfEachDdlForm) {
  struct Case {
    const char* sql;
    const char* schema;
    const char* table;
  } cases[] = {
      {"CREATE TABLE t (a INT)", "def", "t"},
      {"create temporary table if not exists `db`.`t 1` (a int)", "db", "t 1"},
      {"CREATE OR REPLACE TABLE x.y AS SELECT 1", "x", "y"},
      {"/* 6.2 */ ALTER TABLE t_ddl ADD COLUMN c INT", "def", "t_ddl"},
      {"ALTER ONLINE IGNORE TABLE IF EXISTS s.t ADD x INT", "s", "t"},
      {"DROP TABLE IF EXISTS `a``b`, c", "def", "a`b"},
      {"DROP TEMPORARY TABLE s . t", "s", "t"},
      {"TRUNCATE t2", "def", "t2"},
      {"TRUNCATE TABLE s.t2", "s", "t2"},
      {"RENAME TABLE t_ddl TO t_ddl_renamed", "def", "t_ddl"},
      {"CREATE UNIQUE INDEX i ON s.t (a)", "s", "t"},
      {"CREATE INDEX `on` ON t (a)", "def", "t"},
      {"DROP INDEX i ON `weird-名前 table`", "def", "weird-名前 table"},
      {"-- note\nALTER TABLE t ADD x INT", "def", "t"},
      {"/*!40000 ALTER TABLE `t` DISABLE KEYS */", "def", "t"},
  };
  for (const auto& c : cases) {
    std::string schema = "unset", table = "unset";
    ASSERT_TRUE(DdlTable(c.sql, "def", &schema, &table)) << c.sql;
    EXPECT_EQ(schema, c.schema) << c.sql;
    EXPECT_EQ(table, c.table) << c.sql;
  }
}

TEST(DdlTable, OtherStatementsAndBrokenNamesHaveNoTable) {
  for (const char* sql : {"CREATE DATABASE d", "DROP DATABASE IF EXISTS d", "CREATE VIEW v AS SELECT 1",
                          "ALTER USER x", "INSERT INTO t VALUES (1)", "", "   ", "CREATE TABLE", "CREATE TABLE `unterminated",
                          "DROP TABLE s.", "CREATE INDEX i", "RENAME USER a TO b", "CREATE OR", "/* only a comment"}) {
    std::string schema = "unset", table = "unset";
    EXPECT_FALSE(DdlTable(sql, "def", &schema, &table)) << sql;
    EXPECT_EQ(schema, "unset") << sql;
    EXPECT_EQ(table, "unset") << sql;
  }
}

TEST(EntrySinkOptions, BadFilterPatternsAreInvalidArgumentNamingTheKey) {
  EntrySinkOptions o;
  Status s = o.CompileFilters("s\\.(a", "", "", "");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("canal.instance.filter.regex"), std::string::npos) << s.ToString();
  s = o.CompileFilters("", "", "", "no colon here");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(o.table_filter, nullptr) << "nothing is set on failure";
}

}  // namespace
}  // namespace canal::sink
