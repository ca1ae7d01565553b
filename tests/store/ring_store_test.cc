#include "canal/store/ring_store.h"
#include "ring_store_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace canal::store {
namespace {

using namespace std::chrono_literals;

EntryMeta Meta(uint64_t offset, EntryKind kind = EntryKind::kOther, bool safe = false) {
  EntryMeta m;
  m.position.journal_name = "mysql-bin.000001";
  m.position.position = offset;
  m.position.server_id = 1;
  m.position.timestamp_ms = 1591600659000 + static_cast<int64_t>(offset);
  m.kind = kind;
  m.safe_resume_point = safe;
  return m;
}

using testing::MakeStore;
using Rule = RingStore::WaitRule;

// Puts entries "e<offset>" at offsets first, first+1, ...
void PutN(RingStore* store, uint64_t first, int n, EntryKind kind = EntryKind::kOther) {
  for (int i = 0; i < n; ++i) {
    const uint64_t offset = first + static_cast<uint64_t>(i);
    ASSERT_TRUE(store->Put("e" + std::to_string(offset), Meta(offset, kind)).ok());
  }
}

std::vector<uint64_t> Offsets(const Batch& b) {
  std::vector<uint64_t> v;
  for (const EntryView& e : b.entries) v.push_back(e.meta->position.position);
  return v;
}

// Runs `fn` on a thread and reports whether it has finished.
class Background {
 public:
  template <typename Fn>
  explicit Background(Fn fn) : thread_([this, fn] {
      fn();
      done_.store(true);
    }) {}
  ~Background() { Join(); }
  bool done() const { return done_.load(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  // True if still running after `d`: evidence (not proof) that it blocks.
  bool StillRunningAfter(std::chrono::milliseconds d) {
    std::this_thread::sleep_for(d);
    return !done();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// ---- put / get / ack basics --------------------------------------------------

TEST(RingStoreTest, GetReturnsPutEntriesInOrderWithBytesAndMeta) {
  auto store = MakeStore(8, BatchMode::kItemSize);
  ASSERT_TRUE(store->Put("alpha", Meta(100, EntryKind::kTransactionBegin)).ok());
  ASSERT_TRUE(store->Put("beta", Meta(200)).ok());
  ASSERT_TRUE(store->Put("gamma", Meta(300, EntryKind::kTransactionEnd, true)).ok());
  Batch b;
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.entries[0].bytes, "alpha");
  EXPECT_EQ(b.entries[1].bytes, "beta");
  EXPECT_EQ(b.entries[2].bytes, "gamma");
  EXPECT_EQ(b.entries[0].meta->kind, EntryKind::kTransactionBegin);
  EXPECT_EQ(b.entries[2].meta->kind, EntryKind::kTransactionEnd);
  EXPECT_TRUE(b.entries[2].meta->safe_resume_point);
  EXPECT_EQ(b.entries[0].sequence, 0u);
  EXPECT_EQ(b.entries[2].sequence, 2u);
  EXPECT_EQ(b.first_sequence, 0u);
  EXPECT_EQ(b.end_sequence, 3u);
  EXPECT_EQ(b.bytes, 5u + 4u + 5u);
  EXPECT_EQ(b.first_position, Meta(100).position);
  EXPECT_EQ(b.last_position, Meta(300).position);
}

TEST(RingStoreTest, GetOnEmptyRingReturnsEmptyBatchAtOnce) {
  auto store = MakeStore(8, BatchMode::kItemSize);
  Batch b;
  b.entries.push_back(EntryView{});  // stale content is cleared
  ASSERT_TRUE(store->Get(10, RingStore::kNoWait, &b).ok());
  EXPECT_TRUE(b.empty());
  EXPECT_FALSE(b.safe_position.has_value());
}

TEST(RingStoreTest, BatchSizeZeroIsInvalid) {
  auto store = MakeStore(8, BatchMode::kItemSize);
  Batch b;
  EXPECT_EQ(store->TryGet(0, &b).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Get(0, 0ns, &b).code(), Status::Code::kInvalidArgument);
}

TEST(RingStoreTest, ConsecutiveGetsHandOutDisjointBatches) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 1, 7);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{4, 5, 6}));
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{7}));
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  EXPECT_TRUE(b.empty());
  RingStoreStats s = store->stats();
  EXPECT_EQ(s.put_sequence, 7u);
  EXPECT_EQ(s.get_sequence, 7u);
  EXPECT_EQ(s.ack_sequence, 0u);
}

