// EntrySink::PutSnapshotChunk on a real RingStore: a chunk is one transaction
// of INSERTs (BEGIN, ROWDATA entries of at most kSnapshotEntryRowBytes of rows,
// END), every entry marked snapshot=true, a safe resume point at the chunk's
// stream boundary carrying the progress before it (the END: after it); the
// event-type and table filters; SetSnapshotProgress riding on stream entries;
// errors, and the counters.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/sink/entry_builder.h"
#include "canal/sink/entry_sink.h"
#include "sink_harness.h"
#include "snapshot_chunk_out.h"
#include "sink_test_support.h"

namespace canal::sink {
namespace {

using store::EntryKind;
using testing_support::Drain;
using testing_support::Filtered;
using testing_support::Got;
using testing_support::Harness;
using testing_support::ItemsRow;
using testing_support::ItemsTable;
using testing_support::kFile;
using testing_support::Rows;
using testing_support::Tx;
using Progress = std::shared_ptr<const std::string>;

constexpr int64_t kReadAtMs = 1700000123456;

// Rows as a snapshot driver renders them: appended to one buffer, one view each.
struct Chunk {
  std::shared_ptr<binlog::TableMap> table = ItemsTable();
  std::string buffer;
  std::vector<std::string_view> views;
  Progress before = std::make_shared<const std::string>(R"({"chunk":1})");
  Progress after = std::make_shared<const std::string>(R"({"chunk":2})");

  explicit Chunk(const std::vector<std::string>& names) {
    EntryBuilder driver;
    std::vector<size_t> ends;
    for (size_t i = 0; i < names.size(); ++i) {
      binlog::ColumnValue v[2];
      ItemsRow(static_cast<int64_t>(i + 1), names[i], v);
      const Status s = driver.SnapshotRow(*table, v, &buffer);
      EXPECT_TRUE(s.ok()) << s.ToString();
      ends.push_back(buffer.size());
    }
    size_t from = 0;
    for (size_t end : ends) {
      views.emplace_back(buffer.data() + from, end - from);
      from = end;
    }
  }

  SnapshotChunkOut Out() const {
    return testing_support::ChunkOutAt(table.get(), views, before, after, kReadAtMs);
  }
};

bool Marked(const Got& g) {
  for (const auto& p : g.entry.header().props()) {
    if (p.key() == kSnapshotPropKey && p.value() == kSnapshotPropValue) return true;
  }
  return false;
}

void ExpectAtTheBoundary(const Got& g, const std::string& what) {
  const LogPosition& p = g.meta.position;
  EXPECT_TRUE(g.safe()) << what;
  EXPECT_EQ(p.journal_name, kFile) << what;
  EXPECT_EQ(p.position, 5000u) << what;
  EXPECT_FALSE(p.included) << what;
  EXPECT_EQ(p.server_id, 1u) << what;
  EXPECT_EQ(p.gtid, "0-1-9") << what;
  EXPECT_EQ(p.transaction_begin, 0u) << what;
  const entry::Header& h = g.entry.header();
  EXPECT_EQ(h.logfilename(), kFile) << what;
  EXPECT_EQ(h.logfileoffset(), 5000) << what;
  EXPECT_EQ(h.serverid(), 1) << what;
  EXPECT_EQ(h.executetime(), kReadAtMs) << what;
  EXPECT_EQ(h.gtid(), "") << what;
  EXPECT_TRUE(Marked(g)) << what << ": the snapshot marker";
}

TEST(EntrySinkSnapshot, AChunkIsBeginRowsEndMarkedAtItsBoundary) {
  Harness h;
  const Chunk c({"apple", "", "pear \xc3\xa9"});
  ASSERT_TRUE(h.sink->PutSnapshotChunk(c.Out()).ok());
  const std::vector<Got> got = Drain(h.store.get());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].type(), entry::TRANSACTIONBEGIN);
  EXPECT_EQ(got[1].type(), entry::ROWDATA);
  EXPECT_EQ(got[2].type(), entry::TRANSACTIONEND);
  EXPECT_EQ(got[0].meta.kind, EntryKind::kTransactionBegin);
  EXPECT_EQ(got[1].meta.kind, EntryKind::kOther);
  EXPECT_EQ(got[2].meta.kind, EntryKind::kTransactionEnd);
  EXPECT_EQ(got[0].meta.rows, 0u);
  EXPECT_EQ(got[1].meta.rows, 3u);
  EXPECT_EQ(got[2].meta.rows, 0u);
  for (size_t i = 0; i < got.size(); ++i) ExpectAtTheBoundary(got[i], "entry " + std::to_string(i));
  // Before the END is acked a resume re-reads the chunk; after it, the next one.
  EXPECT_EQ(got[0].meta.position.snapshot, c.before);
  EXPECT_EQ(got[1].meta.position.snapshot, c.before);
  EXPECT_EQ(got[2].meta.position.snapshot, c.after);

