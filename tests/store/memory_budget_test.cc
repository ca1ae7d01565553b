// MemoryBudget: every ring of a server shares one budget. Each ring's
// un-acked bytes stop at its share (a put waits), shares shrink as rings
// join and grow as they leave (a waiting put then goes on), and kept buffers
// are bounded by the share too.
#include "canal/store/memory_budget.h"

#include <atomic>
#include <string>
#include <thread>

#include "ring_store_test_util.h"

namespace canal::store {
namespace {

using testing::MakeStore;
using testing::MetaAt;

constexpr size_t kEntry = 1024;

// Entries TryPut takes before the ring refuses one.
int FillUntilRefused(RingStore& ring, int limit = 100000) {
  const std::string entry(kEntry, 'x');
  int n = 0;
  while (n < limit && ring.TryPut(entry, MetaAt(4 + n))) ++n;
  return n;
}

TEST(MemoryBudgetTest, EachRingHoldsItsShareAndNoMore) {
  auto a = MakeStore(8192, BatchMode::kItemSize);
  const uint64_t fixed = a->FixedBytes();
  auto budget = std::make_shared<MemoryBudget>(2 * fixed + 4 * 1024 * 1024);
  a->JoinBudget(budget);
  auto b = MakeStore(8192, BatchMode::kItemSize);
  b->JoinBudget(budget);
  EXPECT_EQ(budget->rings(), 2u);
  EXPECT_EQ(budget->fixed_bytes(), 2 * fixed);
  EXPECT_EQ(budget->share(), 2u * 1024 * 1024);
  // 3/4 of a 2 MiB share in 1 KiB entries: 1536 of them.
  EXPECT_EQ(FillUntilRefused(*a), 1536);
  EXPECT_EQ(FillUntilRefused(*b), 1536);
  EXPECT_LE(a->stats().held_bytes, budget->share() / 4 * 3);
}

TEST(MemoryBudgetTest, AJoiningRingShrinksTheSharesAndALeavingOneFreesAWaitingPut) {
  auto a = MakeStore(8192, BatchMode::kItemSize);
  const uint64_t fixed = a->FixedBytes();
  auto budget = std::make_shared<MemoryBudget>(3 * fixed + 3 * 1024 * 1024);
  a->JoinBudget(budget);
  const int alone = FillUntilRefused(*a);
  auto b = MakeStore(8192, BatchMode::kItemSize);
  b->JoinBudget(budget);
  auto c = MakeStore(8192, BatchMode::kItemSize);
  c->JoinBudget(budget);
  EXPECT_EQ(budget->share(), 1024u * 1024);
  // Already above its new share: a ring keeps what it holds and takes no more.
  const std::string entry(kEntry, 'y');
  EXPECT_FALSE(a->TryPut(entry, MetaAt(1)));
  EXPECT_EQ(FillUntilRefused(*b), 768);
  EXPECT_GT(alone, 768);

  // A put that waits in `b` goes on once the others leave.
  std::atomic<bool> put_done{false};
  std::thread producer([&] {
    EXPECT_TRUE(b->Put(entry, MetaAt(2)).ok());
    put_done = true;
  });
  for (int i = 0; i < 50 && !put_done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(put_done.load()) << "the put should wait while the ring is at its share";
  c.reset();
  a.reset();
  producer.join();
  EXPECT_TRUE(put_done.load());
  EXPECT_EQ(budget->rings(), 1u);
  EXPECT_EQ(budget->share(), 2 * fixed + 3u * 1024 * 1024);
}

TEST(MemoryBudgetTest, KeptBuffersStayWithinAQuarterOfTheShare) {
  auto ring = MakeStore(8192, BatchMode::kItemSize);
  auto budget = std::make_shared<MemoryBudget>(ring->FixedBytes() + 2 * 1024 * 1024);
  ring->JoinBudget(budget);
  const std::string big(16 * 1024, 'z');
  for (int round = 0; round < 20; ++round) {
    int put = 0;
    while (put < 64 && ring->TryPut(big, MetaAt(4 + put))) ++put;
    Batch batch;
    ASSERT_TRUE(ring->Get(8192, RingStore::kNoWait, &batch).ok());
    ASSERT_TRUE(ring->Ack(batch).ok());
  }
  const RingStoreStats s = ring->stats();
  EXPECT_EQ(s.retained_budget_bytes, budget->share() - budget->share() / 4 * 3);
  EXPECT_LE(s.retained_bytes, s.retained_budget_bytes);
}

TEST(MemoryBudgetTest, AnEntryLargerThanTheShareStillEntersAnEmptyRing) {
  auto ring = MakeStore(1024, BatchMode::kMemSize);
  auto budget = std::make_shared<MemoryBudget>(ring->FixedBytes() + MemoryBudget::kMinShareBytes);
  ring->JoinBudget(budget);
  const std::string huge(4 * 1024 * 1024, 'h');
  EXPECT_TRUE(ring->TryPut(huge, MetaAt(4)));
  EXPECT_FALSE(ring->TryPut("small", MetaAt(5)));
}

TEST(MemoryBudgetTest, AFarTooSmallBudgetStillGivesEachRingTheMinimumShare) {
  auto budget = std::make_shared<MemoryBudget>(1024);
  auto ring = MakeStore(1024, BatchMode::kItemSize);
  ring->JoinBudget(budget);
  EXPECT_EQ(budget->share(), MemoryBudget::kMinShareBytes);
  EXPECT_GT(FillUntilRefused(*ring), 100);
}

}  // namespace
}  // namespace canal::store