TEST(RingStoreTest, ItemSizeBatchNeverExceedsCount) {
  auto store = MakeStore(64, BatchMode::kItemSize);
  PutN(store.get(), 0, 50);
  Batch b;
  ASSERT_TRUE(store->TryGet(20, &b).ok());
  EXPECT_EQ(b.size(), 20u);
}

TEST(RingStoreTest, MemSizeBatchNeverExceedsSizeTimesMemunitBytes) {
  auto store = MakeStore(64, BatchMode::kMemSize, /*memunit=*/10);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store->Put(std::string(7, 'x'), Meta(i)).ok());
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());  // 30 bytes: four 7-byte entries
  EXPECT_EQ(b.size(), 4u);
  EXPECT_EQ(b.bytes, 28u);
  ASSERT_TRUE(store->TryGet(1, &b).ok());  // 10 bytes: one
  EXPECT_EQ(b.size(), 1u);
}

TEST(RingStoreTest, MemSizeEntryLargerThanBatchComesAlone) {
  auto store = MakeStore(64, BatchMode::kMemSize, /*memunit=*/10);
  ASSERT_TRUE(store->Put(std::string(25, 'x'), Meta(1)).ok());
  ASSERT_TRUE(store->Put("y", Meta(2)).ok());
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{1}));
  EXPECT_EQ(b.bytes, 25u);
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{2}));
}

// ---- positions ---------------------------------------------------------------

TEST(RingStoreTest, SafePositionIsTheLastSafeResumePointInTheBatch) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  ASSERT_TRUE(store->Put("b1", Meta(10, EntryKind::kTransactionBegin)).ok());
  ASSERT_TRUE(store->Put("r1", Meta(20)).ok());
  ASSERT_TRUE(store->Put("e1", Meta(30, EntryKind::kTransactionEnd, true)).ok());
  ASSERT_TRUE(store->Put("b2", Meta(40, EntryKind::kTransactionBegin)).ok());
  ASSERT_TRUE(store->Put("piece", Meta(50, EntryKind::kOther, true)).ok());
  ASSERT_TRUE(store->Put("r2", Meta(60)).ok());
  Batch b;
  ASSERT_TRUE(store->TryGet(6, &b).ok());
  ASSERT_TRUE(b.safe_position.has_value());
  EXPECT_EQ(*b.safe_position, Meta(50).position);
  EXPECT_EQ(b.first_position, Meta(10).position);
  EXPECT_EQ(b.last_position, Meta(60).position);
}

TEST(RingStoreTest, BatchInsideATransactionHasNoSafePosition) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  ASSERT_TRUE(store->Put("b1", Meta(10, EntryKind::kTransactionBegin)).ok());
  ASSERT_TRUE(store->Put("r1", Meta(20)).ok());
  ASSERT_TRUE(store->Put("e1", Meta(30, EntryKind::kTransactionEnd, true)).ok());
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  EXPECT_FALSE(b.safe_position.has_value());
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  ASSERT_TRUE(b.safe_position.has_value());
  EXPECT_EQ(*b.safe_position, Meta(30).position);
}

// ---- ack ---------------------------------------------------------------------

TEST(RingStoreTest, AckOfBatchFreesItsEntries) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 5);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  ASSERT_TRUE(store->Ack(b).ok());
  RingStoreStats s = store->stats();
  EXPECT_EQ(s.ack_sequence, 3u);
  EXPECT_EQ(s.held_bytes, 2u * 2u);  // "e3", "e4"
}

TEST(RingStoreTest, AckBeyondGetIsAnError) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 5);
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  Status s = store->Ack(3);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("beyond"), std::string::npos) << s.ToString();
  EXPECT_EQ(store->stats().ack_sequence, 0u);
}

TEST(RingStoreTest, AckThatFreesNothingIsAnError) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 5);
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  EXPECT_EQ(store->Ack(0).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(store->Ack(b).ok());
  EXPECT_EQ(store->Ack(b).code(), Status::Code::kInvalidArgument);  // twice
  EXPECT_EQ(store->Ack(1).code(), Status::Code::kInvalidArgument);  // behind ack
  EXPECT_EQ(store->stats().ack_sequence, 2u);
}

