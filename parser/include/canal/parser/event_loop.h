// EventLoop: the parser's hot loop over a BinlogSource — every event into the
// TransactionBuffer (which hands whole transactions to the sink), heartbeats
// and idle points to TransactionSink::OnIdle, counters for status and lag.
//
// EventParser runs it over the replication socket (DumpSource); tests and
// tools run the same loop over binlog files (FileSource). It owns nothing: the
// decoder, buffer and counters belong to the caller and outlive Run(). No
// allocation per event. Not thread-safe; the counters may be read from any
// thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog_source.h"
#include "canal/parser/transaction.h"
#include "canal/parser/transaction_buffer.h"

namespace canal::parser {

// Updated by the loop without locks, summed over runs; one loop at a time
// writes them (plain stores: readers on other threads load them relaxed).
struct LoopCounters {
  std::atomic<uint64_t> events{0};       // events read (not counting those inside payloads)
  std::atomic<uint64_t> rows_events{0};  // rows events, inside payloads too
  std::atomic<uint64_t> bytes{0};        // bytes read from the source
  // When the last change event happened, ms since the epoch: its header time is whole seconds,
  // so the latest the event can have happened (the second's end, or when it was read if that
  // is earlier). The lag is never inflated by the second's truncation.
  std::atomic<int64_t> last_event_ms{0};
  std::atomic<bool> caught_up{false};    // a heartbeat came after the last change event
};

// Hooks of the loop's owner; both optional.
class LoopObserver {
 public:
  virtual ~LoopObserver() = default;
  // Before the buffer sees an event that is not inside a payload (schema
  // tracking). An error ends the loop (kFailed).
  virtual Status BeforeEvent(const SourceEvent& event) {
    (void)event;
    return Status::OK();
  }
  // After an event and the events of its payload went to the buffer, and on a
  // heartbeat: the stream is at `file`:`position` (the end of the last event
  // of the file).
  virtual void OnProgress(std::string_view file, uint64_t position, const binlog::EventHeader& header) {
    (void)file, (void)position, (void)header;
  }
};

enum class LoopEnd : uint8_t {
  kSource,   // the source failed or ended (NotFound); *error says which
  kFailed,   // the buffer, the sink or the observer refused an event
  kStopped,  // *stop became true
};

class EventLoop {
 public:
  EventLoop(TransactionBuffer* buffer, TransactionSink* sink, LoopCounters* counters,
            LoopObserver* observer = nullptr);

  // Reads `source` with `decoder` until it ends, fails, or `stop` is set.
  LoopEnd Run(BinlogSource* source, binlog::EventDecoder* decoder, const std::atomic<bool>& stop, Status* error);

 private:
  TransactionBuffer* buffer_;
  TransactionSink* sink_;
  LoopCounters* counters_;
  LoopObserver* observer_;
};

}  // namespace canal::parser
