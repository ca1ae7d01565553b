// RingStore's retained budget: acked slots keep their buffers for the
// producer only up to buffer_size * memunit bytes in all, so a long run of
// big entries does not leave every slot holding one, while a ring of small
// entries still recycles every buffer.
#include <gtest/gtest.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <memory>
#include <set>
#include <string>

#include "canal/store/ring_store.h"
#include "ring_store_test_util.h"

namespace canal::store {
namespace {

std::unique_ptr<RingStore> MakeStore(uint32_t size, uint32_t memunit, BatchMode mode) {
  return testing::MakeStore(size, mode, memunit);
}

EntryMeta Meta(uint64_t offset) { return testing::MetaAt(offset); }

// Takes everything waiting and acks it; false when nothing was waiting.
bool DrainAndAck(RingStore* store) {
  Batch b;
  EXPECT_TRUE(store->Get(1 << 20, RingStore::kNoWait, &b).ok());
  if (b.empty()) return false;
  EXPECT_TRUE(store->Ack(b).ok());
  return true;
}

TEST(RingStoreRetainedTest, BudgetIsBufferSizeTimesMemunitInBothModes) {
  EXPECT_EQ(MakeStore(64, 512, BatchMode::kMemSize)->stats().retained_budget_bytes, 64u * 512);
  EXPECT_EQ(MakeStore(64, 512, BatchMode::kItemSize)->stats().retained_budget_bytes, 64u * 512);
  EXPECT_EQ(MakeStore(64, 512, BatchMode::kItemSize)->stats().retained_bytes, 0u);
}

// The moving put, as the sink uses it: the buffer handed back builds the next
// entry. Entries of 8000 bytes in a 64-slot ring with a 64 KiB budget: without
// the budget the slots would keep 64 x 8000 bytes.
TEST(RingStoreRetainedTest, MovingPutsNeverLeaveMoreThanTheBudgetInAckedSlots) {
  auto store = MakeStore(64, 1024, BatchMode::kItemSize);
  const uint64_t budget = 64u * 1024;
  std::string bytes;
  uint64_t offset = 0;
  for (int round = 0; round < 100; ++round) {
    // Batches of changing length, so acks land all over the ring.
    const int n = 1 + round % 37;
    for (int i = 0; i < n; ++i) {
      bytes.assign(8000, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(store->Put(&bytes, Meta(++offset)).ok());
    }
    ASSERT_TRUE(DrainAndAck(store.get()));
    const RingStoreStats s = store->stats();
    ASSERT_LE(s.retained_bytes, budget) << "round " << round;
  }
  // Buffers are kept while they fit: the budget is used, not just respected.
  EXPECT_GE(store->stats().retained_bytes, 8000u);
}

TEST(RingStoreRetainedTest, CopyingPutsNeverLeaveMoreThanTheBudgetInAckedSlots) {
  auto store = MakeStore(32, 256, BatchMode::kItemSize);
  const uint64_t budget = 32u * 256;
  uint64_t offset = 0;
  for (int round = 0; round < 60; ++round) {
    for (int i = 0; i < 1 + round % 31; ++i) {
      ASSERT_TRUE(store->Put(std::string(3000 + 100 * (i % 5), 'c'), Meta(++offset)).ok());
    }
    ASSERT_TRUE(DrainAndAck(store.get()));
    ASSERT_LE(store->stats().retained_bytes, budget) << "round " << round;
  }
}

// Eight 1500-byte entries acked together against a 2 KiB budget: the first
// acked slot keeps its buffer, the other seven release theirs, and the
// producer gets back exactly one buffer when it comes round again.
TEST(RingStoreRetainedTest, BuffersPastTheBudgetAreReleasedAtTheAck) {
  auto store = MakeStore(8, 256, BatchMode::kItemSize);
  std::string bytes;
  for (int i = 0; i < 8; ++i) {
    bytes.assign(1500, 'x');
    ASSERT_TRUE(store->Put(&bytes, Meta(static_cast<uint64_t>(i + 1))).ok());
  }
  ASSERT_TRUE(DrainAndAck(store.get()));
  EXPECT_GE(store->stats().retained_bytes, 1500u);
  EXPECT_LE(store->stats().retained_bytes, 2048u);

  const size_t inline_capacity = std::string().capacity();
  int handed_back = 0;
  for (int i = 0; i < 8; ++i) {
    bytes.assign(1500, 'y');
    ASSERT_TRUE(store->Put(&bytes, Meta(static_cast<uint64_t>(i + 9))).ok());
    if (bytes.capacity() > inline_capacity) ++handed_back;
  }
  EXPECT_EQ(handed_back, 1);
  EXPECT_EQ(store->stats().retained_bytes, 0u);  // the producer took the one kept buffer
  ASSERT_TRUE(DrainAndAck(store.get()));
  EXPECT_LE(store->stats().retained_bytes, 2048u);
}

// Small entries: the whole ring's buffers fit the budget, so after the first
// lap every put hands back a buffer big enough for the next entry, and the
// same few buffers circulate (no allocation per entry).
TEST(RingStoreRetainedTest, SmallEntriesRecycleEveryBufferInTheSteadyState) {
  auto store = MakeStore(64, 1024, BatchMode::kMemSize);
  std::string bytes;
  std::set<const char*> buffers;
  uint64_t offset = 0;
  for (int i = 0; i < 64 * 20; ++i) {
    bytes.resize(500);
    bytes[0] = static_cast<char>(i);
    buffers.insert(bytes.data());
    ASSERT_TRUE(store->Put(&bytes, Meta(++offset)).ok());
    if (i >= 64) {
      ASSERT_GE(bytes.capacity(), 500u) << "put " << i << " got no buffer back";
    }
    if (i % 7 == 6) {
      ASSERT_TRUE(DrainAndAck(store.get()));
    }
  }
  // 64 slots plus the one the producer holds; new buffers only in the first lap.
  EXPECT_LE(buffers.size(), 65u);
  EXPECT_LE(store->stats().retained_bytes, 64u * 1024);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
// The heap itself, not only the ring's count: 4 laps of 16 KiB entries through
// 1024 slots would leave 16 MiB in acked slots; the budget is 256 KiB.
TEST(RingStoreRetainedTest, HeapAfterManyLapsOfBigEntriesStaysNearTheBudget) {
  const size_t before = mallinfo2().uordblks;
  {
    auto store = MakeStore(1024, 256, BatchMode::kMemSize);
    std::string bytes;
    uint64_t offset = 0;
    for (int i = 0; i < 4 * 1024; ++i) {
      bytes.assign(16 << 10, 'b');
      ASSERT_TRUE(store->Put(&bytes, Meta(++offset)).ok());
      if (i % 8 == 7) {
        ASSERT_TRUE(DrainAndAck(store.get()));
      }
    }
    const size_t after = mallinfo2().uordblks;
    // The budget, the producer's buffer and the slots' array, with room to spare.
    const size_t slots_array = 1024 * 128;
    EXPECT_LT(after - std::min(after, before), 256u * 1024 + slots_array + (1u << 20))
        << "heap grew by " << (after - before) << " bytes";
  }
}
#endif

}  // namespace
}  // namespace canal::store
