// ReadAheadStream: a RawEventStream read on a thread of its own, so that the
// socket reads, the packet framing and the CRC32 of each event overlap the
// decoding and entry building of the events before it
// (canal.instance.parser.parallel). On single-row transactions those take
// about a seventh of the parse thread (docs/performance-journal.md, entry 25).
//
// The reader copies each event into a bounded ring (`ring_bytes`) and hands
// it over in order; an event larger than a quarter of the ring is handed over
// as the source's own view instead, and the reader waits until the consumer
// is done with it before reading on. So memory is the ring plus what the
// source holds today, whatever the event sizes; and a quiet stream (the
// consumer has everything) starts again at the ring's start, so an idle
// destination keeps only the ring's first pages resident, not all of it. The
// source's error (or end) comes after every event read before it.
//
// `check_crc32`: the events end in a CRC32 of the rest. The reader checks it;
// checksum_checked() tells the decoder the last event's matched, so it is not
// computed twice. One that does not match is handed over unchecked, and the
// decoder reports it with its file and offset.
//
// "Caught up": the source calls SourceWillBlock() on the reading thread when a
// read is about to wait for the server (DumpConnection::set_before_block); the
// callback set with set_on_caught_up runs on the consumer's thread, inside
// ReadEvent, once it has consumed every event read before that.
//
// Batches: the reader publishes what it wrote every kBatchEvents events or
// kBatchBytes, and at once when the source says it will block (and the first
// event after that), when it waits for room, at a big event and at the end; the consumer releases what it read
// in the same batches and before it waits. One store per event on each side
// was ~8% of the server's CPU on single-row transactions (the other core
// fetching the line each time). So a source must call SourceWillBlock before
// any read that waits: the events read before a silent wait wait with it.
//
// Adaptive (`direct_after_bursts` > 0): at a trickle the thread costs more than it saves, each
// event handed over with two wake-ups instead of the socket's one (~9 µs of CPU per transaction
// at 10,000 single-row transactions/s, a sixth of the server's: docs/performance-journal.md,
// entry 28). So when the source has blocked `direct_after_bursts` times in a row after reading
// less than `burst_bytes` each time, the reader hands the source to the consumer, which reads it
// itself (no CRC on the reading side then; the decoder checks it), and parks; once the consumer
// has read `threaded_after_bytes` without the source blocking (a backlog), it hands the source
// back. A hand-over happens only between events: the reader's after the consumer has every event
// it read, the consumer's after it is done with the last event's view. In direct mode the
// caught-up callback runs inside the source's read, on the consumer's thread, as without a
// read-ahead.
//
// ReadEvent, checksum_checked and the callback: the consumer's thread only.
// Shutdown: any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "canal/common/status.h"
#include "canal/parser/binlog_source.h"

namespace canal::parser {

class ReadAheadStream final : public RawEventStream {
 public:
  // Small enough that what the reader wrote is still in cache when it is decoded. The server's
  // memory budget sets it aside for each destination that reads ahead.
  static constexpr size_t kDefaultRingBytes = size_t{1} << 20;
  struct Options {
    size_t ring_bytes = kDefaultRingBytes;
    bool check_crc32 = false;
    // The adaptive hand-over (see above); 0 keeps the reading thread for good.
    uint32_t direct_after_bursts = 32;
    size_t burst_bytes = size_t{64} << 10;
    size_t threaded_after_bytes = size_t{256} << 10;
  };

  ReadAheadStream(RawEventStream* source, Options options);
  ~ReadAheadStream() override;  // Stop()
  ReadAheadStream(const ReadAheadStream&) = delete;
  ReadAheadStream& operator=(const ReadAheadStream&) = delete;

  // Before Start().
  void set_on_caught_up(std::function<void()> f) { on_caught_up_ = std::move(f); }
  // Starts the reading thread (once); an error when no thread can be made.
  Status Start();
  // Shuts the source down and joins the reading thread (idempotent). The
  // source may be used again from the caller's thread after it.
  void Stop();

  // On the thread reading the source (from the source): every byte sent so far is read.
  void SourceWillBlock();

  Status ReadEvent(std::string_view* event) override;
  bool checksum_checked() const override { return checked_; }
  void Shutdown() override;

  // Events the reader handed over, and how often each side waited (tests, logs).
  uint64_t events_read() const { return events_read_.load(std::memory_order_relaxed); }
  uint64_t reader_waits() const { return reader_waits_.load(std::memory_order_relaxed); }
  // Events the consumer read from the source itself, and hand-overs either way (tests, logs).
  uint64_t direct_reads() const { return direct_reads_.load(std::memory_order_relaxed); }
  uint64_t hand_overs() const { return hand_overs_.load(std::memory_order_relaxed); }
  bool direct() const { return direct_.load(std::memory_order_relaxed); }

