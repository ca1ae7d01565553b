#include "canal/parser/read_ahead_stream.h"

#include <algorithm>
#include <cstring>
#include <pthread.h>
#include <system_error>

#include "canal/parser/binlog/crc32.h"

namespace canal::parser {
namespace {

constexpr auto kAcquire = std::memory_order_acquire;
constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr auto kSeqCst = std::memory_order_seq_cst;

size_t Align8(size_t n) { return (n + 7) & ~size_t{7}; }

}  // namespace

ReadAheadStream::ReadAheadStream(RawEventStream* source, Options options)
    : source_(source), options_(options) {
  // At least a few records; a multiple of 8, so that a record's header never straddles the end.
  capacity_ = std::max<size_t>(Align8(options_.ring_bytes), 4096);
  inline_limit_ = capacity_ / 4;
  // Not value-initialised: pages the reader never writes are never made resident.
  ring_.reset(new uint8_t[capacity_]);
}

ReadAheadStream::~ReadAheadStream() { Stop(); }

Status ReadAheadStream::Start() {
  if (started_) return Status::OK();
  try {
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "binlog-read");  // (top -H, perf: which thread is which)
      Run();
    });
  } catch (const std::system_error& e) {
    return Status::IOError(std::string("cannot start the binlog read-ahead thread: ") + e.what());
  }
  started_ = true;
  return Status::OK();
}

void ReadAheadStream::Stop() {
  Shutdown();
  if (thread_.joinable()) thread_.join();
}

void ReadAheadStream::Shutdown() {
  shutdown_.store(true, kSeqCst);
  source_->Shutdown();
  std::lock_guard<std::mutex> lock(mu_);
  consumer_cv_.notify_all();
  reader_cv_.notify_all();
}

bool ReadAheadStream::CrcMatches(std::string_view event) const {
  if (event.size() < 4) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(event.data());
  uint32_t stored;
  std::memcpy(&stored, p + event.size() - 4, 4);  // little-endian hosts, like the decoder
  return binlog::Crc32(p, event.size() - 4) == stored;
}

// ---- the reading thread ------------------------------------------------------

void ReadAheadStream::Run() {
  const auto shut_down = [this] { Finish(Status::Aborted("binlog read-ahead shut down")); };
  for (;;) {
    std::string_view ev;
    Status s = source_->ReadEvent(&ev);
    if (!s.ok()) {
      PublishWritten();  // the events before the end go first
      return Finish(std::move(s));
    }
    if (shutdown_.load(kAcquire)) return shut_down();
    // The first event after the source said it would block goes out at once: the consumer must
    // not take the mark it left for "caught up" while more was read after it.
    const bool after_block = blocked_in_read_;
    if (blocked_in_read_) {
      blocked_in_read_ = false;
      // The source waited before this event: the burst before it ended there.
      small_bursts_ = burst_bytes_ < options_.burst_bytes ? small_bursts_ + 1 : 0;
      burst_bytes_ = 0;
    }
    burst_bytes_ += ev.size();
    Header h{};
    h.size = static_cast<uint32_t>(ev.size());
    h.checked = options_.check_crc32 && CrcMatches(ev) ? 1 : 0;
    const bool big = ev.size() > inline_limit_;
    h.kind = big ? Kind::kBig : Kind::kEvent;
    const size_t record = kHeaderBytes + (big ? 0 : Align8(ev.size()));
    const size_t at = written_ % capacity_;
    // To the ring's start when the rest does not hold the record, or when the consumer has
    // everything (a quiet stream then touches the same first pages over and over).
    const bool drained = at >= record && tail_.load(kAcquire) == written_;
    const size_t wrap = capacity_ - at < record || (drained && at != 0) ? capacity_ - at : 0;
    if (!WaitUntilFree(written_, wrap + record)) return shut_down();
    if (wrap != 0) {
      Header w{};
      w.kind = Kind::kWrap;
      std::memcpy(ring_.get() + at, &w, kHeaderBytes);
      written_ += wrap;
    }
    uint8_t* dst = ring_.get() + written_ % capacity_;
    std::memcpy(dst, &h, kHeaderBytes);
    if (big) {
      big_ = ev;
    } else {
      std::memcpy(dst + kHeaderBytes, ev.data(), ev.size());
    }
    written_ += record;
    events_read_.store(events_read_.load(kRelaxed) + 1, kRelaxed);
    if (big || after_block || ++unpublished_events_ >= kBatchEvents ||
        written_ - head_.load(kRelaxed) >= kBatchBytes) {
      PublishWritten();
    }
    // A big event is the source's own bytes, valid until its next read: wait until the
    // consumer is done with it (the ring empty again).
    if (big && !WaitUntilFree(written_, capacity_)) return shut_down();
    if (!MaybeHandToConsumer()) return shut_down();
  }
}