  const entry::Header& rh = got[1].entry.header();
  EXPECT_EQ(rh.schemaname(), "shop");
  EXPECT_EQ(rh.tablename(), "items");
  EXPECT_EQ(rh.eventtype(), entry::INSERT);
  ASSERT_EQ(rh.props_size(), 2);
  EXPECT_EQ(rh.props(0).key(), "rowsCount");
  EXPECT_EQ(rh.props(0).value(), "3");
  const entry::RowChange& rc = got[1].change;
  EXPECT_EQ(rc.eventtype(), entry::INSERT);
  EXPECT_EQ(rc.tableid(), 31);
  EXPECT_FALSE(rc.isddl());
  ASSERT_EQ(rc.rowdatas_size(), 3);
  EXPECT_EQ(rc.rowdatas(2).beforecolumns_size(), 0);
  ASSERT_EQ(rc.rowdatas(2).aftercolumns_size(), 2);
  EXPECT_EQ(rc.rowdatas(2).aftercolumns(0).value(), "3");
  EXPECT_TRUE(rc.rowdatas(2).aftercolumns(0).iskey());
  EXPECT_EQ(rc.rowdatas(2).aftercolumns(1).value(), "pear \xc3\xa9");
  EXPECT_TRUE(rc.rowdatas(2).aftercolumns(1).updated());
  EXPECT_EQ(rc.rowdatas(1).aftercolumns(1).value(), "");
  entry::TransactionBegin begin;
  ASSERT_TRUE(begin.ParseFromString(got[0].entry.storevalue()));
  EXPECT_EQ(begin.executetime(), kReadAtMs);
  EXPECT_EQ(begin.threadid(), 0);
  entry::TransactionEnd end;
  ASSERT_TRUE(end.ParseFromString(got[2].entry.storevalue()));
  EXPECT_EQ(end.transactionid(), "");

  const EntrySinkStats s = h.sink->stats();
  EXPECT_EQ(s.snapshot_chunks, 1u);
  EXPECT_EQ(s.snapshot_entries, 3u);
  EXPECT_EQ(s.snapshot_rows, 3u);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.rows, 0u);
  EXPECT_EQ(s.transactions, 0u);
}

// A batch's safe position (where an ack moves the cursor) carries the
// progress of its last entry: an ack of the BEGIN alone keeps the chunk.
TEST(EntrySinkSnapshot, AnAckedBatchStoresTheProgressOfItsLastEntry) {
  Harness h;
  const Chunk c({"a", "b"});
  ASSERT_TRUE(h.sink->PutSnapshotChunk(c.Out()).ok());
  store::Batch batch;
  ASSERT_TRUE(h.store->Get(2, store::RingStore::kNoWait, &batch).ok());
  ASSERT_EQ(batch.size(), 2u);
  ASSERT_TRUE(batch.safe_position.has_value());
  EXPECT_EQ(batch.safe_position->snapshot, c.before);
  ASSERT_TRUE(h.store->Ack(batch).ok());
  ASSERT_TRUE(h.store->Get(2, store::RingStore::kNoWait, &batch).ok());
  ASSERT_EQ(batch.size(), 1u);
  ASSERT_TRUE(batch.safe_position.has_value());
  EXPECT_EQ(batch.safe_position->snapshot, c.after);
  EXPECT_EQ(batch.safe_position->position, 5000u);
}

// A name of `n` bytes whose rendered RowData takes exactly `bytes` (names of
// n and n+1 bytes may straddle a length's size: the search steps over).
std::string NameForRowBytes(size_t bytes) {
  for (size_t n = bytes > 200 ? bytes - 200 : 0; n < bytes; ++n) {
    const Chunk probe({std::string(n, 'x')});
    if (probe.buffer.size() == bytes) return std::string(n, 'x');
  }
  ADD_FAILURE() << "no name renders a row of " << bytes << " bytes";
  return {};
}

std::vector<uint32_t> RowsPerEntry(const std::vector<Got>& got) {
  std::vector<uint32_t> out;
  for (const Got& g : got) {
    if (g.type() != entry::ROWDATA) continue;
    EXPECT_EQ(g.change.rowdatas_size(), static_cast<int>(g.meta.rows));
    EXPECT_EQ(g.entry.header().props(0).value(), std::to_string(g.meta.rows));
    out.push_back(g.meta.rows);
  }
  return out;
}

