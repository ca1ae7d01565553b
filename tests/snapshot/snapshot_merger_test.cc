// SnapshotMerger across threads, with a recording sink and output (no database): a chunk waits
// until the stream passed its P and goes out at the stream's boundary carrying the progress
// before and after it; a DDL on the table before P makes it be read again, one after P does
// not; a keyless read holds the stream at its P; Stop wakes every waiter. (The key-drop rule
// itself: chunk_window_test.cc; with real rows and a database: the live suites.)
#include "canal/snapshot/snapshot_merger.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <thread>

#include <gtest/gtest.h>

namespace canal::snapshot {
namespace {

using namespace std::chrono_literals;

class RecordingSink final : public parser::TransactionSink {
 public:
  Status OnTransaction(const parser::Transaction& txn) override {
    std::unique_lock<std::mutex> lock(mu);
    ++entered;
    cv.notify_all();
    cv.wait(lock, [this] { return !gated; });  // a full ring: the put waits
    ends.push_back(txn.end_offset);
    return Status::OK();
  }
  void Gate(bool on) {
    std::lock_guard<std::mutex> lock(mu);
    gated = on;
    cv.notify_all();
  }
  void WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered >= n; });
  }
  std::vector<uint64_t> ends;
  std::mutex mu;
  std::condition_variable cv;
  bool gated = false;
  int entered = 0;
};

class RecordingOutput final : public ChunkOutput {
 public:
  struct Chunk {
    LogPosition at;
    std::vector<std::string> rows;
    std::shared_ptr<const std::string> before, after;
    bool begin, end;
    std::string segment_bytes = {};  // the rows of the segments the output could take
  };
  Status PutChunk(const EmittedChunk& c) override {
    Chunk r{c.at, {}, c.at.snapshot, c.progress_after, c.begin, c.end};
    for (std::string_view row : c.rows) r.rows.emplace_back(row);
    for (const ChunkSegment& g : c.segments) {
      for (size_t at = ChunkRows::kRoom; at < g.end; ++at) r.segment_bytes += g.bytes[at];
    }
    std::lock_guard<std::mutex> lock(mu);
    chunks.push_back(std::move(r));
    progress = c.progress_after;
    return Status::OK();
  }
  void SetProgress(std::shared_ptr<const std::string> p) override {
    std::lock_guard<std::mutex> lock(mu);
    progress = std::move(p);
  }
  std::mutex mu;
  std::vector<Chunk> chunks;
  std::shared_ptr<const std::string> progress;
};

LogPosition At(uint64_t offset) {
  LogPosition p;
  p.journal_name = "mysql-bin.000007";
  p.position = offset;
  return p;
}

parser::Transaction Txn(uint64_t begin, uint64_t end, const char* ddl = nullptr) {
  parser::Transaction t;
  t.file = "mysql-bin.000007";
  t.begin_offset = begin;
  t.end_offset = end;
  if (ddl != nullptr) {
    parser::TxEvent e;
    e.kind = parser::TxEventKind::kQuery;
    e.offset = begin;
    e.end_offset = end;
    e.db = "shop";
    e.sql = ddl;
    t.events.push_back(e);
  }
  return t;
}

SnapshotProgress TwoTables() {
  SnapshotProgress p;
  p.id = "initial-1";
  for (const char* name : {"customer", "orders"}) {
    TableProgress t;
    t.schema = "shop";
    t.table = name;
    p.tables.push_back(t);
  }
  return p;
}

// A chunk that lives for the test (Offer may take its segments' buffers, so it takes no
// temporary).
ChunkRows& Rows(uint64_t p, std::initializer_list<const char*> rows, bool exhausted) {
  static std::deque<ChunkRows> made;
  ChunkRows& c = made.emplace_back();
  for (const char* r : rows) c.AppendRow(r, r);
  c.snapshot = At(p);
  c.exhausted = exhausted;
  KeyValue k;
  k.kind = FieldKind::kSigned;
  k.field_type = 3;
  k.i64 = static_cast<int64_t>(c.row_count());
  if (c.row_count() != 0) c.last_key = {k};
  return c;
}

