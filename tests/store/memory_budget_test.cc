// MemoryBudget: every ring of a server shares one budget. It sets aside a
// reserve for the server and each destination's fixed cost, and splits the
// rest equally: each ring's un-acked bytes stop at half its share (a put
// waits), it uses only the slots an eighth of its share pays for (changing
// their number only while it is empty), keeps acked buffers within an eighth
// and hands out batches of at most an eighth. Shares shrink as rings join and
// grow as they leave (a waiting put then goes on).
#include "canal/store/memory_budget.h"

#include <atomic>
#include <set>
#include <string>
#include <thread>

#include "ring_store_test_util.h"

namespace canal::store {
namespace {

using testing::MakeStore;
using testing::MetaAt;

constexpr uint64_t kMiB = 1024 * 1024;
// Budgets here set aside an explicit reserve (the server's is kReserveBytes,
// at most a quarter of the total).
constexpr uint64_t kReserve = 4 * kMiB;

std::shared_ptr<MemoryBudget> Budget(uint64_t total) { return std::make_shared<MemoryBudget>(total, kReserve); }

std::string EntryText(int n, size_t size) {
  std::string s = std::to_string(n) + ":";
  s.resize(size, 'x');
  return s;
}

// Entries TryPut takes before the ring refuses one, numbered from `first`.
int FillUntilRefused(RingStore& ring, size_t size, int first = 0, int limit = 100000) {
  int n = 0;
  while (n < limit && ring.TryPut(EntryText(first + n, size), MetaAt(4 + first + n))) ++n;
  return n;
}

// Gets and acks everything waiting, checking the entries are numbered from
// `first` on; returns how many there were.
int DrainChecking(RingStore& ring, int first) {
  int n = 0;
  for (;;) {
    Batch batch;
    EXPECT_TRUE(ring.Get(100000, RingStore::kNoWait, &batch).ok());
    if (batch.empty()) return n;
    for (const EntryView& e : batch.entries) {
      const std::string want = std::to_string(first + n) + ":";
      EXPECT_EQ(e.bytes.substr(0, want.size()), want) << "entry " << first + n;
      ++n;
    }
    EXPECT_TRUE(ring.Ack(batch).ok());
  }
}

TEST(MemoryBudgetTest, TheReserveAndEachDestinationsFixedCostComeOffTheTopAndTheRestIsShared) {
  auto a = MakeStore(8192, BatchMode::kItemSize);
  auto b = MakeStore(8192, BatchMode::kItemSize);
  const uint64_t fixed = a->FixedBytes();
  const uint64_t overhead = 3 * kMiB;
  auto budget = Budget(kReserve + 2 * (fixed + overhead) + 16 * kMiB);
  EXPECT_EQ(budget->reserve(), kReserve);
  a->JoinBudget(budget, overhead);
  b->JoinBudget(budget, overhead);
  EXPECT_EQ(budget->rings(), 2u);
  EXPECT_EQ(budget->fixed_bytes(), 2 * (fixed + overhead));
  EXPECT_EQ(budget->share(), 8 * kMiB);
  EXPECT_EQ(budget->piece_bytes().load(), kMiB);
  // The server's reserve, at most a quarter of the budget.
  EXPECT_EQ(MemoryBudget(1024 * kMiB).reserve(), MemoryBudget::kReserveBytes);
  EXPECT_EQ(MemoryBudget(64 * kMiB).reserve(), 16 * kMiB);
}

TEST(MemoryBudgetTest, EachRingHoldsHalfItsShareAndNoMore) {
  auto a = MakeStore(8192, BatchMode::kItemSize);
  const uint64_t fixed = a->FixedBytes();
  auto budget = Budget(kReserve + 2 * fixed + 16 * kMiB);
  a->JoinBudget(budget);
  auto b = MakeStore(8192, BatchMode::kItemSize);
  b->JoinBudget(budget);
  EXPECT_EQ(budget->share(), 8 * kMiB);
  // Half of an 8 MiB share in 4 KiB entries: 1024 of them (the 1 MiB of
  // slots pays for 2048 slots, so the count does not bind).
  EXPECT_EQ(FillUntilRefused(*a, 4096), 1024);
  EXPECT_EQ(FillUntilRefused(*b, 4096), 1024);
  EXPECT_EQ(a->stats().slots, 2048u);
  EXPECT_LE(a->stats().held_bytes, budget->share() / 2);
  EXPECT_EQ(a->stats().held_bound, budget->share() / 2);
}

TEST(MemoryBudgetTest, ASmallShareUsesFewerSlotsAndTheRingStillCyclesThroughThem) {
  auto ring = MakeStore(16384, BatchMode::kItemSize);
  // An eighth of the share pays for 1024 slots and a little more.
  const uint64_t share = 8 * (1024 * RingStore::SlotCost() + 1000);
  auto budget = Budget(kReserve + ring->FixedBytes() + share);
  ring->JoinBudget(budget);
  ASSERT_EQ(budget->share(), share);
  // Small entries: the count binds, at the slots in use.
  EXPECT_EQ(FillUntilRefused(*ring, 100), 1024);
  EXPECT_EQ(ring->stats().slots, 1024u);
  EXPECT_LT(ring->stats().held_bytes, share / 2);
  int next = 1024;
  EXPECT_EQ(DrainChecking(*ring, 0), 1024);
  // Laps around the 1024 slots, in uneven steps: every entry comes back whole and in order.
  for (int lap = 0; lap < 6; ++lap) {
    const int put = FillUntilRefused(*ring, 100 + lap * 50, next, 700);
    EXPECT_EQ(put, 700);
    EXPECT_EQ(DrainChecking(*ring, next), put);
    next += put;
  }
  const RingStoreStats s = ring->stats();
  EXPECT_EQ(s.put_sequence, static_cast<uint64_t>(next));
  EXPECT_EQ(s.ack_sequence, static_cast<uint64_t>(next));
}

TEST(MemoryBudgetTest, AShrinkingShareWaitsForTheRingToDrainThenUsesFewerSlots) {
  auto a = MakeStore(4096, BatchMode::kItemSize);
  const uint64_t fixed = a->FixedBytes();
  // Alone, a's share pays for 1024 slots; with b, for 512.
  const uint64_t share = 2 * kMiB;
  auto budget = Budget(kReserve + 2 * fixed + 2 * share);
  a->JoinBudget(budget);
  EXPECT_EQ(FillUntilRefused(*a, 100, 0, 600), 600);
  EXPECT_EQ(a->stats().slots, 1024u);

  auto b = MakeStore(4096, BatchMode::kItemSize);
  b->JoinBudget(budget);
  ASSERT_EQ(budget->share(), share);
  // Far below every bound, but the ring must drain before it uses fewer slots.
  EXPECT_FALSE(a->TryPut(EntryText(600, 100), MetaAt(604)));
  EXPECT_EQ(a->stats().slots, 1024u);

  // A blocked Put counts as a full ring: a consumer waiting for a full batch
  // gets what is there, and its ack lets the put go on, into the new slots.
  std::atomic<bool> put_done{false};
  std::thread producer([&] {
    EXPECT_TRUE(a->Put(EntryText(600, 100), MetaAt(604)).ok());
    put_done = true;
  });
  Batch batch;
  ASSERT_TRUE(a->Get(100000, std::chrono::nanoseconds::zero(), &batch).ok());
  EXPECT_EQ(batch.size(), 600u);
  EXPECT_FALSE(put_done.load());
  ASSERT_TRUE(a->Ack(batch).ok());
  producer.join();
  EXPECT_TRUE(put_done.load());
  EXPECT_EQ(a->stats().slots, 512u);
  EXPECT_EQ(FillUntilRefused(*a, 100, 601), 511);  // 512 slots in use: the count binds
  EXPECT_EQ(DrainChecking(*a, 600), 512);

  // The share grows back when b leaves; the ring takes the slots once it is empty.
  b.reset();
  EXPECT_EQ(FillUntilRefused(*a, 100, 1112), 1024);
  EXPECT_EQ(a->stats().slots, 1024u);
  EXPECT_EQ(DrainChecking(*a, 1112), 1024);
}

TEST(MemoryBudgetTest, SharesThatChangeWhileEntriesFlowNeitherLoseNorReorderThem) {
  // The producer and the consumer run on their own threads while rings come
  // and go: the ring keeps changing the number of slots it uses (each time
  // it drains) and its bounds, and every entry still comes once, in order.
  for (const BatchMode mode : {BatchMode::kMemSize, BatchMode::kItemSize}) {
    auto ring = MakeStore(4096, mode, 256);
    const uint64_t fixed = ring->FixedBytes();
    // Alone its share pays for 1024 slots; with two more rings, for 256.
    auto budget = Budget(kReserve + 3 * fixed + 3 * kMiB);
    ring->JoinBudget(budget);
    constexpr int kEntries = 200000;
    std::thread producer([&] {
      for (int i = 0; i < kEntries; ++i) {
        if (!ring->Put(EntryText(i, 64 + i % 300), MetaAt(4 + i)).ok()) return;
      }
    });
    std::atomic<int> got{0};
    std::atomic<bool> ordered{true};
    std::thread consumer([&] {
      Batch batch;
      while (got < kEntries) {
        if (!ring->Get(500, std::chrono::milliseconds(1), &batch).ok()) return;
        if (batch.empty()) continue;
        for (const EntryView& e : batch.entries) {
          const std::string want = std::to_string(got.load()) + ":";
          if (e.bytes.substr(0, want.size()) != want || e.bytes.size() != static_cast<size_t>(64 + got % 300)) {
            ordered = false;
          }
          ++got;
        }
        if (!ring->Ack(batch).ok()) ordered = false;
      }
    });
    std::set<uint64_t> slots_seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (got < kEntries && std::chrono::steady_clock::now() < deadline) {
      auto b = MakeStore(4096, mode, 256);
      auto c = MakeStore(4096, mode, 256);
      b->JoinBudget(budget);
      c->JoinBudget(budget);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      slots_seen.insert(ring->stats().slots);
      b.reset();
      c.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      slots_seen.insert(ring->stats().slots);
    }
    if (got < kEntries) ring->Stop();  // (a hang: fail rather than wait forever)
    producer.join();
    consumer.join();
    EXPECT_EQ(got.load(), kEntries) << BatchModeName(mode);
    EXPECT_TRUE(ordered.load()) << BatchModeName(mode);
    EXPECT_TRUE(slots_seen.count(256) && slots_seen.count(1024)) << BatchModeName(mode) << ": the ring kept one size";
    EXPECT_EQ(ring->stats().ack_sequence, static_cast<uint64_t>(kEntries));
  }
}

TEST(MemoryBudgetTest, AJoiningRingShrinksTheSharesAndALeavingOneFreesAWaitingPut) {
  constexpr size_t kEntry = 8 * 1024;
  auto a = MakeStore(8192, BatchMode::kItemSize);
  const uint64_t fixed = a->FixedBytes();
  auto budget = Budget(kReserve + 3 * fixed + 3 * 2 * kMiB);
  a->JoinBudget(budget);
  const int alone = FillUntilRefused(*a, kEntry);
  auto b = MakeStore(8192, BatchMode::kItemSize);
  b->JoinBudget(budget);
  auto c = MakeStore(8192, BatchMode::kItemSize);
  c->JoinBudget(budget);
  EXPECT_EQ(budget->share(), 2 * kMiB);
  // Already above its new share: a ring keeps what it holds and takes no more.
  const std::string entry(kEntry, 'y');
  EXPECT_FALSE(a->TryPut(entry, MetaAt(1)));
  EXPECT_EQ(FillUntilRefused(*b, kEntry), 128);  // 1 MiB of 8 KiB entries
  EXPECT_GT(alone, 128);

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
  EXPECT_EQ(budget->share(), 2 * fixed + 3 * 2 * kMiB);
}

TEST(MemoryBudgetTest, KeptBuffersStayWithinAnEighthOfTheShare) {
  auto ring = MakeStore(8192, BatchMode::kItemSize);
  auto budget = Budget(kReserve + ring->FixedBytes() + 4 * kMiB);
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
  EXPECT_EQ(s.retained_budget_bytes, budget->share() / 8);
  EXPECT_LE(s.retained_bytes, s.retained_budget_bytes);
}

TEST(MemoryBudgetTest, ABatchHoldsAtMostAnEighthOfTheShareInEitherMode) {
  for (const BatchMode mode : {BatchMode::kMemSize, BatchMode::kItemSize}) {
    auto ring = MakeStore(8192, mode, /*memunit=*/4096);
    auto budget = Budget(kReserve + ring->FixedBytes() + 8 * kMiB);
    ring->JoinBudget(budget);
    const uint64_t batch_bytes = budget->share() / 8;  // 1 MiB
    EXPECT_EQ(FillUntilRefused(*ring, 1024, 0, 2000), 2000);  // (2048 slots in use)
    // A full batch is ready at the eighth, however big a batch the client asked for.
    EXPECT_TRUE(ring->Ready(RingStore::WaitRule::kBatch, 8192));
    Batch batch;
    ASSERT_TRUE(ring->Get(8192, std::chrono::milliseconds(1), &batch).ok());
    EXPECT_LE(batch.bytes, batch_bytes) << BatchModeName(mode);
    EXPECT_GT(batch.bytes, batch_bytes - 1024) << BatchModeName(mode);
    ASSERT_TRUE(ring->Ack(batch).ok());
    // One entry larger than that still comes, alone.
    ring.reset();
    ring = MakeStore(8192, mode, 4096);
    ring->JoinBudget(budget);
    ASSERT_TRUE(ring->TryPut(std::string(batch_bytes + 1, 'b'), MetaAt(4)));
    ASSERT_TRUE(ring->TryPut("small", MetaAt(5)));
    ASSERT_TRUE(ring->Get(8192, RingStore::kNoWait, &batch).ok());
    EXPECT_EQ(batch.size(), 1u) << BatchModeName(mode);
  }
}

TEST(MemoryBudgetTest, AnEntryLargerThanTheShareStillEntersAnEmptyRing) {
  auto ring = MakeStore(1024, BatchMode::kMemSize);
  auto budget = Budget(kReserve + ring->FixedBytes() + MemoryBudget::kMinShareBytes);
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
  EXPECT_EQ(FillUntilRefused(*ring, 1024), static_cast<int>(RingStore::kMinBudgetSlots));
  EXPECT_EQ(ring->stats().slots, RingStore::kMinBudgetSlots);
}

}  // namespace
}  // namespace canal::store