TEST(EntrySinkSnapshot, RowsAreGroupedIntoEntriesByTheByteBound) {
  const std::string fifth(kSnapshotEntryRowBytes * 2 / 5, 'f');  // two fit, three do not
  const std::string too_big(kSnapshotEntryRowBytes + 1000, 'B');
  Harness h;
  const Chunk c({fifth, fifth, fifth, too_big, "s1", "s2", "s3", "s4", "s5", too_big});
  ASSERT_TRUE(h.sink->PutSnapshotChunk(c.Out()).ok());
  const std::vector<Got> got = Drain(h.store.get());
  ASSERT_EQ(got.size(), 7u);
  EXPECT_EQ(RowsPerEntry(got), (std::vector<uint32_t>{2, 1, 1, 5, 1}));
  for (size_t i = 0; i < got.size(); ++i) {
    ExpectAtTheBoundary(got[i], "entry " + std::to_string(i));
    EXPECT_EQ(got[i].meta.position.snapshot, i + 1 == got.size() ? c.after : c.before) << i;
  }
  EXPECT_EQ(got[4].change.rowdatas(4).aftercolumns(1).value(), "s5");
  EXPECT_EQ(got[5].change.rowdatas(0).aftercolumns(1).value(), too_big);
  EXPECT_EQ(h.sink->stats().snapshot_rows, 10u);
  EXPECT_EQ(h.sink->stats().snapshot_entries, 7u);

  // Rows filling the bound exactly share an entry; one byte more does not.
  const Chunk first({std::string(1000, 'a')});
  const std::string rest = NameForRowBytes(kSnapshotEntryRowBytes - first.buffer.size());
  const std::string rest_plus_one = NameForRowBytes(kSnapshotEntryRowBytes - first.buffer.size() + 1);
  ASSERT_TRUE(h.sink->PutSnapshotChunk(Chunk({std::string(1000, 'a'), rest}).Out()).ok());
  EXPECT_EQ(RowsPerEntry(Drain(h.store.get())), (std::vector<uint32_t>{2}));
  ASSERT_TRUE(h.sink->PutSnapshotChunk(Chunk({std::string(1000, 'a'), rest_plus_one}).Out()).ok());
  EXPECT_EQ(RowsPerEntry(Drain(h.store.get())), (std::vector<uint32_t>{1, 1}));
}

// Views in separate buffers are copied together first: the same entries.
TEST(EntrySinkSnapshot, RowsInSeparateBuffersMakeTheSameEntries) {
  const Chunk c({"one", "two", std::string(kSnapshotEntryRowBytes / 2, 't'), "four"});
  const std::vector<std::string> copies(c.views.begin(), c.views.end());
  const std::vector<std::string_view> scattered(copies.begin(), copies.end());
  Harness one_run, apart;
  ASSERT_TRUE(one_run.sink->PutSnapshotChunk(c.Out()).ok());
  SnapshotChunkOut out = c.Out();
  out.rows = scattered;
  ASSERT_TRUE(apart.sink->PutSnapshotChunk(out).ok());
  const std::vector<Got> a = Drain(one_run.store.get()), b = Drain(apart.store.get());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].entry.SerializeAsString(), b[i].entry.SerializeAsString()) << i;
  }
}

TEST(EntrySinkSnapshot, WithoutTransactionEntriesTheLastRowsEntryCarriesTheProgressAfter) {
  EntrySinkOptions o;
  o.event_types.transaction_entry = true;
  Harness h(std::move(o));
  const std::string half(kSnapshotEntryRowBytes / 2 + 10, 'h');
  const Chunk c({half, half, "x"});
  ASSERT_TRUE(h.sink->PutSnapshotChunk(c.Out()).ok());
  const std::vector<Got> got = Drain(h.store.get());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(RowsPerEntry(got), (std::vector<uint32_t>{1, 2}));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].meta.kind, EntryKind::kOther);
    ExpectAtTheBoundary(got[i], "entry " + std::to_string(i));
  }
  EXPECT_EQ(got[0].meta.position.snapshot, c.before);
  EXPECT_EQ(got[1].meta.position.snapshot, c.after);
}

