// ReadAheadStream's hand-over (read_ahead_stream.h, "Adaptive"): at a trickle the consumer
// reads the source itself and the reading thread parks; a backlog gives the source back to the
// thread. Either way every event arrives once, in order, byte for byte; the caught-up callback
// runs on the consumer's thread once everything read before it is consumed; a shutdown ends a
// parked reader and a consumer blocked in its own read; the source's error is the stream's end.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog_source.h"
#include "canal/parser/read_ahead_stream.h"
#include "read_ahead_test_events.h"

namespace canal::parser {
namespace {

using std::chrono::milliseconds;

using read_ahead_test::Pattern;

// A replica connection in miniature: events become readable when Release()d; a read with
// nothing readable tells the stream it will block (as DumpConnection::set_before_block does),
// then waits. One buffer, overwritten at each read. After the last event, `end`.
class PacedSource final : public read_ahead_test::QueuedEvents {
 public:
  PacedSource(std::vector<std::string> events, Status end) : QueuedEvents(std::move(events), std::move(end)) {}

  Status ReadEvent(std::string_view* event) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (next_ >= readable_ && next_ < events_.size() && !shut_) {
      lock.unlock();
      stream->SourceWillBlock();  // (may Release more, on the consumer's thread)
      lock.lock();
      ++blocks_;
    }
    cv_.wait(lock, [&] { return next_ < readable_ || next_ >= events_.size() || shut_; });
    return Next(event);
  }
  void Release(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    readable_ = std::min(readable_ + n, events_.size());
    cv_.notify_all();
  }
  size_t blocks() {
    std::lock_guard<std::mutex> lock(mu_);
    return blocks_;
  }

  ReadAheadStream* stream = nullptr;  // set before the stream starts

 private:
  size_t readable_ = 0, blocks_ = 0;
};

ReadAheadStream::Options Adaptive(uint32_t bursts, size_t burst_bytes, size_t threaded_after) {
  ReadAheadStream::Options o;
  o.ring_bytes = 4096;  // events over 1024 bytes go over as the source's view
  o.direct_after_bursts = bursts;
  o.burst_bytes = burst_bytes;
  o.threaded_after_bytes = threaded_after;
  return o;
}

// Reads events.size() events and checks each against its original.
void ExpectEachInOrder(ReadAheadStream* ahead, const std::vector<std::string>& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    ASSERT_TRUE(ahead->ReadEvent(&ev).ok()) << i;
    ASSERT_EQ(ev, events[i]) << i;
  }
}

std::vector<std::string> Events(size_t n, size_t size) {
  std::vector<std::string> events;
  for (size_t i = 0; i < n; ++i) events.push_back(Pattern(i, size));
  return events;
}

// One event at a time, the next released only once the consumer has the one before: each is
// a burst of its own, as at a trickle of single-row transactions.
TEST(ReadAheadHandOver, ATrickleIsReadByTheConsumerItselfEveryEventInOrder) {
  const std::vector<std::string> events = Events(200, 50);
  PacedSource source(events, Status::IOError("connection lost (test)"));
  ReadAheadStream ahead(&source, Adaptive(4, 1024, 64 << 10));
  source.stream = &ahead;
  const std::thread::id consumer = std::this_thread::get_id();
  size_t consumed = 0, callbacks = 0;
  ahead.set_on_caught_up([&] {
    EXPECT_EQ(std::this_thread::get_id(), consumer);
    ++callbacks;
    source.Release(1);
  });
  ASSERT_TRUE(ahead.Start().ok());
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    ASSERT_TRUE(ahead.ReadEvent(&ev).ok()) << i;
    ASSERT_EQ(ev, events[i]) << i;
    ++consumed;
  }
  std::string_view ev;
  EXPECT_EQ(ahead.ReadEvent(&ev).code(), Status::Code::kIOError);
  EXPECT_TRUE(ahead.direct());
  EXPECT_EQ(ahead.hand_overs(), 1u);
  EXPECT_GE(ahead.direct_reads(), 190u) << "the consumer read the trickle itself after a few bursts";
  EXPECT_EQ(ahead.events_read() + ahead.direct_reads(), events.size());
  EXPECT_EQ(callbacks, source.blocks()) << "the caught-up callback once per time the source waited";
  EXPECT_FALSE(ahead.checksum_checked()) << "read directly, the decoder checks the CRC";
}