TEST(RingStoreTest, AckOfEmptyBatchIsAnError) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  EXPECT_EQ(store->Ack(b).code(), Status::Code::kInvalidArgument);
}

TEST(RingStoreTest, AckOfALaterBatchFreesEarlierOutstandingOnes) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 6);
  Batch b1, b2;
  ASSERT_TRUE(store->TryGet(2, &b1).ok());
  ASSERT_TRUE(store->TryGet(2, &b2).ok());
  ASSERT_TRUE(store->Ack(b2).ok());
  EXPECT_EQ(store->stats().ack_sequence, 4u);
  EXPECT_EQ(store->Ack(b1).code(), Status::Code::kInvalidArgument);
}

TEST(RingStoreTest, PartialAckFreesAPrefix) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 6);
  Batch b;
  ASSERT_TRUE(store->TryGet(4, &b).ok());
  ASSERT_TRUE(store->Ack(b.first_sequence + 1).ok());
  EXPECT_EQ(store->stats().ack_sequence, 1u);
  ASSERT_TRUE(store->Ack(b).ok());
  EXPECT_EQ(store->stats().ack_sequence, 4u);
}

TEST(RingStoreTest, AckByLastPositionFreesThroughThatEntry) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 100, 5);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  ASSERT_TRUE(store->Ack(b.last_position).ok());
  EXPECT_EQ(store->stats().ack_sequence, 3u);
}

TEST(RingStoreTest, AckByPositionIgnoresTimestampAndGtid) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 100, 3);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  LogPosition p = b.entries[1].meta->position;
  p.timestamp_ms = 0;
  p.gtid = "0-1-5";
  ASSERT_TRUE(store->Ack(p).ok());
  EXPECT_EQ(store->stats().ack_sequence, 2u);
}

TEST(RingStoreTest, AckByPositionThatMatchesNoEntryIsAnError) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 100, 5);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  LogPosition wrong_offset = Meta(150).position;
  LogPosition wrong_file = b.last_position;
  wrong_file.journal_name = "mysql-bin.000002";
  LogPosition wrong_included = b.last_position;
  wrong_included.included = true;
  EXPECT_EQ(store->Ack(wrong_offset).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Ack(wrong_file).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Ack(wrong_included).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Ack(LogPosition{}).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->stats().ack_sequence, 0u);
}

TEST(RingStoreTest, AckByPositionOfAnEntryNotHandedOutIsAnError) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 100, 5);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  EXPECT_EQ(store->Ack(Meta(103).position).code(), Status::Code::kInvalidArgument);
}

TEST(RingStoreTest, AckByPositionOfAnAckedEntryIsAnError) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 100, 5);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  ASSERT_TRUE(store->Ack(b).ok());
  EXPECT_EQ(store->Ack(b.last_position).code(), Status::Code::kInvalidArgument);
}

// ---- rollback ----------------------------------------------------------------

TEST(RingStoreTest, RollbackHandsOutUnackedEntriesAgain) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 6);
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  ASSERT_TRUE(store->Ack(b).ok());
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  store->Rollback();
  EXPECT_EQ(store->stats().get_sequence, 2u);
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{2, 3, 4, 5}));
  EXPECT_EQ(b.entries[0].bytes, "e2");
}

TEST(RingStoreTest, AckOfABatchFromBeforeARollbackIsAnError) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 4);
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  store->Rollback();
  EXPECT_EQ(store->Ack(b).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Ack(b.last_position).code(), Status::Code::kInvalidArgument);
}

TEST(RingStoreTest, ViewsStayValidAcrossRollbackUntilAcked) {
  auto store = MakeStore(4, BatchMode::kItemSize);
  PutN(store.get(), 0, 4);
  Batch b;
  ASSERT_TRUE(store->TryGet(4, &b).ok());
  store->Rollback();
  EXPECT_FALSE(store->TryPut("x", Meta(99)));  // the slots are still held
  EXPECT_EQ(b.entries[3].bytes, "e3");
}

TEST(RingStoreTest, RollbackWithNothingOutstandingIsHarmless) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  store->Rollback();
  PutN(store.get(), 0, 2);
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  EXPECT_EQ(b.size(), 2u);
}

// ---- wrap-around and slot reuse ------------------------------------------------