// Stream entries after a chunk that put nothing carry its progress after.
void ExpectStreamCarries(Harness* h, const Progress& progress, uint64_t at) {
  // An update: the dml.insert case drops inserts.
  const std::vector<Got> got =
      h->Run(Tx(at, {Rows(at + 42, at + 100, "shop", "orders", binlog::RowsKind::kUpdate)}));
  ASSERT_EQ(got.size(), 3u);
  for (const Got& g : got) {
    EXPECT_EQ(g.meta.position.snapshot, progress);
    EXPECT_FALSE(Marked(g));
  }
}

TEST(EntrySinkSnapshot, DroppedInsertsOrNoRowsPutNothingButMoveTheProgress) {
  EntrySinkOptions o;
  o.event_types.dml_insert = true;
  Harness dropped(std::move(o));
  Chunk c({"a"});
  ASSERT_TRUE(dropped.sink->PutSnapshotChunk(c.Out()).ok());
  EXPECT_TRUE(Drain(dropped.store.get()).empty());
  EXPECT_EQ(dropped.sink->stats().snapshot_chunks, 0u);
  ExpectStreamCarries(&dropped, c.after, 9000);

  Harness empty;
  SnapshotChunkOut out = c.Out();
  out.rows = {};
  ASSERT_TRUE(empty.sink->PutSnapshotChunk(out).ok());
  EXPECT_TRUE(Drain(empty.store.get()).empty());
  ExpectStreamCarries(&empty, c.after, 9000);

  Harness refused(Filtered("shop\\.orders"));  // the chunk's table is not subscribed
  ASSERT_TRUE(refused.sink->PutSnapshotChunk(c.Out()).ok());
  EXPECT_TRUE(Drain(refused.store.get()).empty());
  ExpectStreamCarries(&refused, c.after, 9000);
  EXPECT_EQ(refused.sink->stats().snapshot_entries, 0u);
}

TEST(EntrySinkSnapshot, StreamEntriesAndEmptyMarkersCarryTheProgressSet) {
  EntrySinkOptions o = Filtered("shop\\.orders");
  o.empty_transaction_threshold = 1000;
  Harness h(std::move(o));
  ExpectStreamCarries(&h, nullptr, 1000);  // none until a snapshot sets it
  const Progress p = std::make_shared<const std::string>(R"({"table":"shop.items"})");
  h.sink->SetSnapshotProgress(p);
  ExpectStreamCarries(&h, p, 2000);
  // A skipped transaction's empty BEGIN/END pair, on a heartbeat.
  EXPECT_TRUE(h.Run(Tx(3000, {Rows(3042, 3100, "shop", "other")})).empty());
  h.sink->OnIdle(LogPosition{});
  const std::vector<Got> markers = Drain(h.store.get());
  ASSERT_EQ(markers.size(), 2u);
  for (const Got& g : markers) EXPECT_EQ(g.meta.position.snapshot, p);
  h.sink->SetSnapshotProgress(nullptr);
  ExpectStreamCarries(&h, nullptr, 4000);
}

TEST(EntrySinkSnapshot, BadCallsAreErrorsAndLeaveTheProgress) {
  Harness h;
  Chunk c({"a"});
  const Progress p = std::make_shared<const std::string>("{}");
  h.sink->SetSnapshotProgress(p);
  SnapshotChunkOut no_table = c.Out();
  no_table.table = nullptr;
  EXPECT_EQ(h.sink->PutSnapshotChunk(no_table).code(), Status::Code::kInvalidArgument);
  SnapshotChunkOut empty_row = c.Out();
  const std::string_view rows[] = {c.views[0], {}};
  empty_row.rows = rows;
  EXPECT_EQ(h.sink->PutSnapshotChunk(empty_row).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Drain(h.store.get()).empty());
  ExpectStreamCarries(&h, p, 1000);

  // Between the pieces of a large transaction.
  parser::Transaction first = Tx(2000, {Rows(2042, 2100, "shop", "orders")});
  first.events.pop_back();
  first.end_offset = 2100;
  first.last_piece = false;
  ASSERT_TRUE(h.sink->OnTransaction(first).ok());
  const Status inside = h.sink->PutSnapshotChunk(c.Out());
  EXPECT_EQ(inside.code(), Status::Code::kInvalidArgument) << inside.ToString();
  EXPECT_EQ(h.sink->stats().snapshot_entries, 0u);

  Harness stopped;
  stopped.store->Stop();
  EXPECT_EQ(stopped.sink->PutSnapshotChunk(c.Out()).code(), Status::Code::kAborted);
  SnapshotChunkOut nothing = c.Out();
  nothing.rows = {};
  EXPECT_EQ(stopped.sink->PutSnapshotChunk(nothing).code(), Status::Code::kAborted);
}

}  // namespace
}  // namespace canal::sink
