// ReadAheadStream: the binlog read on a thread of its own hands every event
// over in order and byte for byte (through the ring's wrap, and as the
// source's own view when big), the source's error after them, the CRC32 it
// checked, the caught-up callback only when everything read is consumed, and
// it stops whatever either side waits for.
#include "canal/parser/read_ahead_stream.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/crc32.h"
#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/binlog_source.h"
#include "read_ahead_test_events.h"
#include "support/event_bytes.h"

namespace canal::parser {
namespace {

namespace eb = canal::testing::event_bytes;
using std::chrono::milliseconds;

using read_ahead_test::Pattern;

// Hands out `events` like a replica connection: one buffer, overwritten at each read (a
// view kept past the next read would show the next event's bytes). Then `end`, for ever.
// `after_read(i)` runs on the reading thread after event i is read (0-based).
class FakeSource final : public read_ahead_test::QueuedEvents {
 public:
  explicit FakeSource(std::vector<std::string> events, Status end = Status::IOError("connection lost (test)"))
      : QueuedEvents(std::move(events), std::move(end)) {}

  Status ReadEvent(std::string_view* event) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++reads_;
    cv_.notify_all();
    while (block_at_ == next_ && !shut_) cv_.wait(lock);
    return Next(event);
  }
  // Reads of event `index` wait until Unblock() (as a socket with nothing to read).
  void BlockAt(size_t index) {
    std::lock_guard<std::mutex> lock(mu_);
    block_at_ = index;
  }
  void Unblock() {
    std::lock_guard<std::mutex> lock(mu_);
    block_at_ = SIZE_MAX;
    cv_.notify_all();
  }
  // Waits (bounded) until ReadEvent has been called `n` times.
  bool WaitForReads(size_t n, milliseconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return reads_ >= n; });
  }
  size_t reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return reads_;
  }

 private:
  size_t reads_ = 0, block_at_ = SIZE_MAX;
};

// A source that tells the stream, before its read number `tell_at`, that the read is about to
// block, as the replica connection does (DumpConnection::set_before_block).
class TellingSource final : public RawEventStream {
 public:
  TellingSource(FakeSource* source, size_t tell_at) : source_(source), tell_at_(tell_at) {}
  Status ReadEvent(std::string_view* event) override {
    if (++reads_ == tell_at_) stream->SourceWillBlock();
    return source_->ReadEvent(event);
  }
  void Shutdown() override { source_->Shutdown(); }
  ReadAheadStream* stream = nullptr;  // set before the stream starts

 private:
  FakeSource* source_;
  size_t tell_at_, reads_ = 0;
};

ReadAheadStream::Options SmallRing(bool crc = false) {
  ReadAheadStream::Options o;
  o.ring_bytes = 4096;  // events over 1024 bytes go over as the source's view
  o.check_crc32 = crc;
  o.direct_after_bursts = 0;  // the reading thread throughout (the hand-over: read_ahead_handover_test.cc)
  return o;
}

TEST(ReadAheadStream, HandsEveryEventOverInOrderThroughTheWrapAndThenTheSourcesError) {
  std::mt19937 rng(7);
  std::vector<std::string> events;
  for (size_t i = 0; i < 20000; ++i) {
    // Mostly small (many wraps of the 4 KiB ring), some over the inline limit, a few empty.
    const uint32_t r = rng() % 100;
    const size_t size = r < 2 ? 0 : r < 90 ? rng() % 300 : r < 97 ? 300 + rng() % 724 : 1025 + rng() % 6000;
    events.push_back(Pattern(i, size));
  }
  FakeSource source(events, Status::IOError("the primary went away (test)"));
  ReadAheadStream ahead(&source, SmallRing());
  ASSERT_TRUE(ahead.Start().ok());
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    Status s = ahead.ReadEvent(&ev);
    ASSERT_TRUE(s.ok()) << "event " << i << ": " << s.ToString();
    ASSERT_EQ(ev, events[i]) << "event " << i << " (" << events[i].size() << " bytes)";
    EXPECT_FALSE(ahead.checksum_checked());
    if (i % 997 == 0) std::this_thread::yield();  // now and then the reader gets ahead
  }
  std::string_view ev;
  Status s = ahead.ReadEvent(&ev);
  EXPECT_TRUE(s.code() == Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("the primary went away"), std::string_view::npos) << s.ToString();
  // The end stays the end.
  EXPECT_TRUE(ahead.ReadEvent(&ev).code() == Status::Code::kIOError);
  EXPECT_EQ(ahead.events_read(), events.size());
  EXPECT_GT(ahead.reader_waits(), 0u);  // the ring is far smaller than the stream: the reader waited
}