TEST(RingStoreTest, EntriesSurviveManyWrapsWithChangingSizes) {
  auto store = MakeStore(4, BatchMode::kItemSize, /*memunit=*/16);
  uint64_t expected = 0;
  Batch b;
  for (uint64_t i = 0; i < 200; ++i) {
    // Sizes go up and down so that slots both grow and give back buffers.
    std::string bytes(static_cast<size_t>((i * 37) % 300), static_cast<char>('a' + i % 26));
    bytes += std::to_string(i);
    if (!store->TryPut(bytes, Meta(i))) {
      ASSERT_TRUE(store->TryGet(3, &b).ok());
      for (const EntryView& e : b.entries) {
        ASSERT_EQ(e.sequence, expected);
        std::string want(static_cast<size_t>((expected * 37) % 300), static_cast<char>('a' + expected % 26));
        want += std::to_string(expected);
        ASSERT_EQ(e.bytes, want);
        ++expected;
      }
      ASSERT_TRUE(store->Ack(b).ok());
      --i;
    }
  }
  while (true) {
    ASSERT_TRUE(store->TryGet(3, &b).ok());
    if (b.empty()) break;
    expected += b.size();
    ASSERT_TRUE(store->Ack(b).ok());
  }
  EXPECT_EQ(expected, 200u);
  EXPECT_EQ(store->stats().held_bytes, 0u);
}

// ---- bounds and back-pressure ----------------------------------------------------

TEST(RingStoreTest, PutBlocksWhileRingIsFullByCountAndResumesOnAck) {
  auto store = MakeStore(4, BatchMode::kItemSize);
  PutN(store.get(), 0, 4);
  EXPECT_FALSE(store->TryPut("x", Meta(4)));
  EXPECT_FALSE(store->stopped());
  Status put_status = Status::Aborted("not run");
  Background producer([&] { put_status = store->Put("e4", Meta(4)); });
  EXPECT_TRUE(producer.StillRunningAfter(50ms));

  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());  // a get alone frees nothing
  EXPECT_TRUE(producer.StillRunningAfter(30ms));
  ASSERT_TRUE(store->Ack(b).ok());
  producer.Join();
  EXPECT_TRUE(put_status.ok());
  EXPECT_EQ(store->stats().put_sequence, 5u);
}

TEST(RingStoreTest, PutBlocksWhileMemSizeByteBoundIsFullAndResumesOnAck) {
  // Bound: 4 slots * 10 bytes = 40 bytes.
  auto store = MakeStore(4, BatchMode::kMemSize, /*memunit=*/10);
  ASSERT_TRUE(store->Put(std::string(15, 'a'), Meta(1)).ok());
  ASSERT_TRUE(store->Put(std::string(15, 'b'), Meta(2)).ok());
  EXPECT_FALSE(store->TryPut(std::string(15, 'c'), Meta(3)));  // 45 > 40
  EXPECT_TRUE(store->TryPut(std::string(10, 'c'), Meta(3)));   // exactly 40
  EXPECT_EQ(store->stats().held_bytes, 40u);
  EXPECT_FALSE(store->TryPut("d", Meta(4)));

  Status put_status = Status::Aborted("not run");
  Background producer([&] { put_status = store->Put(std::string(20, 'd'), Meta(4)); });
  EXPECT_TRUE(producer.StillRunningAfter(50ms));
  Batch b;
  ASSERT_TRUE(store->TryGet(1, &b).ok());  // one 15-byte entry: frees too little
  ASSERT_EQ(b.size(), 1u);
  ASSERT_TRUE(store->Ack(b).ok());
  EXPECT_TRUE(producer.StillRunningAfter(30ms));
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  ASSERT_TRUE(store->Ack(b).ok());
  producer.Join();
  EXPECT_TRUE(put_status.ok());
  EXPECT_LE(store->stats().held_bytes, 40u);
}

TEST(RingStoreTest, ItemSizeModeHasNoByteBound) {
  auto store = MakeStore(4, BatchMode::kItemSize, /*memunit=*/1);
  EXPECT_TRUE(store->TryPut(std::string(1000, 'a'), Meta(1)));
  EXPECT_TRUE(store->TryPut(std::string(1000, 'b'), Meta(2)));
  EXPECT_EQ(store->stats().held_bytes, 2000u);
}

