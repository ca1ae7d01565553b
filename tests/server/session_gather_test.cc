// The gathered MESSAGES reply: big entries are written to the
// socket straight from the ring's slots, so the batch must outlive the write.
// These tests hold a write in flight (1 MiB entries, a client that does not
// read yet) and make the ring want those slots back meanwhile: an auto-ack, a
// pipelined ack, a producer waiting for space that scribbles over every buffer
// the ring hands back, a client that goes away and a new one that takes the
// destination over. Every byte the client reads must be the entry's own.
// Real sockets, in-memory destinations, port 0.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "canal/server/frame_codec.h"
#include "session_fixture.h"
#include "support/wait.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using canal::testing::WaitFor;

constexpr char kDest[] = "example";
constexpr char kClient[] = "1001";
constexpr int kSlots = 16;
// 16 entries of 1 MiB: far more than the loopback socket buffers hold while
// the client does not read, so the server's write stays in flight.
constexpr size_t kEntryBytes = 1 << 20;

// Entry `n`'s bytes: a byte that names it, repeated (so a scribbled or freed
// buffer shows in any part of it).
char Fill(uint64_t n) { return static_cast<char>('a' + n % 26); }

bool IsEntry(std::string_view bytes, uint64_t n) {
  return bytes.size() == kEntryBytes &&
         std::all_of(bytes.begin(), bytes.end(), [c = Fill(n)](char b) { return b == c; });
}

class SessionGatherTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    dest_ = std::make_shared<MemoryDestination>(kDest, MemoryDestination::SmallRing(kSlots));
    registry_.Add(dest_);
    StartSessionServer(LoopbackOptions());
  }
  void TearDown() override {
    dest_->store()->Stop();  // a producer still waiting for space gives up
    if (producer_.joinable()) producer_.join();
    SessionFixture::TearDown();
  }

  std::unique_ptr<TestClient> Subscribed() {
    auto c = std::make_unique<TestClient>(server_->port());
    // A small receive window, so that a reply this client does not read
    // keeps the server's write waiting.
    int small = 64 << 10;
    ::setsockopt(c->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    EXPECT_TRUE(c->Login("", ""));
    std::optional<protocol::Ack> ack = c->Subscribe(kDest, kClient);
    EXPECT_TRUE(ack && ack->error_code() == 0) << (ack ? ack->error_message() : "no reply");
    return c;
  }

  // Puts entries [first, first + n) through the moving Put, and scribbles
  // over every buffer the ring hands back, in place, at once (as the sink
  // builds its next entry in it): if the ring hands back a buffer a reply is
  // still being written from, the client sees it.
  static void PutScribbling(store::RingStore* ring, uint64_t first, int n) {
    for (int i = 0; i < n; ++i) {
      const uint64_t offset = first + static_cast<uint64_t>(i);
      std::string bytes(kEntryBytes, Fill(offset));
      store::EntryMeta m;
      m.kind = store::EntryKind::kTransactionEnd;
      m.safe_resume_point = true;
      m.position = MemoryDestination::Position(offset);
      if (!ring->Put(&bytes, m).ok()) return;  // stopped
      std::fill(bytes.begin(), bytes.end(), 'Z');
    }
  }
  void StartProducer(uint64_t first, int n) {
    producer_ = std::thread([ring = dest_->store(), first, n] { PutScribbling(ring.get(), first, n); });
  }

  // Reads a MESSAGES reply of `n` entries, checks each is entry first + i,
  // and returns its batch id (0 when there was no such reply).
  static int64_t ExpectEntries(TestClient* c, uint64_t first, int n) {
    TestClient::GetReply r = c->ReadGetReply();
    EXPECT_TRUE(r.is_messages) << "no MESSAGES reply: " << r.ack.error_message();
    EXPECT_EQ(r.messages.messages_size(), n);
    if (!r.is_messages || r.messages.messages_size() != n) return 0;
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(IsEntry(r.messages.messages(i), first + static_cast<uint64_t>(i)))
          << "entry " << first + static_cast<uint64_t>(i) << " was overwritten or freed under the write";
    }
    return r.messages.batch_id();
  }

  store::RingStoreStats Stats() { return dest_->store()->stats(); }

  std::shared_ptr<MemoryDestination> dest_;
  std::thread producer_;
};

// An auto-ack GET acks its batch before the reply is written (Canal's
// order), so the ring may hand the slots to the producer, or free them (a
// 1 MiB entry is past the retained budget), while the reply is on its way:
// that reply must not point into the slots.
TEST_F(SessionGatherTest, AnAutoAckReplyDoesNotPointIntoTheSlotsItsAckFreed) {
  PutScribbling(dest_->store().get(), 0, kSlots);
  auto c = Subscribed();
  c->SendGet(kDest, kClient, kSlots, std::nullopt, std::nullopt, /*auto_ack=*/true);
  ASSERT_TRUE(WaitFor([&] { return Stats().ack_sequence == kSlots; }, 10s)) << "the auto-ack was not applied";
  // The ring is empty for the producer now: it takes back (and scribbles
  // over) every slot's buffer while the reply is still unread.
  PutScribbling(dest_->store().get(), kSlots, kSlots);
  ExpectEntries(c.get(), 0, kSlots);
  c->SendGet(kDest, kClient, kSlots, std::nullopt, std::nullopt, /*auto_ack=*/true);
  ExpectEntries(c.get(), kSlots, kSlots);
}

