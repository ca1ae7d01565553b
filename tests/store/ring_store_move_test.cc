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

// Put at an offset: the entry is the buffer's bytes after the room its producer kept in front
// (a snapshot entry's header is written there last); only those are handed out and counted.
TEST(RingStoreMoveTest, AnEntryPutAtAnOffsetIsTheBytesAfterIt) {
  auto store = MakeStore(4, BatchMode::kMemSize, 1000);  // 4000 bytes
  std::string bytes(1024, '\0');
  bytes += std::string(2000, 'r');
  bytes.replace(1000, 24, std::string(24, 'h'));  // the prefix, written last, ends where the rows start
  const char* const data = bytes.data();
  ASSERT_TRUE(store->Put(&bytes, 1000, Meta(1)).ok());
  EXPECT_NE(bytes.data(), data);  // moved, not copied
  // 3024 bytes of buffer, 2024 of entry: another 1900 fit in the 4000 only if the room is not counted.
  EXPECT_TRUE(store->TryPut(std::string(1900, 'n'), Meta(2)));
  Batch b;
  ASSERT_TRUE(store->Get(8, RingStore::kNoWait, &b).ok());
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b.entries[0].bytes.data(), data + 1000);
  EXPECT_EQ(b.entries[0].bytes, std::string(24, 'h') + std::string(2000, 'r'));
  EXPECT_EQ(b.bytes, 2024u + 1900u);
  ASSERT_TRUE(store->Ack(b).ok());
  const RingStoreStats st = store->stats();
  EXPECT_EQ(st.put_bytes, 2024u + 1900u);
  EXPECT_EQ(st.held_bytes, 0u);
}

TEST(RingStoreMoveTest, AnOffsetEntryInAHugeBufferIsCopiedFromItsOffset) {
  auto store = MakeStore(4, BatchMode::kMemSize, 1024);
  std::string bytes(1 << 20, 'h');
  bytes.assign("room|entry");  // keeps the 1 MiB capacity
  ASSERT_TRUE(store->Put(&bytes, 5, Meta(1)).ok());
  EXPECT_LE(bytes.capacity(), 1024u);
  // The slot's next entry, moved in without an offset, starts at its first byte again.
  std::string next = "second";
  ASSERT_TRUE(store->Put(&next, Meta(2)).ok());
  Batch b;
  ASSERT_TRUE(store->Get(8, RingStore::kNoWait, &b).ok());
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b.entries[0].bytes, "entry");
  EXPECT_EQ(b.entries[1].bytes, "second");
}

TEST(RingStoreMoveTest, AnOffsetPastTheBufferIsRefusedAndLeavesIt) {
  auto store = MakeStore(4, BatchMode::kItemSize);
  std::string bytes = "abc";
  const Status s = store->Put(&bytes, 4, Meta(1));
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("offset 4 of a buffer of 3 bytes"), std::string::npos) << s.ToString();
  EXPECT_EQ(bytes, "abc");
  EXPECT_EQ(store->stats().put_sequence, 0u);
}

}  // namespace
}  // namespace canal::store