TEST(ReadAheadStream, ABigEventIsTheSourcesOwnBytesAndTheSourceIsNotReadWhileItIsHeld) {
  std::vector<std::string> events = {Pattern(0, 100), Pattern(1, 64 * 1024), Pattern(2, 100)};
  FakeSource source(events);
  ReadAheadStream ahead(&source, SmallRing());
  ASSERT_TRUE(ahead.Start().ok());
  std::string_view ev;
  ASSERT_TRUE(ahead.ReadEvent(&ev).ok());
  ASSERT_TRUE(ahead.ReadEvent(&ev).ok());
  ASSERT_EQ(ev.size(), 64u * 1024);
  // Three reads so far (two events and the big one); a fourth would overwrite the bytes held.
  EXPECT_FALSE(source.WaitForReads(4, milliseconds(50))) << "the source was read while its big event was held";
  EXPECT_EQ(ev, events[1]);
  ASSERT_TRUE(ahead.ReadEvent(&ev).ok());
  EXPECT_EQ(ev, events[2]);
}

TEST(ReadAheadStream, ChecksumsMatchedOnTheReadingThreadAreReportedAndOthersAreNot) {
  auto with_crc = [](std::string body) {
    const uint32_t crc = binlog::Crc32(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    body.append(reinterpret_cast<const char*>(&crc), 4);
    return body;
  };
  std::string good = with_crc(Pattern(1, 200));
  std::string bad = with_crc(Pattern(2, 200));
  bad[10] ^= 1;
  std::string big_good = with_crc(Pattern(3, 5000));
  const std::vector<std::string> events = {good, bad, big_good, "ab"};
  {
    FakeSource source(events);
    ReadAheadStream ahead(&source, SmallRing(/*crc=*/true));
    ASSERT_TRUE(ahead.Start().ok());
    const bool expected[] = {true, false, true, false};
    for (size_t i = 0; i < events.size(); ++i) {
      std::string_view ev;
      ASSERT_TRUE(ahead.ReadEvent(&ev).ok());
      EXPECT_EQ(ev, events[i]);
      EXPECT_EQ(ahead.checksum_checked(), expected[i]) << "event " << i;
    }
  }
  {
    FakeSource source(events);
    ReadAheadStream ahead(&source, SmallRing(/*crc=*/false));
    ASSERT_TRUE(ahead.Start().ok());
    for (size_t i = 0; i < events.size(); ++i) {
      std::string_view ev;
      ASSERT_TRUE(ahead.ReadEvent(&ev).ok());
      EXPECT_FALSE(ahead.checksum_checked()) << "event " << i << ": not asked to check";
    }
  }
}

// The source says it will block (as DumpConnection's before_block) after event 4.
TEST(ReadAheadStream, CaughtUpRunsOnTheConsumerOnceEverythingReadBeforeItIsConsumed) {
  std::vector<std::string> events;
  for (size_t i = 0; i < 8; ++i) events.push_back(Pattern(i, 50));
  FakeSource source(events);
  source.BlockAt(5);
  TellingSource telling(&source, 6);
  ReadAheadStream ahead(&telling, SmallRing());
  telling.stream = &ahead;
  size_t consumed = 0;
  std::vector<size_t> calls;
  const std::thread::id consumer = std::this_thread::get_id();
  ahead.set_on_caught_up([&] {
    calls.push_back(consumed);
    EXPECT_EQ(std::this_thread::get_id(), consumer);
    source.Unblock();
  });
  ASSERT_TRUE(ahead.Start().ok());
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    ASSERT_TRUE(ahead.ReadEvent(&ev).ok()) << i;
    EXPECT_EQ(ev, events[i]);
    ++consumed;
  }
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], 5u);  // after the five events read before the source blocked, not before
}