TEST(RingStoreTest, EntryLargerThanTheByteBoundEntersOnlyAnEmptyRing) {
  auto store = MakeStore(4, BatchMode::kMemSize, /*memunit=*/10);  // 40 bytes
  ASSERT_TRUE(store->Put("x", Meta(1)).ok());
  EXPECT_FALSE(store->TryPut(std::string(100, 'h'), Meta(2)));
  Batch b;
  ASSERT_TRUE(store->TryGet(1, &b).ok());
  ASSERT_TRUE(store->Ack(b).ok());
  EXPECT_TRUE(store->TryPut(std::string(100, 'h'), Meta(2)));
  EXPECT_FALSE(store->TryPut("y", Meta(3)));  // nothing more until it is acked
  ASSERT_TRUE(store->TryGet(1, &b).ok());
  EXPECT_EQ(b.bytes, 100u);
  ASSERT_TRUE(store->Ack(b).ok());
  EXPECT_TRUE(store->TryPut("y", Meta(3)));
}

// A producer about to build a huge entry waits for room first, storing nothing: it returns
// once the entry would be taken at once (here: the ring empty), and Stop ends the wait.
TEST(RingStoreTest, WaitForRoomWaitsAsPutWouldWithoutPutting) {
  auto store = MakeStore(4, BatchMode::kMemSize, /*memunit=*/10);  // 40 bytes
  EXPECT_TRUE(store->WaitForRoom(100).ok());  // empty: anything enters
  ASSERT_TRUE(store->Put("x", Meta(1)).ok());
  EXPECT_TRUE(store->WaitForRoom(39).ok());
  Status waited = Status::Aborted("not run");
  Background producer([&] { waited = store->WaitForRoom(100); });
  EXPECT_TRUE(producer.StillRunningAfter(50ms));
  Batch b;
  ASSERT_TRUE(store->TryGet(1, &b).ok());
  ASSERT_TRUE(store->Ack(b).ok());
  producer.Join();
  EXPECT_TRUE(waited.ok());
  EXPECT_EQ(store->stats().put_sequence, 1u) << "nothing was put";

  ASSERT_TRUE(store->Put("y", Meta(2)).ok());
  Background stopped([&] { waited = store->WaitForRoom(100); });
  EXPECT_TRUE(stopped.StillRunningAfter(30ms));
  store->Stop();
  stopped.Join();
  EXPECT_EQ(waited.code(), Status::Code::kAborted) << waited.ToString();
  EXPECT_EQ(store->WaitForRoom(1).code(), Status::Code::kAborted);
}

// ---- timeouts ------------------------------------------------------------------

TEST(RingStoreTest, NegativeTimeoutReturnsWhatIsThereNow) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 2);
  Batch b;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(store->Get(10, -5ms, &b).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_EQ(b.size(), 2u);
}

TEST(RingStoreTest, PositiveTimeoutWaitsThenReturnsWhatIsThere) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 2);
  Batch b;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(store->Get(10, 60ms, &b).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 60ms);
  EXPECT_EQ(b.size(), 2u);
}

TEST(RingStoreTest, PositiveTimeoutOnEmptyRingReturnsEmptyBatch) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  Batch b;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(store->Get(1, 30ms, &b).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  EXPECT_TRUE(b.empty());
}

TEST(RingStoreTest, PositiveTimeoutReturnsEarlyOnceABatchIsFull) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  Batch b;
  Background producer([&] {
    std::this_thread::sleep_for(20ms);
    PutN(store.get(), 0, 3);
  });
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(store->Get(3, 10s, &b).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(b.size(), 3u);
}

TEST(RingStoreTest, ZeroTimeoutWaitsForAFullBatch) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  std::atomic<int> put_count{0};
  Background producer([&] {
    for (int i = 0; i < 5; ++i) {
      std::this_thread::sleep_for(10ms);
      ASSERT_TRUE(store->Put("e", Meta(i)).ok());
      put_count.fetch_add(1);
    }
  });
  Batch b;
  ASSERT_TRUE(store->Get(5, 0ns, &b).ok());
  EXPECT_EQ(b.size(), 5u) << "the entries come 10 ms apart: five means it waited for the last";
  // (put_count may still read 4 here: the get wakes inside the fifth Put,
  // before the producer counts it. Under load that raced.)
  producer.Join();
  EXPECT_EQ(put_count.load(), 5);
}

TEST(RingStoreTest, ZeroTimeoutInMemSizeWaitsForAFullBatchOfBytes) {
  auto store = MakeStore(64, BatchMode::kMemSize, /*memunit=*/10);
  Background producer([&] {
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(10ms);
      ASSERT_TRUE(store->Put(std::string(5, 'x'), Meta(i)).ok());
    }
  });
  Batch b;
  ASSERT_TRUE(store->Get(2, 0ns, &b).ok());  // 20 bytes: four 5-byte entries
  EXPECT_EQ(b.size(), 4u);
}