ChunkKey IdKey() {
  ChunkKey k;
  k.kind = ChunkKey::Kind::kPrimary;
  k.columns = {0};
  return k;
}

struct Fixture {
  RecordingSink sink;
  RecordingOutput output;
  SnapshotMerger merger{&sink, &output, 1000, 1 << 20};
  binlog::TableMap table;
  std::atomic<int> completed{0};
  Fixture() { merger.Begin(TwoTables(), [this] { ++completed; }); }
};

TEST(SnapshotMerger, BeginStampsTheProgressBeforeAnyEntry) {
  Fixture f;
  ASSERT_NE(f.output.progress, nullptr);
  SnapshotProgress p;
  ASSERT_TRUE(SnapshotProgress::Decode(*f.output.progress, &p).ok());
  EXPECT_EQ(p.tables.size(), 2u);
  EXPECT_EQ(f.completed.load(), 0);
}

TEST(SnapshotMerger, AChunkWaitsForTheStreamToPassItsPointAndGoesOutThere) {
  Fixture f;
  f.merger.SetStreamStart(At(100));
  SnapshotMerger::WindowId w;
  uint64_t generation;
  ASSERT_TRUE(f.merger.OpenWindow(0, IdKey(), &w, &generation));
  ChunkRows rows = Rows(500, {"r1", "r2"}, false);
  Status error;
  auto offered = std::async(std::launch::async, [&] { return f.merger.Offer(w, rows, f.table, &error); });
  ASSERT_TRUE(f.merger.OnTransaction(Txn(100, 300)).ok());
  EXPECT_EQ(offered.wait_for(50ms), std::future_status::timeout) << "went out before the stream reached P";
  ASSERT_TRUE(f.merger.OnTransaction(Txn(300, 500)).ok());
  ASSERT_EQ(offered.get(), SnapshotMerger::OfferResult::kEmitted) << error.ToString();
  ASSERT_EQ(f.output.chunks.size(), 1u);
  const auto& c = f.output.chunks[0];
  EXPECT_EQ(c.at.position, 500u);
  EXPECT_EQ(c.rows, (std::vector<std::string>{"r1", "r2"}));
  EXPECT_EQ(c.segment_bytes, "r1r2") << "every row kept: the output may take the segments";
  ASSERT_NE(c.before, nullptr);
  ASSERT_NE(c.after, nullptr);
  SnapshotProgress before, after;
  ASSERT_TRUE(SnapshotProgress::Decode(*c.before, &before).ok());
  ASSERT_TRUE(SnapshotProgress::Decode(*c.after, &after).ok());
  EXPECT_TRUE(before.tables[0].after.empty());
  ASSERT_EQ(after.tables[0].after.size(), 1u);
  EXPECT_EQ(after.tables[0].after[0].i64, 2);
  EXPECT_EQ(after.tables[0].state, TableSnapshotState::kReading);
  EXPECT_EQ(after.tables[0].rows, 2u);
}

TEST(SnapshotMerger, ChunksAfterTheStreamWentByGoOutAtOnceAndTheLastCompletesTheSnapshot) {
  Fixture f;
  ASSERT_TRUE(f.merger.OnTransaction(Txn(4, 900)).ok());
  for (size_t table = 0; table < 2; ++table) {
    SnapshotMerger::WindowId w;
    uint64_t generation;
    ASSERT_TRUE(f.merger.OpenWindow(table, IdKey(), &w, &generation));
    Status error;
    EXPECT_EQ(f.merger.Offer(w, Rows(900, {"x"}, true), f.table, &error), SnapshotMerger::OfferResult::kEmitted);
  }
  EXPECT_EQ(f.completed.load(), 1);
  EXPECT_EQ(f.output.chunks.back().after, nullptr) << "a complete snapshot leaves no progress in the cursor";
  EXPECT_EQ(f.output.progress, nullptr);
  const MergerStats st = f.merger.stats();
  EXPECT_TRUE(st.complete);
  EXPECT_EQ(st.tables_done, 2u);
  EXPECT_EQ(st.rows, 2u);
}