bool ReadAheadStream::MaybeHandToConsumer() {
  if (options_.direct_after_bursts == 0 || small_bursts_ < options_.direct_after_bursts) return true;
  PublishWritten();  // every event read goes to the consumer before the source does
  std::unique_lock<std::mutex> lock(mu_);
  // (seq_cst, after the Publish of every event read: a consumer that sees direct_ then sees them.)
  direct_.store(true, kSeqCst);
  hand_overs_.store(hand_overs_.load(kRelaxed) + 1, kRelaxed);
  consumer_cv_.notify_all();
  while (direct_.load(kSeqCst) && !shutdown_.load(kSeqCst)) reader_cv_.wait(lock);
  small_bursts_ = 0;
  burst_bytes_ = 0;
  return !shutdown_.load(kSeqCst);
}

bool ReadAheadStream::WaitUntilFree(uint64_t head, size_t bytes) {
  if (capacity_ - (head - tail_.load(kAcquire)) >= bytes) return !shutdown_.load(kAcquire);
  PublishWritten();  // the consumer frees room only in what it can see
  // Wait for a quarter of the ring at least: one wake-up per many events, not one per event.
  const size_t want = std::max(bytes, capacity_ / 4);
  reader_waits_.store(reader_waits_.load(kRelaxed) + 1, kRelaxed);
  std::unique_lock<std::mutex> lock(mu_);
  reader_wait_tail_.store(head + want - capacity_, kRelaxed);
  reader_waiting_.store(true, kSeqCst);
  while (capacity_ - (head - tail_.load(kSeqCst)) < want && !shutdown_.load(kSeqCst)) reader_cv_.wait(lock);
  reader_waiting_.store(false, kRelaxed);
  return !shutdown_.load(kSeqCst);
}

void ReadAheadStream::Publish(uint64_t head) {
  head_.store(head, kSeqCst);  // (seq_cst: ordered before the look at consumer_waiting_)
  WakeConsumer();
}

void ReadAheadStream::PublishWritten() {
  unpublished_events_ = 0;
  if (head_.load(kRelaxed) != written_) Publish(written_);
}

void ReadAheadStream::WakeConsumer() {
  if (!consumer_waiting_.load(kSeqCst)) return;
  std::lock_guard<std::mutex> lock(mu_);
  consumer_cv_.notify_one();
}

void ReadAheadStream::SourceWillBlock() {
  if (direct_reading_.load(kRelaxed)) {
    // The consumer's own read: it has consumed everything before it, as without a read-ahead.
    direct_blocked_ = true;
    if (on_caught_up_) on_caught_up_();
    return;
  }
  blocked_in_read_ = true;
  unpublished_events_ = 0;
  head_.store(written_, kSeqCst);  // once per burst: what was read goes out before the idle mark
  idle_at_.store(written_ + 1, kSeqCst);
  WakeConsumer();
}

void ReadAheadStream::Finish(Status s) {
  std::lock_guard<std::mutex> lock(mu_);
  end_ = std::move(s);
  ended_.store(true, kSeqCst);
  consumer_cv_.notify_all();
}

// ---- the consumer ------------------------------------------------------------

void ReadAheadStream::ReleaseConsumed() {
  unreleased_events_ = 0;
  if (tail_.load(kRelaxed) != consumed_) Release(consumed_);
}