TEST(RingStoreTest, ZeroTimeoutReturnsWhenTheRingIsFullEvenIfTheBatchIsNot) {
  // A batch of 10 can never fill a 4-slot ring: a full ring counts as a full
  // batch, or both sides would wait for ever.
  auto store = MakeStore(4, BatchMode::kItemSize);
  Background producer([&] { PutN(store.get(), 0, 6); });
  Batch b;
  ASSERT_TRUE(store->Get(10, 0ns, &b).ok());
  EXPECT_FALSE(b.empty());
  EXPECT_LE(b.size(), 4u);
  uint64_t got = b.size();
  ASSERT_TRUE(store->Ack(b).ok());
  producer.Join();
  while (got < 6) {
    ASSERT_TRUE(store->TryGet(10, &b).ok());
    got += b.size();
    ASSERT_TRUE(store->Ack(b).ok());
  }
}

// ---- DDL isolation ---------------------------------------------------------------

TEST(RingStoreTest, DdlIsolationGivesEachDdlABatchOfItsOwn) {
  auto store = MakeStore(16, BatchMode::kItemSize, 1024, /*ddl_isolation=*/true);
  PutN(store.get(), 1, 2);
  PutN(store.get(), 3, 1, EntryKind::kDdl);
  PutN(store.get(), 4, 1, EntryKind::kDdl);
  PutN(store.get(), 5, 2);
  Batch b;
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{1, 2}));
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{3}));
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{4}));
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{5, 6}));
}

TEST(RingStoreTest, WithoutDdlIsolationDdlSharesBatches) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 1, 2);
  PutN(store.get(), 3, 1, EntryKind::kDdl);
  PutN(store.get(), 4, 2);
  Batch b;
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  EXPECT_EQ(b.size(), 5u);
}

TEST(RingStoreTest, WaitingDdlMakesABatchReadyUnderIsolation) {
  auto store = MakeStore(16, BatchMode::kItemSize, 1024, /*ddl_isolation=*/true);
  PutN(store.get(), 1, 1);
  EXPECT_FALSE(store->Ready(Rule::kBatch, 10));
  PutN(store.get(), 2, 1, EntryKind::kDdl);
  EXPECT_TRUE(store->Ready(Rule::kBatch, 10));
  Batch b;
  ASSERT_TRUE(store->Get(10, 0ns, &b).ok());  // does not wait for 10
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{1}));
}

TEST(RingStoreTest, DdlArrivingWakesAZeroTimeoutGetUnderIsolation) {
  auto store = MakeStore(16, BatchMode::kItemSize, 1024, /*ddl_isolation=*/true);
  Background producer([&] {
    std::this_thread::sleep_for(20ms);
    PutN(store.get(), 1, 1, EntryKind::kDdl);
  });
  Batch b;
  ASSERT_TRUE(store->Get(10, 0ns, &b).ok());
  EXPECT_EQ(Offsets(b), (std::vector<uint64_t>{1}));
}

// ---- asynchronous notification ------------------------------------------------------

TEST(RingStoreTest, NotifyWhenBatchDeclinesWhenABatchIsAlreadyReady) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 3);
  int calls = 0;
  EXPECT_FALSE(store->NotifyWhen(Rule::kBatch, 3, [&] { ++calls; }));
  EXPECT_FALSE(store->CancelNotify());
  EXPECT_EQ(calls, 0);
}

TEST(RingStoreTest, NotifyFiresOnceWhenThePutCompletesABatch) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 3, [&] { ++calls; }));
  PutN(store.get(), 0, 2);
  EXPECT_EQ(calls, 0);
  PutN(store.get(), 2, 1);
  EXPECT_EQ(calls, 1);
  PutN(store.get(), 3, 5);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(store->CancelNotify());
}

TEST(RingStoreTest, NotifyCountsFromTheCurrentGet) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 2);
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 2, [&] { ++calls; }));
  PutN(store.get(), 2, 1);
  EXPECT_EQ(calls, 0);
  PutN(store.get(), 3, 1);
  EXPECT_EQ(calls, 1);
}