TEST(SnapshotMerger, ADdlOnTheTableBeforeThePointMeansReadAgainOneAfterItDoesNot) {
  Fixture f;
  f.merger.SetStreamStart(At(100));
  SnapshotMerger::WindowId w;
  uint64_t g0, g1;
  ASSERT_TRUE(f.merger.OpenWindow(0, IdKey(), &w, &g0));
  ASSERT_TRUE(f.merger.OnTransaction(Txn(100, 200, "ALTER TABLE customer ADD COLUMN note TEXT")).ok());
  ASSERT_TRUE(f.merger.OnTransaction(Txn(200, 300)).ok());
  Status error;
  EXPECT_EQ(f.merger.Offer(w, Rows(300, {"old-columns"}, false), f.table, &error), SnapshotMerger::OfferResult::kRedo);
  ASSERT_TRUE(f.merger.OpenWindow(0, IdKey(), &w, &g1));
  EXPECT_EQ(g1, g0 + 1) << "the reader learns its columns are stale";
  ASSERT_TRUE(f.merger.OnTransaction(Txn(300, 400, "ALTER TABLE shop.customer DROP COLUMN note")).ok());
  EXPECT_EQ(f.merger.Offer(w, Rows(300, {"new"}, false), f.table, &error), SnapshotMerger::OfferResult::kEmitted);
  // Another table's DDL changes nothing for this one.
  ASSERT_TRUE(f.merger.OpenWindow(0, IdKey(), &w, &g1));
  ASSERT_TRUE(f.merger.OnTransaction(Txn(400, 500, "ALTER TABLE orders ADD COLUMN x INT")).ok());
  ASSERT_TRUE(f.merger.OnTransaction(Txn(500, 600)).ok());
  EXPECT_EQ(f.merger.Offer(w, Rows(600, {"z"}, false), f.table, &error), SnapshotMerger::OfferResult::kEmitted);
  EXPECT_EQ(f.merger.DdlGeneration(1), 1u);
  EXPECT_EQ(f.merger.stats().redone, 1u);
}

TEST(SnapshotMerger, AKeylessReadHoldsTheStreamAtItsPoint) {
  Fixture f;
  f.merger.SetStreamStart(At(100));
  ASSERT_TRUE(f.merger.HoldStream());
  // Before P is known the stream waits at its next transaction.
  auto first = std::async(std::launch::async, [&] { return f.merger.OnTransaction(Txn(100, 200)); });
  EXPECT_EQ(first.wait_for(50ms), std::future_status::timeout);
  f.merger.ReleaseStreamTo(At(200));  // P: the transaction at 100 was committed before it
  ASSERT_TRUE(first.get().ok());
  auto second = std::async(std::launch::async, [&] { return f.merger.OnTransaction(Txn(200, 300)); });
  ASSERT_TRUE(f.merger.WaitStreamAt(At(200)));
  EXPECT_EQ(second.wait_for(50ms), std::future_status::timeout) << "a transaction after P went by";
  ASSERT_TRUE(f.merger.EmitHeld(1, Rows(200, {"a", "b"}, true), f.table, true, false).ok());
  ASSERT_TRUE(f.merger.EmitHeld(1, Rows(200, {"c"}, true), f.table, false, true).ok());
  f.merger.ReleaseHold();
  ASSERT_TRUE(second.get().ok());
  ASSERT_EQ(f.output.chunks.size(), 2u);
  EXPECT_EQ(f.output.chunks[0].at.position, 200u);
  EXPECT_TRUE(f.output.chunks[0].begin);
  EXPECT_FALSE(f.output.chunks[0].end);
  EXPECT_EQ(f.output.chunks[0].after, f.output.chunks[0].before) << "no progress until the read's end";
  EXPECT_TRUE(f.output.chunks[1].end);
  SnapshotProgress after;
  ASSERT_TRUE(SnapshotProgress::Decode(*f.output.chunks[1].after, &after).ok());
  EXPECT_EQ(after.tables[1].state, TableSnapshotState::kDone);
  EXPECT_EQ(f.sink.ends, (std::vector<uint64_t>{200, 300}));
}

