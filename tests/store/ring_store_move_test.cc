// RingStore::Put(std::string*): the entry's buffer moves into the ring and a
// consumed slot's buffer comes back, without copies, and without either side
// keeping a huge entry's buffer for small ones.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "canal/store/ring_store.h"
#include "ring_store_test_util.h"

namespace canal::store {
namespace {

using namespace std::chrono_literals;

using testing::MakeStore;

EntryMeta Meta(uint64_t offset) { return testing::MetaAt(offset); }

// Gets and acks one entry, checking its bytes.
void TakeOne(RingStore* store, const std::string& want) {
  Batch b;
  ASSERT_TRUE(store->Get(1, RingStore::kNoWait, &b).ok());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b.entries[0].bytes, want);
  ASSERT_TRUE(store->Ack(b).ok());
}

TEST(RingStoreMoveTest, MovedBufferIsTheOneTheConsumerSees) {
  auto store = MakeStore(4, BatchMode::kItemSize);
  std::string bytes(3000, 'x');
  const char* const data = bytes.data();
  ASSERT_TRUE(store->Put(&bytes, Meta(4)).ok());
  Batch b;
  ASSERT_TRUE(store->Get(1, RingStore::kNoWait, &b).ok());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b.entries[0].bytes.data(), data);  // no copy
  EXPECT_EQ(b.entries[0].bytes, std::string(3000, 'x'));
  EXPECT_EQ(b.bytes, 3000u);
  EXPECT_NE(bytes.data(), data);  // the caller got another buffer
}

TEST(RingStoreMoveTest, ConsumedSlotBuffersCirculateBackToTheProducer) {
  auto store = MakeStore(2, BatchMode::kItemSize);
  std::string bytes;
  const char* first = nullptr;
  for (int i = 0; i < 6; ++i) {
    bytes.assign(2000, static_cast<char>('a' + i));
    if (i == 0) first = bytes.data();
    ASSERT_TRUE(store->Put(&bytes, Meta(static_cast<uint64_t>(i))).ok());
    // The first entry was acked before the second put: its buffer went to the
    // pool, and the second put (its own slot empty) hands it back.
    if (i == 1) {
      EXPECT_EQ(bytes.data(), first);
    }
    TakeOne(store.get(), std::string(2000, static_cast<char>('a' + i)));
  }
  const RingStoreStats s = store->stats();
  EXPECT_EQ(s.put_sequence, 6u);
  EXPECT_EQ(s.put_bytes, 6u * 2000);
  EXPECT_EQ(s.held_bytes, 0u);
}

TEST(RingStoreMoveTest, AHugeBufferHoldingASmallEntryIsCopiedAndReleased) {
  auto store = MakeStore(4, BatchMode::kMemSize, 1024);
  std::string bytes(1 << 20, 'h');
  bytes.assign("small");  // keeps the 1 MiB capacity
  ASSERT_GE(bytes.capacity(), size_t{1} << 20);
  const char* const huge = bytes.data();
  ASSERT_TRUE(store->Put(&bytes, Meta(1)).ok());
  EXPECT_LE(bytes.capacity(), 1024u);  // the caller does not keep it either
  Batch b;
  ASSERT_TRUE(store->Get(1, RingStore::kNoWait, &b).ok());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NE(b.entries[0].bytes.data(), huge);
  EXPECT_EQ(b.entries[0].bytes, "small");
}

TEST(RingStoreMoveTest, AHugeEntryMovesInAndItsBufferIsReleasedByTheNextSmallOne) {
  auto store = MakeStore(1, BatchMode::kMemSize, 1024);
  std::string bytes(1 << 20, 'h');
  ASSERT_TRUE(store->Put(&bytes, Meta(1)).ok());  // larger than the bound: enters the empty ring
  TakeOne(store.get(), std::string(1 << 20, 'h'));
  // The slot's huge buffer would come back with this put: released instead.
  bytes.assign("tiny");
  ASSERT_TRUE(store->Put(&bytes, Meta(2)).ok());
  EXPECT_LE(bytes.capacity(), 1024u);
  TakeOne(store.get(), "tiny");
  // The ring's one slot holds the small buffer now, and it circulates.
  bytes.assign("next");
  ASSERT_TRUE(store->Put(&bytes, Meta(3)).ok());
  EXPECT_LE(bytes.capacity(), 1024u);
  TakeOne(store.get(), "next");
}

TEST(RingStoreMoveTest, MovePutKeepsTheByteBoundAndLeavesTheBufferOnError) {
  auto store = MakeStore(8, BatchMode::kMemSize, 100);  // 800 bytes
  std::string bytes(500, 'a');
  ASSERT_TRUE(store->Put(&bytes, Meta(1)).ok());
  bytes.assign(400, 'b');
  EXPECT_FALSE(store->TryPut(bytes, Meta(2)));  // 900 > 800
  store->Stop();
  EXPECT_EQ(store->Put(&bytes, Meta(2)).code(), Status::Code::kAborted);
  EXPECT_EQ(bytes, std::string(400, 'b'));  // unchanged on error
}

}  // namespace
}  // namespace canal::store