TEST(ReadAheadStream, CaughtUpDoesNotRunWhenMoreWasReadAfterTheSourceSaidItWouldBlock) {
  std::vector<std::string> events;
  for (size_t i = 0; i < 10; ++i) events.push_back(Pattern(i, 50));
  FakeSource source(events);
  TellingSource telling(&source, 6);  // it says so, and then does not block after all: more come
  ReadAheadStream ahead(&telling, SmallRing());
  telling.stream = &ahead;
  int calls = 0;
  ahead.set_on_caught_up([&] { ++calls; });
  ASSERT_TRUE(ahead.Start().ok());
  // Everything is read (and the end reached) before the consumer starts.
  ASSERT_TRUE(source.WaitForReads(11, milliseconds(10000)));
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    ASSERT_TRUE(ahead.ReadEvent(&ev).ok()) << i;
  }
  std::string_view ev;
  EXPECT_TRUE(ahead.ReadEvent(&ev).code() == Status::Code::kIOError);
  EXPECT_EQ(calls, 0);
}

// An idle destination's stream: everything consumed, then one event now and then. Each starts
// at the ring's start again, so only its first pages are ever made resident.
TEST(ReadAheadStream, AStreamTheConsumerHasDrainedStartsAgainAtTheRingsStart) {
  std::vector<std::string> events;
  for (size_t i = 0; i < 5; ++i) events.push_back(Pattern(i, 100));
  FakeSource source(events);
  source.BlockAt(3);  // after three events, silence until the consumer has them all
  TellingSource telling(&source, 4);
  ReadAheadStream ahead(&telling, SmallRing());
  telling.stream = &ahead;
  ahead.set_on_caught_up([&] { source.Unblock(); });
  ASSERT_TRUE(ahead.Start().ok());
  // The first three are in the ring before the consumer starts (the fourth read waits).
  ASSERT_TRUE(source.WaitForReads(4, milliseconds(10000)));
  std::vector<const char*> at;
  for (size_t i = 0; i < events.size(); ++i) {
    std::string_view ev;
    ASSERT_TRUE(ahead.ReadEvent(&ev).ok()) << i;
    EXPECT_EQ(ev, events[i]);
    at.push_back(ev.data());
  }
  EXPECT_EQ(at[1], at[0] + 112) << "one after the other while the consumer is behind";
  EXPECT_EQ(at[2], at[0] + 224);
  EXPECT_EQ(at[3], at[0]) << "the drained ring starts again at its start";
}

TEST(ReadAheadStream, ShutdownWakesAConsumerWaitingOnASilentSource) {
  FakeSource source({Pattern(0, 10)});
  source.BlockAt(1);  // then silence, until shut down
  TellingSource telling(&source, 2);  // as the replica connection says before it waits
  ReadAheadStream ahead(&telling, SmallRing());
  telling.stream = &ahead;
  ASSERT_TRUE(ahead.Start().ok());
  std::string_view ev;
  ASSERT_TRUE(ahead.ReadEvent(&ev).ok());
  std::thread stopper([&] {
    source.WaitForReads(2, milliseconds(10000));
    ahead.Shutdown();
  });
  Status s = ahead.ReadEvent(&ev);
  stopper.join();
  EXPECT_FALSE(s.ok());
}

TEST(ReadAheadStream, StopEndsAReaderWaitingForRoomInAFullRing) {
  std::vector<std::string> events;
  for (size_t i = 0; i < 1000; ++i) events.push_back(Pattern(i, 500));
  FakeSource source(events);
  ReadAheadStream ahead(&source, SmallRing());
  ASSERT_TRUE(ahead.Start().ok());
  // 4 KiB hold about seven of them: the reader waits for the consumer, who never reads.
  ASSERT_TRUE(source.WaitForReads(7, milliseconds(10000)));
  EXPECT_LT(source.reads(), 20u);
  ahead.Stop();  // returns: the reader saw the shutdown
  const size_t reads = source.reads();
  std::string_view ev;
  // What was read before the stop may still be handed over; then the stop's error.
  Status s;
  for (int i = 0; i < 20 && (s = ahead.ReadEvent(&ev)).ok(); ++i) {
  }
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(source.reads(), reads);  // no thread reads any more
}

TEST(ReadAheadStream, AnEmptyStreamGivesTheSourcesEndAtOnce) {
  FakeSource source({}, Status::NotFound("end of binlog stream (test)"));
  ReadAheadStream ahead(&source, SmallRing());
  ASSERT_TRUE(ahead.Start().ok());
  std::string_view ev;
  EXPECT_TRUE(ahead.ReadEvent(&ev).IsNotFound());
}