// Going direct, then a backlog: past threaded_after_bytes read without the source waiting,
// the reader takes it back, and then the trickle hands it over again.
TEST(ReadAheadHandOver, ABacklogGivesTheSourceBackToTheReaderAndATrickleTakesItAgain) {
  const std::vector<std::string> events = Events(1200, 100);
  PacedSource source(events, Status::NotFound("end of binlog stream (test)"));
  ReadAheadStream ahead(&source, Adaptive(4, 1024, 8 << 10));
  source.stream = &ahead;
  size_t consumed = 0;
  bool backlog_released = false;
  // A trickle to event 50, then the next 1000 at once, then a trickle again.
  ahead.set_on_caught_up([&] {
    if (consumed >= 50 && !backlog_released) {
      backlog_released = true;
      source.Release(1000);
    } else {
      source.Release(1);
    }
  });
  ASSERT_TRUE(ahead.Start().ok());
  std::vector<uint64_t> direct_at;
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    ASSERT_TRUE(ahead.ReadEvent(&ev).ok()) << i;
    ASSERT_EQ(ev, events[i]) << i;
    ++consumed;
    direct_at.push_back(ahead.direct_reads());
  }
  std::string_view ev;
  EXPECT_TRUE(ahead.ReadEvent(&ev).IsNotFound());
  EXPECT_GE(ahead.hand_overs(), 3u) << "to the consumer, back to the reader, to the consumer again";
  EXPECT_TRUE(ahead.direct());
  // Most of the backlog came through the ring: direct reads stopped growing within it.
  EXPECT_LT(direct_at[900] - direct_at[200], 100u);
  EXPECT_GT(direct_at[1199] - direct_at[1100], 50u) << "the trickle after it is read directly again";
}

TEST(ReadAheadHandOver, ABigEventReadDirectlyIsTheSourcesOwnBytes) {
  std::vector<std::string> events = Events(40, 30);
  events.push_back(Pattern(40, 3000));  // over a quarter of the 4 KiB ring
  events.push_back(Pattern(41, 30));
  PacedSource source(events, Status::IOError("connection lost (test)"));
  ReadAheadStream ahead(&source, Adaptive(2, 1024, 64 << 10));
  source.stream = &ahead;
  ahead.set_on_caught_up([&] { source.Release(1); });
  ASSERT_TRUE(ahead.Start().ok());
  ExpectEachInOrder(&ahead, events);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(ahead.direct());
}

TEST(ReadAheadHandOver, ShutdownEndsAConsumerBlockedInItsOwnReadAndTheParkedReader) {
  PacedSource source(Events(100, 20), Status::IOError("connection lost (test)"));
  ReadAheadStream ahead(&source, Adaptive(2, 1024, 64 << 10));
  source.stream = &ahead;
  size_t consumed = 0;
  ahead.set_on_caught_up([&] {
    if (consumed < 10) source.Release(1);  // then silence
  });
  ASSERT_TRUE(ahead.Start().ok());
  for (int i = 0; i < 10; ++i) {
    std::string_view ev;
    ASSERT_TRUE(ahead.ReadEvent(&ev).ok()) << i;
    ++consumed;
  }
  ASSERT_TRUE(ahead.direct());
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));  // (the consumer is blocked in the source either way)
    ahead.Shutdown();
  });
  std::string_view ev;
  EXPECT_FALSE(ahead.ReadEvent(&ev).ok());
  stopper.join();
  ahead.Stop();  // returns: the parked reader saw the shutdown
}

TEST(ReadAheadHandOver, ZeroBurstsKeepsTheReadingThread) {
  const std::vector<std::string> events = Events(100, 50);
  PacedSource source(events, Status::IOError("connection lost (test)"));
  ReadAheadStream ahead(&source, Adaptive(0, 1024, 64 << 10));
  source.stream = &ahead;
  ahead.set_on_caught_up([&] { source.Release(1); });
  ASSERT_TRUE(ahead.Start().ok());
  ExpectEachInOrder(&ahead, events);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(ahead.direct_reads(), 0u);
  EXPECT_EQ(ahead.hand_overs(), 0u);
}

// Bursts of random sizes at random moments from a thread of their own, thresholds low enough
// that the source changes hands again and again: every event still arrives once, in order.
TEST(ReadAheadHandOver, RandomBurstsChangeHandsManyTimesAndLoseNothing) {
  std::mt19937 rng(20261207);
  std::vector<std::string> events;
  for (size_t i = 0; i < 20000; ++i) events.push_back(Pattern(i, 8 + rng() % 200));
  PacedSource source(events, Status::NotFound("end of binlog stream (test)"));
  ReadAheadStream ahead(&source, Adaptive(1, 600, 3000));
  source.stream = &ahead;
  ASSERT_TRUE(ahead.Start().ok());
  std::atomic<bool> done{false};
  std::thread producer([&] {
    std::mt19937 r(7);
    size_t released = 0;
    while (released < events.size() && !done) {
      // Mostly a trickle with pauses, now and then a backlog.
      const bool backlog = r() % 8 == 0;
      const size_t n = backlog ? 50 + r() % 400 : 1 + r() % 3;
      source.Release(n);
      released += n;
      if (!backlog) std::this_thread::sleep_for(std::chrono::microseconds(20 + r() % 200));
    }
  });
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    Status s = ahead.ReadEvent(&ev);
    if (!s.ok() || ev != events[i]) {
      done = true;
      producer.join();
      FAIL() << "event " << i << ": " << (s.ok() ? "bytes differ" : s.ToString());
    }
  }
  done = true;
  producer.join();
  std::string_view ev;
  EXPECT_TRUE(ahead.ReadEvent(&ev).IsNotFound());
  // (How often depends on the machine's pace; 20-100 here, fewer under TSan.)
  EXPECT_GE(ahead.hand_overs(), 2u) << "to the consumer and back at least once";
  EXPECT_GT(ahead.direct_reads(), 0u);
  EXPECT_GT(ahead.events_read(), 0u);
}

}  // namespace
}  // namespace canal::parser
