// EntrySink's entry buffers: every moving put hands back the buffer of
// whatever entry last used the ring's slot (a small BEGIN/END as often as a
// ROWDATA, shuffled further by the ring's buffer pool), so the sink builds
// each entry in the best-fitting of the buffers it keeps. Once warm, a steady
// stream of small transactions allocates (almost) nothing on the parse thread, even
// when rows entries vary in size, and entries stay intact. Its own binary: allocation_counter.h replaces
// the global operator new, once per binary.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/sink/entry_sink.h"
#include "sink_test_support.h"
#include "support/allocation_counter.h"

namespace canal::sink {
namespace {

using parser::Transaction;
using parser::TxEvent;
using parser::TxEventKind;
using store::RingStore;

using testing_support::Ev;
using testing_support::kTime;
using testing_support::MakeStore;

// BEGIN, one rows event (no rows) on a table whose name is `name_length`
// characters (the ROWDATA entry's size follows it), XID.
Transaction SmallTransaction(uint64_t begin, size_t name_length, std::vector<std::shared_ptr<binlog::TableMap>>* maps) {
  auto map = std::make_shared<binlog::TableMap>();
  map->table_id = 70;
  map->db = "shop";
  map->table = std::string(name_length, 't');
  maps->push_back(map);
  Transaction t;
  t.file = "mysql-bin.000042";  // longer than std::string's inline capacity
  t.begin_offset = begin;
  t.gtid = "0-1-" + std::to_string(begin);
  t.server_id = 1;
  t.timestamp = kTime;
  t.events.push_back(Ev(TxEventKind::kBegin, begin, begin + 42));
  TxEvent rows = Ev(TxEventKind::kRows, begin + 42, begin + 700);
  rows.table = map;
  rows.rows.info.kind = binlog::RowsKind::kWrite;
  rows.rows.table_id = 70;
  rows.rows.table = map.get();
  rows.rows.offset = begin + 42;
  t.events.push_back(rows);
  TxEvent commit = Ev(TxEventKind::kCommit, begin + 700, begin + 731);
  commit.has_xid = true;
  commit.xid = begin;
  t.events.push_back(commit);
  t.end_offset = begin + 731;
  return t;
}

// Name lengths that make ROWDATA entries of 480-620 bytes in no steady order,
// as rows of one table with varying VARCHARs do.
std::vector<Transaction> Workload(std::vector<std::shared_ptr<binlog::TableMap>>* maps) {
  std::vector<Transaction> txns;
  for (uint64_t i = 0; i < 64; ++i) txns.push_back(SmallTransaction(1000 + i * 731, 400 + (i * 37) % 141, maps));
  return txns;
}

// Takes and acks what is waiting; keeps `batch`'s capacity.
size_t TakeAll(RingStore* store, store::Batch* batch) {
  Status s = store->Get(4096, RingStore::kNoWait, batch);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok() || batch->empty()) return 0;
  const size_t n = batch->size();
  EXPECT_TRUE(store->Ack(*batch).ok());
  return n;
}

TEST(EntrySinkBuffers, WarmSmallTransactionsOfVaryingSizeAllocateNothing) {
  std::vector<std::shared_ptr<binlog::TableMap>> maps;
  const std::vector<Transaction> txns = Workload(&maps);
  // The server's default ring is 16384 slots, its buffer pool 1,024 buffers
  // (a slot whose buffer went to the pool hands back a pooled one, of any
  // kind), as here.
  auto store = MakeStore(16384);
  EntrySink sink(EntrySinkOptions{}, store.get());
  store::Batch batch;
  batch.entries.reserve(4096);
  // Takes batches of 300-1,300 transactions, as a catching-up client's gets
  // are, in no step with the three entries of each or with the ring. Counts
  // the sink's allocations (the producer's side) only.
  size_t allocations = 0;
  auto run = [&](size_t from, size_t count) {
    for (size_t i = from; i < from + count; ++i) {
      testing::CountAllocations sink_only;
      Status s = sink.OnTransaction(txns[i % txns.size()]);
      allocations += sink_only.allocations();
      ASSERT_TRUE(s.ok()) << s.ToString();
      if ((i * 7919) % 1000 < 2) TakeAll(store.get(), &batch);
    }
    TakeAll(store.get(), &batch);
  };
  run(0, 100000);  // warm: 18 laps of the ring, its slots and pool filled
  allocations = 0;
  run(100000, 20000);
  // Before the sink kept spares and headroom: ~8,000 (one in eight
  // entries); with them the few left are buffers still turning big.
  EXPECT_LT(allocations, 60u) << "the sink allocated while warm (60,000 entries)";
  EXPECT_EQ(sink.stats().entries, 120000u * 3);
}

TEST(EntrySinkBuffers, EntriesBuiltInRecycledBuffersAreWhole) {
  std::vector<std::shared_ptr<binlog::TableMap>> maps;
  const std::vector<Transaction> txns = Workload(&maps);
  auto store = MakeStore(16);
  EntrySink sink(EntrySinkOptions{}, store.get());
  store::Batch batch;
  for (size_t i = 0; i < 500; ++i) {
    const Transaction& t = txns[i % txns.size()];
    ASSERT_TRUE(sink.OnTransaction(t).ok());
    ASSERT_TRUE(store->Get(16, RingStore::kNoWait, &batch).ok());
    ASSERT_EQ(batch.size(), 3u);
    entry::Entry e;
    ASSERT_TRUE(e.ParseFromString(std::string(batch.entries[0].bytes)));
    EXPECT_EQ(e.entrytype(), entry::TRANSACTIONBEGIN);
    ASSERT_TRUE(e.ParseFromString(std::string(batch.entries[1].bytes)));
    EXPECT_EQ(e.entrytype(), entry::ROWDATA);
    EXPECT_EQ(e.header().tablename(), t.events[1].table->table) << "transaction " << i;
    ASSERT_TRUE(e.ParseFromString(std::string(batch.entries[2].bytes)));
    EXPECT_EQ(e.entrytype(), entry::TRANSACTIONEND);
    entry::TransactionEnd end;
    ASSERT_TRUE(end.ParseFromString(e.storevalue()));
    EXPECT_EQ(end.transactionid(), std::to_string(t.events[2].xid));
    ASSERT_TRUE(store->Ack(batch).ok());
  }
}

// Snapshot rows are rendered on the driver's reader threads and put as chunks
// on the stream's. Once warm, rendering allocates nothing (the rows' buffer
// keeps its capacity), and a chunk whose rows make one ROWDATA entry puts it
// in buffers the ring hands back. Chunks of several big entries of unequal
// sizes allocate at most one buffer per ROWDATA entry (the ring frees or
// copies a buffer far bigger than the entry put in it), never one per row.
struct SnapshotWorkload {
  size_t render_allocations = 0, sink_allocations = 0, rows_entries = 0;
};

SnapshotWorkload RunSnapshotChunks(const std::string& long_name) {
  const auto table = testing_support::ItemsTable();
  EntryBuilder driver;
  std::string buffer;
  std::vector<size_t> ends;
  std::vector<std::string_view> views;
  ends.reserve(200);
  views.reserve(200);
  const std::string names[] = {"pear", std::string(300, 'n'), "caf\xc3\xa9", long_name};
  auto render = [&] {
    buffer.clear();
    ends.clear();
    for (int64_t i = 0; i < 200; ++i) {
      binlog::ColumnValue v[2];
      testing_support::ItemsRow(i, names[i % 4], v);
      EXPECT_TRUE(driver.SnapshotRow(*table, v, &buffer).ok());
      ends.push_back(buffer.size());
    }
    views.clear();
    for (size_t i = 0, from = 0; i < ends.size(); from = ends[i++]) {
      views.emplace_back(buffer.data() + from, ends[i] - from);
    }
  };
  // A ring whose retained budget (slots x memunit: 4 MiB) holds the chunks'
  // entry buffers, turning over every few chunks.
  store::RingStoreOptions ro;
  ro.buffer_size = 64;
  ro.buffer_memunit = 64 << 10;
  ro.batch_mode = store::BatchMode::kItemSize;
  std::unique_ptr<RingStore> store;
  EXPECT_TRUE(RingStore::Create(ro, &store).ok());
  EntrySink sink(EntrySinkOptions{}, store.get());
  store::Batch batch;
  batch.entries.reserve(4096);
  SnapshotChunkOut chunk;
  chunk.table = table.get();
  chunk.at.journal_name = "mysql-bin.000042";
  chunk.at.position = 4;
  chunk.at.snapshot = std::make_shared<const std::string>("{}");
  chunk.progress_after = std::make_shared<const std::string>("{1}");
  SnapshotWorkload w;
  for (int round = 0; round < 300; ++round) {
    if (round == 100) w = SnapshotWorkload{};  // warm: the ring's slots have turned over many times
    {
      testing::CountAllocations count;
      render();
      w.render_allocations += count.allocations();
    }
    chunk.rows = views;
    const uint64_t entries = sink.stats().snapshot_entries;
    {
      testing::CountAllocations count;
      EXPECT_TRUE(sink.PutSnapshotChunk(chunk).ok());
      w.sink_allocations += count.allocations();
    }
    w.rows_entries += sink.stats().snapshot_entries - entries - 2;  // less BEGIN and END
    TakeAll(store.get(), &batch);
  }
  EXPECT_EQ(sink.stats().snapshot_rows, 300u * 200);
  return w;
}

TEST(EntrySinkBuffers, WarmSnapshotRowsAndChunksAllocateNothing) {
  const SnapshotWorkload one_entry = RunSnapshotChunks(std::string(50, 'l'));  // ~75 KiB of rows a chunk
  EXPECT_EQ(one_entry.rows_entries, 200u);
  EXPECT_EQ(one_entry.render_allocations, 0u);
  EXPECT_EQ(one_entry.sink_allocations, 0u);
  const SnapshotWorkload big = RunSnapshotChunks(std::string(5000, 'l'));  // ~280 KiB: entries of 256 and 24 KiB
  EXPECT_EQ(big.rows_entries, 400u);
  EXPECT_EQ(big.render_allocations, 0u);
  EXPECT_LE(big.sink_allocations, big.rows_entries);
}

}  // namespace
}  // namespace canal::sink
