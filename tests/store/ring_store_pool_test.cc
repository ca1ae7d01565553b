// RingStore's buffer pool: buffers released by acks come back to the producer
// on the ring's first lap (when the slots ahead of it have none to hand back),
// within the retained budget, and a full pool leaves them in their slots.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "canal/store/ring_store.h"
#include "ring_store_test_util.h"

namespace canal::store {
namespace {

EntryMeta Meta(uint64_t offset) { return testing::MetaAt(offset); }

// Takes everything waiting and acks it.
void DrainAndAck(RingStore* store) {
  Batch b;
  ASSERT_TRUE(store->Get(1 << 20, RingStore::kNoWait, &b).ok());
  ASSERT_FALSE(b.empty());
  ASSERT_TRUE(store->Ack(b).ok());
}

// A big ring whose first lap is long: a producer and consumer in lockstep
// (batches of 8) circulate a handful of buffers instead of filling a fresh
// one per slot.
TEST(RingStorePoolTest, FirstLapReusesAckedBuffers) {
  auto store = testing::MakeStore(4096, BatchMode::kMemSize, 1024);
  std::string bytes;
  std::set<const char*> seen;
  uint64_t offset = 0;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 8; ++i) {
      bytes.assign(3000, static_cast<char>('a' + i));
      seen.insert(bytes.data());
      ASSERT_TRUE(store->Put(&bytes, Meta(++offset)).ok());
    }
    DrainAndAck(store.get());
  }
  // 1600 entries on 1600 distinct slots; the producer saw a batch's worth of
  // buffers plus the one it holds (a fresh buffer per entry would be 1600).
  EXPECT_LE(seen.size(), 10u);
  EXPECT_LE(store->stats().retained_bytes, store->stats().retained_budget_bytes);
}

// The pool's buffers count against the retained budget: entries bigger than
// the budget allows to keep are freed at the ack, not pooled.
TEST(RingStorePoolTest, PooledBytesStayWithinTheRetainedBudget) {
  auto store = testing::MakeStore(64, BatchMode::kItemSize, 256);  // 16 KiB budget
  const uint64_t budget = store->stats().retained_budget_bytes;
  std::string bytes;
  uint64_t offset = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 1 + round % 13; ++i) {
      bytes.assign(5000, 'x');
      ASSERT_TRUE(store->Put(&bytes, Meta(++offset)).ok());
    }
    DrainAndAck(store.get());
    ASSERT_LE(store->stats().retained_bytes, budget) << "round " << round;
  }
}

// More acked buffers than the pool holds (1024): the rest stay in their slots
// and come back when the producer reaches them; every entry still reads back
// whole, and the producer never builds in a buffer a waiting entry uses.
TEST(RingStorePoolTest, AFullPoolLeavesBuffersInTheirSlots) {
  auto store = testing::MakeStore(4096, BatchMode::kItemSize, 1024);
  std::string bytes;
  uint64_t offset = 0;
  for (int lap = 0; lap < 3; ++lap) {
    for (int i = 0; i < 3000; ++i) {
      bytes.assign(300, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(store->Put(&bytes, Meta(++offset)).ok());
    }
    Batch b;
    ASSERT_TRUE(store->Get(1 << 20, RingStore::kNoWait, &b).ok());
    ASSERT_EQ(b.size(), 3000u);
    for (size_t i = 0; i < b.size(); ++i) {
      ASSERT_EQ(b.entries[i].bytes, std::string(300, static_cast<char>('a' + i % 26))) << "lap " << lap;
    }
    ASSERT_TRUE(store->Ack(b).ok());
    EXPECT_LE(store->stats().retained_bytes, store->stats().retained_budget_bytes);
  }
  EXPECT_EQ(store->stats().held_bytes, 0u);
}

}  // namespace
}  // namespace canal::store