 private:
  enum class Kind : uint8_t { kEvent = 1, kBig = 2, kWrap = 3 };
  struct Header {
    uint32_t size;  // the event's bytes (kEvent, kBig)
    Kind kind;
    uint8_t checked;
    uint16_t pad;
  };
  static constexpr size_t kHeaderBytes = sizeof(Header);
  static_assert(kHeaderBytes == 8);
  static constexpr uint32_t kBatchEvents = 16;
  static constexpr size_t kBatchBytes = size_t{32} << 10;

  void Run();
  // Waits until `bytes` of the ring are free with `head` written; false when shut down.
  bool WaitUntilFree(uint64_t head, size_t bytes);
  // Publishes what was written up to `head` and wakes a waiting consumer.
  void Publish(uint64_t head);
  // Publishes written_ when some of it is not yet (before the reader waits, or hands over).
  void PublishWritten();
  // Releases consumed_ when some of it is not yet (before the consumer waits).
  void ReleaseConsumed();
  void WakeConsumer();
  void WakeReader();
  void Finish(Status s);
  bool CrcMatches(std::string_view event) const;
  void Release(uint64_t tail);
  // The reader's side of the hand-over, after each event it published: enough small bursts in a
  // row, it gives the source to the consumer and parks until given it back. False when shut
  // down meanwhile.
  bool MaybeHandToConsumer();
  // The consumer's side: reads the source itself (direct mode).
  Status ReadDirect(std::string_view* event);
  void HandToReader();

  RawEventStream* source_;
  Options options_;
  size_t capacity_;      // ring bytes, a multiple of 8
  size_t inline_limit_;  // larger events go over as the source's view
  std::unique_ptr<uint8_t[]> ring_;
  std::function<void()> on_caught_up_;
  std::thread thread_;
  bool started_ = false;

  // The reader's side. head_: bytes written (published); idle_at_: head_ when
  // the source last said it would block (+1, 0 = never).
  alignas(64) std::atomic<uint64_t> head_{0};
  std::atomic<uint64_t> idle_at_{0};
  std::atomic<bool> reader_waiting_{false};
  std::atomic<uint64_t> reader_wait_tail_{0};  // the tail a waiting reader needs
  std::string_view big_;  // the kBig event (the reader writes it before publishing)
  // The reader thread's own: bytes written, published or not. Records are published in
  // batches (kBatchEvents, kBatchBytes), and whenever the source is about to wait, the reader
  // waits for room, or hands over: each publish is a store the consumer's core must fetch.
  uint64_t written_ = 0;
  uint32_t unpublished_events_ = 0;
  // The consumer's side. tail_: bytes consumed (released).
  alignas(64) std::atomic<uint64_t> tail_{0};
  std::atomic<bool> consumer_waiting_{false};
  uint64_t pending_release_ = 0;  // bytes of the event last returned, released at the next read
  // Bytes consumed, released or not: released in the same batches, and always before the
  // consumer waits (so a reader waiting for room is never left waiting on it).
  uint64_t consumed_ = 0;
  uint32_t unreleased_events_ = 0;
  uint64_t idle_seen_ = 0;        // the idle_at_ the callback last ran for
  bool checked_ = false;

  alignas(64) std::mutex mu_;
  std::condition_variable consumer_cv_, reader_cv_;
  std::atomic<bool> ended_{false}, shutdown_{false};
  Status end_;  // set before ended_
  std::atomic<uint64_t> events_read_{0}, reader_waits_{0};

  // The hand-over. direct_: the consumer reads the source (set by the reader, cleared by the
  // consumer, both under mu_). direct_reading_: the consumer is inside a source read, so
  // SourceWillBlock is on its thread.
  std::atomic<bool> direct_{false};
  std::atomic<bool> direct_reading_{false};
  std::atomic<uint64_t> direct_reads_{0}, hand_overs_{0};
  // The reader's (SourceWillBlock runs on its thread then): whether the source blocked during
  // the read in progress, the bytes read since it last blocked, and the small bursts in a row.
  bool blocked_in_read_ = false;
  size_t burst_bytes_ = 0;
  uint32_t small_bursts_ = 0;
  // The consumer's: whether the source blocked during its direct read, and the bytes it read
  // without the source blocking.
  bool direct_blocked_ = false;
  size_t direct_run_bytes_ = 0;
};

}  // namespace canal::parser