TEST(RingStoreTest, NotifyInMemSizeCountsBytes) {
  auto store = MakeStore(16, BatchMode::kMemSize, /*memunit=*/10);
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 1, [&] { ++calls; }));
  ASSERT_TRUE(store->Put(std::string(6, 'x'), Meta(1)).ok());
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(store->Put(std::string(6, 'x'), Meta(2)).ok());
  EXPECT_EQ(calls, 1);
}

TEST(RingStoreTest, CancelledNotifyNeverFires) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 1, [&] { ++calls; }));
  EXPECT_TRUE(store->CancelNotify());
  EXPECT_FALSE(store->CancelNotify());
  PutN(store.get(), 0, 3);
  EXPECT_EQ(calls, 0);
}

TEST(RingStoreTest, ArmingAgainReplacesTheEarlierCallback) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  int first = 0, second = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 1, [&] { ++first; }));
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 2, [&] { ++second; }));
  PutN(store.get(), 0, 1);
  EXPECT_EQ(first + second, 0);
  PutN(store.get(), 1, 1);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
}

TEST(RingStoreTest, NotifyFiresWhenTheRingFillsBeforeTheBatch) {
  auto store = MakeStore(4, BatchMode::kItemSize);
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 10, [&] { ++calls; }));
  PutN(store.get(), 0, 4);
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(store->TryPut("x", Meta(4)));  // the producer finds it full
  EXPECT_EQ(calls, 1);
}

TEST(RingStoreTest, NotifyFiresWhenABlockedPutWaits) {
  auto store = MakeStore(4, BatchMode::kItemSize);
  PutN(store.get(), 0, 4);
  std::atomic<int> calls{0};
  // Nothing is blocked yet, and 4 < 10: armed.
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 10, [&] { calls.fetch_add(1); }));
  Background producer([&] { EXPECT_TRUE(store->Put("e4", Meta(4)).ok()); });
  while (calls.load() == 0) std::this_thread::sleep_for(1ms);
  Batch b;
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  EXPECT_EQ(b.size(), 4u);
  ASSERT_TRUE(store->Ack(b).ok());
  producer.Join();
  EXPECT_EQ(calls.load(), 1);
}

TEST(RingStoreTest, RollbackFiresANotifyThatTheRewoundEntriesSatisfy) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 3);
  Batch b;
  ASSERT_TRUE(store->TryGet(3, &b).ok());
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 3, [&] { ++calls; }));
  store->Rollback();
  EXPECT_EQ(calls, 1);
}

TEST(RingStoreTest, NotifyWithBatchSizeZeroOrNoCallbackIsDeclined) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  EXPECT_FALSE(store->NotifyWhen(Rule::kBatch, 0, [] {}));
  EXPECT_FALSE(store->NotifyWhen(Rule::kBatch, 1, nullptr));
}

// ---- low latency: any entry ------------------------------------------------------

TEST(RingStoreTest, NotifyWhenAnyEntryFiresOnTheFirstEntryEvenInMemSize) {
  // A MEMSIZE batch of 1000 units would need ~1 MB; one small entry must do.
  auto store = MakeStore(16, BatchMode::kMemSize, /*memunit=*/1024);
  EXPECT_FALSE(store->Ready(Rule::kAny, 0));
  EXPECT_FALSE(store->Ready(Rule::kBatch, 1000));
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kAny, 0, [&] { ++calls; }));
  ASSERT_TRUE(store->Put("x", Meta(1)).ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(store->Ready(Rule::kAny, 0));
  EXPECT_FALSE(store->Ready(Rule::kBatch, 1000));
  ASSERT_TRUE(store->Put("y", Meta(2)).ok());
  EXPECT_EQ(calls, 1);  // once
}

TEST(RingStoreTest, NotifyWhenAnyEntryCountsFromTheCurrentGetAndDeclinesWhenSomethingWaits) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 2);
  int calls = 0;
  EXPECT_FALSE(store->NotifyWhen(Rule::kAny, 0, [&] { ++calls; }));  // two wait already: get now
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  EXPECT_FALSE(store->Ready(Rule::kAny, 0));
  ASSERT_TRUE(store->NotifyWhen(Rule::kAny, 0, [&] { ++calls; }));
  PutN(store.get(), 2, 1);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(store->NotifyWhen(Rule::kAny, 0, nullptr));
}

