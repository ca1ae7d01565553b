// The cursor flush (MetaManager::Flush: an fsync or a ZooKeeper write) runs
// on the session server's blocking pool, awaited, not on an I/O thread: with
// ONE I/O thread, a client of another destination is served while one
// destination's flush hangs on a slow disk; and the slow client's reply still
// comes only after its acks are durable. The write begins at the ack (it
// overlaps the client's next GET), and acks made while it runs are written
// again before the next reply.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "canal/proto/password_scramble.h"
#include "session_fixture.h"
#include "support/wait.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;

class BlockingFlushTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    slow_ = std::make_shared<MemoryDestination>("slow");
    fast_ = std::make_shared<MemoryDestination>("fast");
    registry_.Add(slow_);
    registry_.Add(fast_);
    SessionServerOptions o = LoopbackOptions();
    o.io_threads = 1;  // one I/O thread: a flush on it would stall everyone
    StartSessionServer(o);
  }

  std::unique_ptr<TestClient> Subscribed(const std::string& destination) {
    auto c = std::make_unique<TestClient>(server_->port(), 30s);
    EXPECT_TRUE(c->Login("any", ""));
    std::optional<protocol::Ack> ack = c->Subscribe(destination, "1001");
    EXPECT_TRUE(ack && ack->error_code() == 0) << (ack ? ack->error_message() : "no reply");
    return c;
  }

  // The next GET is answered with 507: the acks could not be written.
  static void ExpectNotDurableReply(TestClient* c) {
    c->SendGet("slow", "1001", 10);
    TestClient::GetReply after = c->ReadGetReply();
    ASSERT_TRUE(after.received);
    EXPECT_FALSE(after.is_messages);
    EXPECT_EQ(after.ack.error_code(), 507);
    EXPECT_NE(after.ack.error_message().find("could not make the acks of"), std::string::npos)
        << after.ack.error_message();
  }

  std::shared_ptr<MemoryDestination> slow_, fast_;
};

TEST_F(BlockingFlushTest, ASlowFlushDoesNotStallOtherDestinationsClients) {
  ASSERT_TRUE(slow_->PutRange(100, 3).ok());
  ASSERT_TRUE(fast_->PutRange(200, 3).ok());
  auto slow_client = Subscribed("slow");
  TestClient::GetReply r = slow_client->Get("slow", "1001", 10);
  ASSERT_TRUE(r.is_messages);
  slow_->counting_meta()->set_flush_delay(3s);
  // The ack, then a get: its answer waits for the (slow) flush of the ack.
  slow_client->Ack("slow", "1001", r.messages.batch_id());
  slow_client->SendGet("slow", "1001", 10);
  ASSERT_TRUE(::canal::testing::WaitFor([&] { return slow_->counting_meta()->in_flush(); }, 10s));

  // Meanwhile, on the same (only) I/O thread: a whole conversation.
  auto fast_client = Subscribed("fast");
  TestClient::GetReply f = fast_client->Get("fast", "1001", 10);
  ASSERT_TRUE(f.is_messages);
  EXPECT_EQ(f.messages.messages_size(), 3);
  EXPECT_TRUE(slow_->counting_meta()->in_flush()) << "the other client was served only after the slow flush";

  // The slow client's answer comes once its ack is durable.
  TestClient::GetReply after = slow_client->ReadGetReply();
  EXPECT_TRUE(after.received);
  EXPECT_FALSE(slow_->counting_meta()->in_flush());
  EXPECT_TRUE(slow_->counting_meta()->flushed_cursor(1001).has_value());
}

TEST_F(BlockingFlushTest, AFailedFlushOffTheIoThreadStillFailsTheRequest) {
  ASSERT_TRUE(slow_->PutRange(100, 3).ok());
  auto c = Subscribed("slow");
  TestClient::GetReply r = c->Get("slow", "1001", 10);
  ASSERT_TRUE(r.is_messages);
  slow_->counting_meta()->set_fail_flush(true);
  c->Ack("slow", "1001", r.messages.batch_id());
  ExpectNotDurableReply(c.get());
}