TEST(SnapshotMerger, NoWindowOpensBeforeTheStreamHasAPosition) {
  Fixture f;
  SnapshotMerger::WindowId w;
  uint64_t generation;
  auto opened = std::async(std::launch::async, [&] { return f.merger.OpenWindow(0, IdKey(), &w, &generation); });
  EXPECT_EQ(opened.wait_for(50ms), std::future_status::timeout);
  f.merger.OnIdle(At(4));
  EXPECT_TRUE(opened.get());
}

TEST(SnapshotMerger, StopWakesEveryWaiter) {
  Fixture f;
  SnapshotMerger::WindowId w = 0;
  uint64_t generation;
  auto opening = std::async(std::launch::async, [&] { return f.merger.OpenWindow(0, IdKey(), &w, &generation); });
  EXPECT_EQ(opening.wait_for(20ms), std::future_status::timeout);
  f.merger.Stop();
  EXPECT_FALSE(opening.get());

  Fixture g;
  g.merger.SetStreamStart(At(100));
  ASSERT_TRUE(g.merger.OpenWindow(0, IdKey(), &w, &generation));
  Status error;
  ChunkRows rows = Rows(900, {"r"}, false);
  auto offered = std::async(std::launch::async, [&] { return g.merger.Offer(w, rows, g.table, &error); });
  ASSERT_TRUE(g.merger.HoldStream());
  auto held = std::async(std::launch::async, [&] { return g.merger.OnTransaction(Txn(100, 200)); });
  EXPECT_EQ(offered.wait_for(20ms), std::future_status::timeout);
  g.merger.Stop();
  EXPECT_EQ(offered.get(), SnapshotMerger::OfferResult::kStopped);
  EXPECT_TRUE(held.get().ok()) << "a held stream goes on once the snapshot stops";
  EXPECT_TRUE(g.output.chunks.empty());
}

// The hang the memory benchmark found: the sink waits for ring space (a slow client) while the
// server stops. Stop and the state readers must not wait for the sink; the stream goes on once
// the ring has room.
TEST(SnapshotMerger, StopAndStatusDoNotWaitForASinkWaitingForRingSpace) {
  Fixture f;
  f.sink.Gate(true);
  auto parse = std::async(std::launch::async, [&] { return f.merger.OnTransaction(Txn(100, 200)); });
  f.sink.WaitEntered(1);
  auto stop = std::async(std::launch::async, [&] {
    (void)f.merger.progress();
    (void)f.merger.delivered();
    (void)f.merger.Table(0);
    f.merger.Stop();
  });
  ASSERT_EQ(stop.wait_for(5s), std::future_status::ready) << "Stop waited for the sink";
  f.sink.Gate(false);
  EXPECT_TRUE(parse.get().ok());
  EXPECT_EQ(f.sink.ends, (std::vector<uint64_t>{200}));
}