void ReadAheadStream::Release(uint64_t tail) {
  tail_.store(tail, kSeqCst);  // (seq_cst: ordered before the look at reader_waiting_)
  if (!reader_waiting_.load(kSeqCst) || tail < reader_wait_tail_.load(kRelaxed)) return;
  std::lock_guard<std::mutex> lock(mu_);
  reader_cv_.notify_one();
}

Status ReadAheadStream::ReadDirect(std::string_view* event) {
  direct_blocked_ = false;
  direct_reading_.store(true, kRelaxed);
  Status s = source_->ReadEvent(event);
  direct_reading_.store(false, kRelaxed);
  if (!s.ok()) return s;
  direct_reads_.store(direct_reads_.load(kRelaxed) + 1, kRelaxed);
  checked_ = false;  // the decoder checks the CRC32
  if (direct_blocked_) direct_run_bytes_ = 0;
  direct_run_bytes_ += event->size();
  return Status::OK();
}

void ReadAheadStream::HandToReader() {
  std::lock_guard<std::mutex> lock(mu_);
  direct_.store(false, kSeqCst);
  direct_run_bytes_ = 0;
  hand_overs_.store(hand_overs_.load(kRelaxed) + 1, kRelaxed);
  reader_cv_.notify_all();
}

Status ReadAheadStream::ReadEvent(std::string_view* event) {
  // A backlog while reading directly: the reader takes the source back (the last event's view,
  // the source's own bytes, is no longer in use: this is the next read).
  if (direct_.load(kRelaxed) && direct_run_bytes_ >= options_.threaded_after_bytes) HandToReader();
  if (pending_release_ != 0) {
    consumed_ += pending_release_;
    pending_release_ = 0;
    if (++unreleased_events_ >= kBatchEvents || consumed_ - tail_.load(kRelaxed) >= kBatchBytes) ReleaseConsumed();
  }
  uint64_t tail = consumed_;
  for (;;) {
    const uint64_t head = head_.load(kAcquire);
    if (tail == head) {
      ReleaseConsumed();  // before any wait: a reader waiting for room sees it all
      const uint64_t idle = idle_at_.load(kAcquire);
      if (idle == head + 1 && idle != idle_seen_) {
        // Everything the source read before it said it would wait is consumed.
        idle_seen_ = idle;
        if (on_caught_up_) on_caught_up_();
        continue;
      }
      if (ended_.load(kAcquire)) {
        if (head_.load(kAcquire) != tail) continue;  // events published before the end come first
        return end_;
      }
      if (shutdown_.load(kAcquire)) return Status::Aborted("binlog read-ahead shut down");
      if (direct_.load(kSeqCst)) {
        if (head_.load(kSeqCst) != tail) continue;  // what the reader read before handing over comes first
        return ReadDirect(event);
      }
      std::unique_lock<std::mutex> lock(mu_);
      consumer_waiting_.store(true, kSeqCst);
      while (head_.load(kSeqCst) == tail && idle_at_.load(kSeqCst) == idle && !ended_.load(kSeqCst) &&
             !shutdown_.load(kSeqCst) && !direct_.load(kSeqCst)) {
        consumer_cv_.wait(lock);
      }
      consumer_waiting_.store(false, kRelaxed);
      continue;
    }
    const uint8_t* at = ring_.get() + tail % capacity_;
    Header h;
    std::memcpy(&h, at, kHeaderBytes);
    switch (h.kind) {
      case Kind::kWrap:
        tail += capacity_ - tail % capacity_;
        consumed_ = tail;
        ReleaseConsumed();
        continue;
      case Kind::kEvent:
        *event = std::string_view(reinterpret_cast<const char*>(at + kHeaderBytes), h.size);
        checked_ = h.checked != 0;
        pending_release_ = kHeaderBytes + Align8(h.size);
        return Status::OK();
      case Kind::kBig:
        *event = big_;
        checked_ = h.checked != 0;
        pending_release_ = kHeaderBytes;
        return Status::OK();
    }
    return Status::Corruption("binlog read-ahead: a record of unknown kind " +
                              std::to_string(static_cast<int>(h.kind)) + " at ring offset " +
                              std::to_string(tail % capacity_));
  }
}

}  // namespace canal::parser