TEST_F(BlockingFlushTest, TheFlushBeginsAtTheAckNotAtTheNextReply) {
  ASSERT_TRUE(slow_->PutRange(100, 3).ok());
  auto c = Subscribed("slow");
  TestClient::GetReply r = c->Get("slow", "1001", 10);
  ASSERT_TRUE(r.is_messages);
  const int before = slow_->counting_meta()->flushes();
  // An ack gets no reply: only the early write makes the cursor durable now.
  c->Ack("slow", "1001", r.messages.batch_id());
  ASSERT_TRUE(::canal::testing::WaitFor([&] { return slow_->counting_meta()->flushes() > before; }, 10s))
      << "no cursor write began after the ack";
  ASSERT_TRUE(::canal::testing::WaitFor(
      [&] { return slow_->counting_meta()->flushed_cursor(1001) == MemoryDestination::Position(102); }, 10s));
}

// An ack that left nothing unwritten (the cursor where it stood: the entries of one snapshot
// chunk) starts no write, and the next reply does not wait for one; once the meta has
// something to write again, the next ack's write comes before the reply as ever.
TEST_F(BlockingFlushTest, AnAckThatLeftNothingUnwrittenStartsNoWrite) {
  ASSERT_TRUE(slow_->PutRange(100, 6).ok());
  auto c = Subscribed("slow");
  TestClient::GetReply first = c->Get("slow", "1001", 3);
  ASSERT_TRUE(first.is_messages);
  slow_->counting_meta()->set_all_written(true);
  slow_->counting_meta()->set_flush_delay(10s);  // a write now would hold the reply for 10 s
  const int before = slow_->counting_meta()->flushes();
  c->Ack("slow", "1001", first.messages.batch_id());
  const auto asked = std::chrono::steady_clock::now();
  TestClient::GetReply second = c->Get("slow", "1001", 3);
  ASSERT_TRUE(second.is_messages);
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 5s) << "the reply waited for a write";
  EXPECT_EQ(slow_->counting_meta()->flushes(), before);

  slow_->counting_meta()->set_all_written(false);
  slow_->counting_meta()->set_flush_delay(0ms);
  c->Ack("slow", "1001", second.messages.batch_id());
  c->SendGet("slow", "1001", 3);
  TestClient::GetReply after = c->ReadGetReply();
  ASSERT_TRUE(after.received);
  EXPECT_GT(slow_->counting_meta()->flushes(), before);
  EXPECT_EQ(slow_->counting_meta()->flushed_cursor(1001), MemoryDestination::Position(105));
}

TEST_F(BlockingFlushTest, AnAckDuringARunningFlushIsDurableBeforeTheNextReply) {
  ASSERT_TRUE(slow_->PutRange(100, 6).ok());
  auto c = Subscribed("slow");
  TestClient::GetReply first = c->Get("slow", "1001", 3);
  ASSERT_TRUE(first.is_messages);
  TestClient::GetReply second = c->Get("slow", "1001", 3);
  ASSERT_TRUE(second.is_messages);
  slow_->counting_meta()->set_flush_delay(1s);
  c->Ack("slow", "1001", first.messages.batch_id());
  ASSERT_TRUE(::canal::testing::WaitFor([&] { return slow_->counting_meta()->in_flush(); }, 10s));
  // This write took its cursor (batch 1) before the second ack arrives.
  c->Ack("slow", "1001", second.messages.batch_id());
  c->SendGet("slow", "1001", 3);
  TestClient::GetReply after = c->ReadGetReply();
  ASSERT_TRUE(after.received);
  EXPECT_TRUE(after.is_messages);
  EXPECT_EQ(slow_->counting_meta()->flushed_cursor(1001), MemoryDestination::Position(105))
      << "the reply came before the second ack was written";
}

TEST_F(BlockingFlushTest, AnEarlyFlushThatFailsFailsTheNextRequest) {
  ASSERT_TRUE(slow_->PutRange(100, 3).ok());
  auto c = Subscribed("slow");
  TestClient::GetReply r = c->Get("slow", "1001", 10);
  ASSERT_TRUE(r.is_messages);
  slow_->counting_meta()->set_fail_flush(true);
  const int before = slow_->counting_meta()->flushes();
  c->Ack("slow", "1001", r.messages.batch_id());
  // The early write is under way or failed already; either way the next reply reports it.
  ASSERT_TRUE(::canal::testing::WaitFor([&] { return slow_->counting_meta()->flushes() > before; }, 10s));
  ExpectNotDurableReply(c.get());
}

}  // namespace
}  // namespace canal::server

