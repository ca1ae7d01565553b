// The catch-up aware low-latency wait (RingStore::TrackCatchUp): a low-latency
// get ends at a full batch, or with entries waiting once the producer says it
// has caught up; a producer that does not track catch-up ends it at any entry.
#include "canal/store/ring_store.h"
#include "ring_store_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace canal::store {
namespace {

using testing::MakeStore;
using Rule = RingStore::WaitRule;
using testing::MetaAt;

void Put(RingStore* store, uint64_t offset) {
  ASSERT_TRUE(store->Put("e" + std::to_string(offset), MetaAt(offset)).ok());
}

TEST(RingStoreCatchUp, UntrackedProducerEndsTheWaitAtAnyEntry) {
  auto store = MakeStore(64, BatchMode::kItemSize);
  EXPECT_FALSE(store->Ready(Rule::kLowLatency, 10));
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 10, [&] { ++calls; }));
  Put(store.get(), 1);
  EXPECT_EQ(calls, 1) << "as kAny: no producer reports catching up";
  EXPECT_TRUE(store->Ready(Rule::kLowLatency, 10));
}

TEST(RingStoreCatchUp, ABacklogBeingPutWaitsForAFullBatch) {
  auto store = MakeStore(64, BatchMode::kItemSize);
  store->TrackCatchUp();
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 10, [&] { ++calls; }));
  for (uint64_t i = 1; i <= 9; ++i) Put(store.get(), i);
  EXPECT_EQ(calls, 0) << "the producer is still putting: the batch may yet fill";
  EXPECT_FALSE(store->Ready(Rule::kLowLatency, 10));
  Put(store.get(), 10);
  EXPECT_EQ(calls, 1) << "a full batch ends the wait";
}

TEST(RingStoreCatchUp, CatchingUpWithEntriesWaitingEndsTheWait) {
  auto store = MakeStore(64, BatchMode::kMemSize, /*memunit=*/1024);
  store->TrackCatchUp();
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 1000, [&] { ++calls; }));
  Put(store.get(), 1);
  Put(store.get(), 2);
  EXPECT_EQ(calls, 0);
  store->ProducerCaughtUp();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(store->Ready(Rule::kLowLatency, 1000));
  // Arming now declines: ready already.
  EXPECT_FALSE(store->NotifyWhen(Rule::kLowLatency, 1000, [&] { ++calls; }));
  EXPECT_EQ(calls, 1);
}

TEST(RingStoreCatchUp, CatchingUpWithNothingWaitingKeepsWaitingForTheNextEntryAndCatchUp) {
  auto store = MakeStore(64, BatchMode::kItemSize);
  store->TrackCatchUp();
  Put(store.get(), 1);
  Batch b;
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  ASSERT_EQ(b.entries.size(), 1u);
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 10, [&] { ++calls; }));
  store->ProducerCaughtUp();
  EXPECT_EQ(calls, 0) << "nothing after the get: nothing to hand out";
  Put(store.get(), 2);
  EXPECT_EQ(calls, 0) << "putting again: the producer is busy";
  store->ProducerCaughtUp();
  EXPECT_EQ(calls, 1);
}

TEST(RingStoreCatchUp, AnIdleProducerMakesAnyNewEntryReadyAtOnce) {
  // A trickle: each entry is put and the producer is caught up right after.
  auto store = MakeStore(64, BatchMode::kMemSize, /*memunit=*/1024);
  store->TrackCatchUp();
  store->ProducerCaughtUp();
  Put(store.get(), 1);
  EXPECT_FALSE(store->Ready(Rule::kLowLatency, 1000)) << "the put marks the producer busy until it says otherwise";
  store->ProducerCaughtUp();
  EXPECT_TRUE(store->Ready(Rule::kLowLatency, 1000));
}

TEST(RingStoreCatchUp, AFullRingEndsTheWaitOfABlockedProducer) {
  auto store = MakeStore(8, BatchMode::kItemSize);
  store->TrackCatchUp();
  for (uint64_t i = 1; i <= 8; ++i) Put(store.get(), i);
  Batch b;
  ASSERT_TRUE(store->TryGet(7, &b).ok());  // handed out, not acked: the ring stays full
  std::atomic<int> calls{0};
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 100, [&] { ++calls; }))
      << "busy, and 1 waits: under a quarter of the ring";
  std::thread producer([&] { (void)store->Put("e9", MetaAt(9)); });  // blocks: the ring is full
  for (int i = 0; i < 5000 && calls.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(calls.load(), 1) << "neither side could move: the full ring is the batch";
  store->Stop();  // (frees the blocked producer)
  producer.join();
}

TEST(RingStoreCatchUp, AQuarterOfTheRingsEntriesEndsTheWaitSoProducerAndClientOverlap) {
  auto store = MakeStore(16, BatchMode::kItemSize);
  store->TrackCatchUp();
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 100, [&] { ++calls; }));
  for (uint64_t i = 1; i <= 3; ++i) Put(store.get(), i);
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(store->Ready(Rule::kLowLatency, 100));
  Put(store.get(), 4);
  EXPECT_EQ(calls, 1) << "4 of 16 slots: a client holding two batches of half a ring each would stall the producer";
  EXPECT_TRUE(store->Ready(Rule::kLowLatency, 100));
  Batch b;
  ASSERT_TRUE(store->TryGet(100, &b).ok());
  EXPECT_EQ(b.entries.size(), 4u);
}

TEST(RingStoreCatchUp, AQuarterOfTheRingsBytesEndsTheWaitInMemSize) {
  // 128 slots x 1 KiB: a 128 KiB ring; a batch of 1000 units is 1000 KiB.
  auto store = MakeStore(128, BatchMode::kMemSize, /*memunit=*/1024);
  store->TrackCatchUp();
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 1000, [&] { ++calls; }));
  const std::string ten_kib(10 * 1024, 'x');
  for (uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(store->Put(ten_kib, MetaAt(i)).ok());
  EXPECT_EQ(calls, 0) << "30 KiB of 128";
  ASSERT_TRUE(store->Put(ten_kib, MetaAt(4)).ok());
  EXPECT_EQ(calls, 1) << "40 KiB: past a quarter of the ring's bytes";
}

TEST(RingStoreCatchUp, RollbackReArmsWithTheLowLatencyRule) {
  auto store = MakeStore(64, BatchMode::kItemSize);
  store->TrackCatchUp();
  Put(store.get(), 1);
  store->ProducerCaughtUp();
  Batch b;
  ASSERT_TRUE(store->TryGet(10, &b).ok());
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 10, [&] { ++calls; }));
  store->Rollback();  // the entry is there again and the producer is caught up
  EXPECT_EQ(calls, 1);
}

TEST(RingStoreCatchUp, StopEndsTheWait) {
  auto store = MakeStore(64, BatchMode::kItemSize);
  store->TrackCatchUp();
  int calls = 0;
  ASSERT_TRUE(store->NotifyWhen(Rule::kLowLatency, 10, [&] { ++calls; }));
  store->Stop();
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace canal::store
