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

  // On the reading thread (from the source): every byte sent so far is read.
  void SourceWillBlock();

  Status ReadEvent(std::string_view* event) override;
  bool checksum_checked() const override { return checked_; }
  void Shutdown() override;

  // Events the reader handed over, and how often each side waited (tests, logs).
  uint64_t events_read() const { return events_read_.load(std::memory_order_relaxed); }
  uint64_t reader_waits() const { return reader_waits_.load(std::memory_order_relaxed); }

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

  void Run();
  // Waits until `bytes` of the ring are free with `head` written; false when shut down.
  bool WaitUntilFree(uint64_t head, size_t bytes);
  // Publishes what was written up to `head` and wakes a waiting consumer.
  void Publish(uint64_t head);
  void WakeConsumer();
  void WakeReader();
  void Finish(Status s);
  bool CrcMatches(std::string_view event) const;
  void Release(uint64_t tail);

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
  // The consumer's side. tail_: bytes consumed (released).
  alignas(64) std::atomic<uint64_t> tail_{0};
  std::atomic<bool> consumer_waiting_{false};
  uint64_t pending_release_ = 0;  // bytes of the event last returned, released at the next read
  uint64_t idle_seen_ = 0;        // the idle_at_ the callback last ran for
  bool checked_ = false;

  alignas(64) std::mutex mu_;
  std::condition_variable consumer_cv_, reader_cv_;
  std::atomic<bool> ended_{false}, shutdown_{false};
  Status end_;  // set before ended_
  std::atomic<uint64_t> events_read_{0}, reader_waits_{0};
};

}  // namespace canal::parser