namespace canal::server {
namespace {

// A flush slower than canal.file.flush.warn is a warning naming the destination, the client, the
// time and the key: a slow disk otherwise shows only as stalls in delivery.
class SlowFlushWarningTest : public testing::SessionFixture {
 protected:
  void Start(int warn_ms) {
    dest_ = std::make_shared<MemoryDestination>("orders");
    registry_.Add(dest_);
    SessionServerOptions o = LoopbackOptions();
    o.slow_flush_warn_ms = warn_ms;
    StartSessionServer(o);
    // One connection throughout: a destination serves one client at a time.
    client_ = std::make_unique<TestClient>(server_->port(), 30s);
    ASSERT_TRUE(client_->Login("any", ""));
    std::optional<protocol::Ack> ack = client_->Subscribe("orders", "1001");
    ASSERT_TRUE(ack && ack->error_code() == 0) << (ack ? ack->error_message() : "no reply");
  }

  // One get, then its ack with a flush that takes `delay`, then a get whose reply waited for it
  // (and came back with nothing: every entry put so far is acked).
  void AckWithFlushDelay(std::chrono::milliseconds delay) {
    TestClient* c = client_.get();
    ASSERT_TRUE(dest_->PutRange(100 + 10 * puts_++, 1).ok());
    TestClient::GetReply r = c->Get("orders", "1001", 10);
    ASSERT_TRUE(r.is_messages);
    dest_->counting_meta()->set_flush_delay(delay);
    c->Ack("orders", "1001", r.messages.batch_id());
    c->SendGet("orders", "1001", 10);
    ASSERT_TRUE(c->ReadGetReply().received);
    dest_->counting_meta()->set_flush_delay(0ms);
  }

  size_t SlowFlushWarnings() {
    size_t n = 0;
    for (const std::string& line : sink_->LinesAtLeast(spdlog::level::warn)) {
      n += line.find("durable took") != std::string::npos;
    }
    return n;
  }

  std::shared_ptr<MemoryDestination> dest_;
  std::unique_ptr<TestClient> client_;
  int puts_ = 0;
};

TEST_F(SlowFlushWarningTest, AFlushPastTheLimitIsAWarningNamingDestinationClientAndTime) {
  Start(50);
  AckWithFlushDelay(300ms);
  ASSERT_EQ(SlowFlushWarnings(), 1u);
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "client 1001 of destination orders durable took", "canal.file.flush.warn: 50 ms"));
  EXPECT_TRUE(sink_->Contains(spdlog::level::warn, "durable took", "meta.dat"));
  for (const std::string& line : sink_->LinesAtLeast(spdlog::level::warn)) {
    const size_t at = line.find("durable took ");
    if (at == std::string::npos) continue;
    EXPECT_GE(std::stoi(line.substr(at + 13)), 300) << line;
  }
}

TEST_F(SlowFlushWarningTest, AFlushUnderTheLimitIsNotWarned) {
  Start(2000);
  AckWithFlushDelay(100ms);
  EXPECT_EQ(SlowFlushWarnings(), 0u);
}

TEST_F(SlowFlushWarningTest, ZeroNeverWarns) {
  Start(0);
  AckWithFlushDelay(200ms);
  EXPECT_EQ(SlowFlushWarnings(), 0u);
}

TEST_F(SlowFlushWarningTest, ManySlowFlushesAreRateLimited) {
  Start(1);
  for (int i = 0; i < 8; ++i) AckWithFlushDelay(20ms);
  // The limiter's burst (5 per 10 s per destination), not one line per flush.
  EXPECT_GE(SlowFlushWarnings(), 1u);
  EXPECT_LE(SlowFlushWarnings(), 5u);
}

}  // namespace
}  // namespace canal::server