// An ack (and a rollback) sent right behind the GET, while its reply is
// still being written, is applied only once the write has completed: until
// then the producer waiting for space gets no slot of the batch.
TEST_F(SessionGatherTest, AnAckPipelinedBehindTheReplyWaitsForItsWrite) {
  PutScribbling(dest_->store().get(), 0, kSlots);
  auto c = Subscribed();
  c->SendGet(kDest, kClient, kSlots);
  c->Ack(kDest, kClient, 1);  // the first batch's id
  c->SendGet(kDest, kClient, kSlots, /*timeout=*/10'000, /*unit=*/2);
  StartProducer(kSlots, kSlots);  // waits for space: the ack of batch 1
  ASSERT_TRUE(WaitFor([&] { return Stats().get_sequence == kSlots; }, 10s)) << "the GET was not served";
  // The write cannot finish while the client does not read: give an ack
  // applied too early time to show.
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(Stats().ack_sequence, 0u) << "the ack was applied while its batch was being written";
  EXPECT_EQ(Stats().put_sequence, static_cast<uint64_t>(kSlots));
  ExpectEntries(c.get(), 0, kSlots);
  ExpectEntries(c.get(), kSlots, kSlots);  // the second GET: the producer's new entries
}

// A client that goes away in the middle of a reply: the write fails, the
// batch goes back to the ring, and the next client (taking the destination
// over) gets the same entries whole, then acks them while the producer waits
// to reuse their slots.
TEST_F(SessionGatherTest, ATakeoverAfterAnInterruptedWriteGetsTheBatchWhole) {
  PutScribbling(dest_->store().get(), 0, kSlots);
  {
    auto c = Subscribed();
    c->SendGet(kDest, kClient, kSlots);
    ASSERT_TRUE(WaitFor([&] { return Stats().get_sequence == kSlots; }, 10s));
    c->Abort();  // mid-reply
  }
  ASSERT_TRUE(WaitFor([&] { return Stats().get_sequence == 0; }, 10s)) << "the batch was not rolled back";
  EXPECT_EQ(Stats().ack_sequence, 0u);
  std::unique_ptr<TestClient> d;
  // (The old session lets go of the destination once its write has failed.)
  ASSERT_TRUE(WaitFor(
      [&] {
        d = std::make_unique<TestClient>(server_->port());
        if (!d->Login("", "")) return false;
        std::optional<protocol::Ack> ack = d->Subscribe(kDest, kClient);
        return ack && ack->error_code() == 0;
      },
      10s));
  StartProducer(kSlots, kSlots);
  d->SendGet(kDest, kClient, kSlots);
  const int64_t batch_id = ExpectEntries(d.get(), 0, kSlots);
  d->Ack(kDest, kClient, batch_id);
  d->SendGet(kDest, kClient, kSlots, /*timeout=*/10'000, /*unit=*/2);
  ExpectEntries(d.get(), kSlots, kSlots);
}

// The gathered frame is byte for byte the copied one, whatever mix of small
// (copied into the head) and big (referenced) entries, and with none.
TEST(FrameCodecGatherTest, GatheredFrameEqualsTheCopiedOne) {
  std::unique_ptr<store::RingStore> ring;
  ASSERT_TRUE(store::RingStore::Create(testing::MemoryDestination::SmallRing(), &ring).ok());
  store::EntryMeta m;
  m.position = testing::MemoryDestination::Position(4);
  const std::vector<size_t> sizes = {0, 1, 127, 128, 300, 1023, 1024, 5000, 16, 70000, 2, 1024};
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE(ring->Put(std::string(sizes[i], static_cast<char>('a' + i)), m).ok());
  }
  for (size_t take : {size_t{0}, size_t{1}, size_t{7}, sizes.size()}) {
    store::Batch batch;
    if (take > 0) {
      ring->Rollback();
      ASSERT_TRUE(ring->TryGet(take, &batch).ok());
      ASSERT_EQ(batch.entries.size(), take);
    }
    for (int64_t id : {int64_t{-1}, int64_t{1}, int64_t{123456789012}}) {
      std::string copied;
      ASSERT_TRUE(EncodeMessagesFrame(id, batch, &copied).ok());
      for (size_t min_gather : {size_t{0}, size_t{1}, size_t{128}, size_t{1024}, size_t{1} << 20}) {
        std::string head = "stale bytes from the last reply";
        std::vector<std::string_view> pieces = {"stale"};
        ASSERT_TRUE(EncodeMessagesFrameGathered(id, batch, min_gather, &head, &pieces).ok());
        std::string joined;
        size_t referenced = 0;
        for (std::string_view p : pieces) {
          EXPECT_FALSE(p.empty()) << "an empty piece is a wasted iovec";
          joined.append(p);
          const bool in_head = p.data() >= head.data() && p.data() + p.size() <= head.data() + head.size();
          if (!in_head) referenced += p.size();
        }
        EXPECT_EQ(joined, copied) << "take " << take << ", id " << id << ", min_gather " << min_gather;
        EXPECT_EQ(head.size() + referenced, copied.size()) << "the head holds exactly what is not referenced";
        for (const store::EntryView& e : batch.entries) {
          if (e.bytes.empty() || e.bytes.size() < min_gather) continue;
          EXPECT_TRUE(std::any_of(pieces.begin(), pieces.end(),
                                  [&](std::string_view p) { return p.data() == e.bytes.data(); }))
              << "an entry of " << e.bytes.size() << " bytes was copied, not referenced";
        }
      }
    }
  }
}

}  // namespace
}  // namespace canal::server