// Through DumpSource and the decoder: a CRC32 binlog decodes the same with the checksum
// checked ahead, and a damaged event is still reported by the decoder with its offset.
class ScriptedDump final : public RawEventStream {
 public:
  explicit ScriptedDump(std::vector<std::string> events) : events_(std::move(events)) {}
  Status ReadEvent(std::string_view* event) override {
    if (next_ >= events_.size()) return Status::IOError("connection to the primary lost (test)");
    current_ = events_[next_++];
    *event = current_;
    return Status::OK();
  }

 private:
  std::vector<std::string> events_;
  std::string current_;
  size_t next_ = 0;
};

std::vector<std::string> CrcStream(bool damage_third_row) {
  std::vector<std::string> out;
  std::string rotate = eb::Rotate("mysql-bin.000003", 4, 0x20);
  eb::AddChecksum(&rotate);  // (a CRC32 server's artificial ROTATE carries one too)
  out.push_back(rotate);
  uint64_t pos = 4;
  // log_pos first (its end, the CRC's 4 bytes counted), so that the CRC covers the final header.
  auto place = [&](std::string ev) {
    eb::SetLogPos(&ev, static_cast<uint32_t>(pos + ev.size() + 4));
    eb::AddChecksum(&ev);
    pos += ev.size();
    out.push_back(std::move(ev));
  };
  place(eb::FormatDescriptionFor("8.0.36", true));
  place(eb::Query("BEGIN"));
  place(eb::TableMap());
  for (uint32_t id = 1; id <= 5; ++id) {
    place(eb::WriteRow(id));
    if (damage_third_row && id == 3) out.back()[30] ^= 0x40;
  }
  place(eb::Xid(9));
  return out;
}

struct Decoded {
  std::vector<uint64_t> offsets;
  std::vector<bool> verified;
  Status end;
};

Decoded DecodeAll(std::vector<std::string> events, bool ahead_on) {
  ScriptedDump dump(std::move(events));
  std::optional<ReadAheadStream> ahead;
  RawEventStream* stream = &dump;
  if (ahead_on) {
    ReadAheadStream::Options o = SmallRing(/*crc=*/true);
    ahead.emplace(&dump, o);
    EXPECT_TRUE(ahead->Start().ok());
    stream = &*ahead;
  }
  DumpSource source(stream, "mysql-bin.000003", 4, true);
  binlog::EventDecoder decoder;
  Decoded d;
  SourceEvent se;
  for (;;) {
    Status s = source.Next(&decoder, &se);
    if (!s.ok()) {
      d.end = s;
      break;
    }
    d.offsets.push_back(se.offset);
    d.verified.push_back(se.event.checksum_verified);
  }
  return d;
}

TEST(ReadAheadStream, ACrc32StreamDecodesTheSameReadAheadAndADamagedEventIsNamedByTheDecoder) {
  const Decoded plain = DecodeAll(CrcStream(false), false);
  const Decoded ahead = DecodeAll(CrcStream(false), true);
  ASSERT_EQ(plain.offsets.size(), 9u) << plain.end.ToString();  // FDE, BEGIN, TABLE_MAP, 5 rows, XID
  EXPECT_EQ(ahead.offsets, plain.offsets);
  EXPECT_EQ(ahead.verified, plain.verified);
  for (size_t i = 1; i < ahead.verified.size(); ++i) EXPECT_TRUE(ahead.verified[i]) << "event " << i;
  EXPECT_EQ(ahead.end.ToString(), plain.end.ToString());

  const Decoded damaged_plain = DecodeAll(CrcStream(true), false);
  const Decoded damaged_ahead = DecodeAll(CrcStream(true), true);
  EXPECT_EQ(damaged_ahead.end.subcode(), binlog::kErrorChecksumMismatch) << damaged_ahead.end.ToString();
  EXPECT_EQ(damaged_ahead.end.ToString(), damaged_plain.end.ToString());
  EXPECT_NE(damaged_ahead.end.ToString().find("mysql-bin.000003"), std::string::npos) << damaged_ahead.end.ToString();
  EXPECT_EQ(damaged_ahead.offsets, damaged_plain.offsets);
}

}  // namespace
}  // namespace canal::parser