TEST(RingStoreTest, RollbackFiresAnAnyNotifyAndStopEndsIt) {
  auto store = MakeStore(16, BatchMode::kMemSize, /*memunit=*/1024);
  PutN(store.get(), 0, 1);
  Batch b;
  ASSERT_TRUE(store->TryGet(1000, &b).ok());
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kAny, 0, [&] { ++calls; }));
  store->Rollback();  // the rewound entry is there again
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(store->TryGet(1000, &b).ok());
  ASSERT_TRUE(store->NotifyWhen(Rule::kAny, 0, [&] { ++calls; }));
  store->Stop();
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(store->Ready(Rule::kAny, 0));
  EXPECT_FALSE(store->NotifyWhen(Rule::kAny, 0, [&] { ++calls; }));
}

// ---- stop ------------------------------------------------------------------------

TEST(RingStoreTest, StopWakesABlockedPutWithAborted) {
  auto store = MakeStore(2, BatchMode::kItemSize);
  PutN(store.get(), 0, 2);
  Status put_status;
  Background producer([&] { put_status = store->Put("x", Meta(9)); });
  EXPECT_TRUE(producer.StillRunningAfter(30ms));
  store->Stop();
  producer.Join();
  EXPECT_EQ(put_status.code(), Status::Code::kAborted);
  EXPECT_EQ(store->stats().put_sequence, 2u);
}

TEST(RingStoreTest, StopWakesAWaitingGetWithAborted) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  Status get_status;
  Batch b;
  Background consumer([&] { get_status = store->Get(5, 0ns, &b); });
  EXPECT_TRUE(consumer.StillRunningAfter(30ms));
  store->Stop();
  consumer.Join();
  EXPECT_EQ(get_status.code(), Status::Code::kAborted);
}

TEST(RingStoreTest, StopWakesATimedGetWithAborted) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  Status get_status;
  Batch b;
  const auto start = std::chrono::steady_clock::now();
  Background consumer([&] { get_status = store->Get(5, 60s, &b); });
  std::this_thread::sleep_for(20ms);
  store->Stop();
  consumer.Join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  EXPECT_EQ(get_status.code(), Status::Code::kAborted);
}

TEST(RingStoreTest, AfterStopPutAndGetFailAndStopIsIdempotent) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  PutN(store.get(), 0, 2);
  store->Stop();
  store->Stop();
  EXPECT_TRUE(store->stopped());
  EXPECT_EQ(store->Put("x", Meta(5)).code(), Status::Code::kAborted);
  EXPECT_FALSE(store->TryPut("x", Meta(5)));
  Batch b;
  EXPECT_EQ(store->TryGet(5, &b).code(), Status::Code::kAborted);
  EXPECT_EQ(store->Get(5, 10ms, &b).code(), Status::Code::kAborted);
  EXPECT_FALSE(store->NotifyWhen(Rule::kBatch, 1, [] {}));
}

TEST(RingStoreTest, StopFiresAnArmedNotify) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kBatch, 1, [&] { ++calls; }));
  store->Stop();
  EXPECT_EQ(calls, 1);
}

// The metrics' view: bytes ever put and acked, and the time a Put waited.
TEST(RingStoreTest, StatsCountBytesAndBlockedTime) {
  auto store = MakeStore(2, BatchMode::kItemSize);
  PutN(store.get(), 1, 2);
  RingStoreStats s = store->stats();
  EXPECT_GT(s.put_bytes, 0u);
  EXPECT_EQ(s.ack_bytes, 0u);
  EXPECT_EQ(s.held_bytes, s.put_bytes);
  EXPECT_EQ(s.put_blocked_ns, 0u);
  const uint64_t two = s.put_bytes;
  // The ring is full: a third Put waits until the consumer acks.
  std::thread producer([&] { PutN(store.get(), 3, 1); });
  // A full ring with a blocked producer is a full batch of any size.
  while (!store->Ready(Rule::kBatch, 100)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Batch b;
  ASSERT_TRUE(store->TryGet(2, &b).ok());
  ASSERT_TRUE(store->Ack(b).ok());
  producer.join();
  s = store->stats();
  EXPECT_EQ(s.ack_bytes, two);
  EXPECT_GT(s.put_bytes, two);
  EXPECT_EQ(s.held_bytes, s.put_bytes - two);
  EXPECT_GE(s.put_blocked_ns, 20'000'000u) << "the wait of the third Put";
}

}  // namespace
}  // namespace canal::store