// A chunk never goes out between a transaction's noting and its delivery: while the sink holds
// a transaction that ends past P, the offered chunk waits, and it goes out after it.
TEST(SnapshotMerger, AChunkWaitsForATransactionTheSinkIsStillTaking) {
  Fixture f;
  f.merger.SetStreamStart(At(100));
  SnapshotMerger::WindowId w;
  uint64_t generation;
  ASSERT_TRUE(f.merger.OpenWindow(0, IdKey(), &w, &generation));
  ChunkRows rows = Rows(150, {"r1"}, false);
  f.sink.Gate(true);
  auto parse = std::async(std::launch::async, [&] { return f.merger.OnTransaction(Txn(100, 200)); });
  f.sink.WaitEntered(1);
  Status error;
  auto offered = std::async(std::launch::async, [&] { return f.merger.Offer(w, rows, f.table, &error); });
  EXPECT_EQ(offered.wait_for(50ms), std::future_status::timeout) << "went out before the stream passed P";
  f.sink.Gate(false);
  ASSERT_TRUE(parse.get().ok());
  ASSERT_EQ(offered.get(), SnapshotMerger::OfferResult::kEmitted) << error.ToString();
  ASSERT_EQ(f.output.chunks.size(), 1u);
  EXPECT_EQ(f.output.chunks[0].at.position, 200u);
}

// With no snapshot the stream takes the fast path; tables requested later (AddTables) are
// tracked from the next transaction: the delivered position is current, the progress reaches the
// output before the next entry, a chunk waits for the stream to pass its P.
TEST(SnapshotMerger, TablesAddedWhileStreamingWithoutASnapshotAreTrackedFromTheNextTransaction) {
  RecordingSink sink;
  RecordingOutput output;
  SnapshotMerger merger{&sink, &output, 1000, 1 << 20};
  ASSERT_TRUE(merger.OnTransaction(Txn(100, 200)).ok());
  ASSERT_TRUE(merger.OnTransaction(Txn(200, 300)).ok());
  EXPECT_EQ(merger.delivered().position, 300u);
  EXPECT_EQ(output.progress, nullptr);

  const std::vector<size_t> added = merger.AddTables(TwoTables().tables, "request-1", 0);
  ASSERT_EQ(added.size(), 2u);
  SnapshotMerger::WindowId w;
  uint64_t generation;
  ASSERT_TRUE(merger.OpenWindow(added[0], IdKey(), &w, &generation));
  ChunkRows rows = Rows(350, {"r1"}, true);
  binlog::TableMap table;
  Status error;
  auto offered = std::async(std::launch::async, [&] { return merger.Offer(w, rows, table, &error); });
  EXPECT_EQ(offered.wait_for(50ms), std::future_status::timeout) << "went out before the stream reached P";
  ASSERT_TRUE(merger.OnTransaction(Txn(300, 400)).ok());
  ASSERT_EQ(offered.get(), SnapshotMerger::OfferResult::kEmitted) << error.ToString();
  ASSERT_EQ(output.chunks.size(), 1u);
  EXPECT_EQ(output.chunks[0].at.position, 400u);
  ASSERT_NE(output.chunks[0].before, nullptr) << "the progress was handed over with the transaction";
  EXPECT_EQ(sink.ends, (std::vector<uint64_t>{200, 300, 400}));

  // Done with both tables: the last progress (none) is handed over, then the fast path again.
  ASSERT_TRUE(merger.SkipTable(added[1]).ok());
  ASSERT_TRUE(merger.OnTransaction(Txn(400, 500)).ok());
  EXPECT_EQ(output.progress, nullptr);
  ASSERT_TRUE(merger.OnTransaction(Txn(500, 600)).ok());
  EXPECT_EQ(merger.delivered().position, 600u);
}

TEST(SnapshotMerger, ASkippedTableCountsAsDone) {
  Fixture f;
  ASSERT_TRUE(f.merger.SkipTable(0).ok());
  ASSERT_TRUE(f.merger.SkipTable(1).ok());
  EXPECT_EQ(f.completed.load(), 1);
  // The output hears of the progress off the emission path before the next entry goes out.
  ASSERT_TRUE(f.merger.OnTransaction(Txn(100, 200)).ok());
  EXPECT_EQ(f.output.progress, nullptr);
  EXPECT_FALSE(f.merger.SkipTable(7).ok());
}

}  // namespace
}  // namespace canal::snapshot
