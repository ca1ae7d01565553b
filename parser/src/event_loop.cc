#include "canal/parser/event_loop.h"

#include <time.h>

#include <algorithm>

namespace canal::parser {

namespace {

// The loop is its counters' only writer: no locked read-modify-write (a full
// barrier on x86, three per event) for what readers load relaxed.
void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace

EventLoop::EventLoop(TransactionBuffer* buffer, TransactionSink* sink, LoopCounters* counters, LoopObserver* observer)
    : buffer_(buffer), sink_(sink), counters_(counters), observer_(observer) {}

LoopEnd EventLoop::Run(BinlogSource* source, binlog::EventDecoder* decoder, const std::atomic<bool>& stop,
                       Status* error) {
  static LoopObserver no_observer;
  LoopObserver* observer = observer_ != nullptr ? observer_ : &no_observer;
  SourceEvent se;
  uint64_t position = 0;  // end of the last event of the file
  for (;;) {
    Status s = source->Next(decoder, &se);
    if (stop.load(std::memory_order_relaxed)) return LoopEnd::kStopped;
    if (!s.ok()) {
      *error = std::move(s);
      return LoopEnd::kSource;
    }
    const binlog::Event& ev = se.event;
    if (!se.inner) {
      Bump(counters_->events);
      Bump(counters_->bytes, se.wire_bytes);
    }
    if (const auto* rot = ev.As<binlog::RotateEvent>()) {
      position = rot->position;  // where the next file's events begin
      continue;
    }
    if (ev.As<binlog::HeartbeatEvent>() != nullptr) {
      counters_->caught_up.store(true, std::memory_order_relaxed);
      position = se.end;
      observer->OnProgress(se.file, position, ev.header);
      if (!buffer_->in_transaction()) {
        LogPosition p;
        p.journal_name.assign(se.file);
        p.position = position;
        p.server_id = ev.header.server_id;
        sink_->OnIdle(p);
      }
      continue;
    }
    // The lag counts from changes in the stream: not from the FORMAT_DESCRIPTION
    // a dump opens with (it carries the file's creation time, which would make
    // a fresh start look hours behind until the first heartbeat).
    if (!se.inner && se.in_file && ev.header.timestamp != 0 &&
        ev.type() != binlog::EventType::kFormatDescription) {
      // (The coarse clock: a few ms of resolution is plenty here, and it costs a few ns per event.)
      timespec ts{};
      ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
      const int64_t read_ms = int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
      counters_->last_event_ms.store(std::min<int64_t>(int64_t{ev.header.timestamp} * 1000 + 999, read_ms),
                                     std::memory_order_relaxed);
      counters_->caught_up.store(false, std::memory_order_relaxed);
    }
    if (!se.inner) {
      s = observer->BeforeEvent(se);
      if (!s.ok()) {
        *error = std::move(s);
        return LoopEnd::kFailed;
      }
    }
    if (ev.As<binlog::RowsEvent>() != nullptr) Bump(counters_->rows_events);
    s = buffer_->Add(ev, *decoder, se.file, se.offset, se.end);
    if (!s.ok()) {
      *error = std::move(s);
      return LoopEnd::kFailed;
    }
    if (se.in_file) position = se.end;
    if (!decoder->has_pending_inner()) observer->OnProgress(se.file, position, ev.header);
  }
}

}  // namespace canal::parser
