// TransactionBuffer: groups decoded binlog events into transactions.
//
// Fed every event of the stream in order (including the events inside a
// TRANSACTION_PAYLOAD), it recognises transaction boundaries the way both
// flavours write them — MySQL GTID + BEGIN ... XID/COMMIT, MariaDB GTID (which
// opens the group itself, or marks a standalone statement) ... XID/COMMIT, and
// GTID-less BEGIN ... COMMIT — and hands each finished transaction to the sink.
// A transaction that grows past a threshold goes out in pieces, cut only where
// the next event starts at a new offset (never inside a compressed payload).
//
// It also keeps the resume point: after a reconnect the stream restarts at the
// transaction boundary it reports and the buffer skips the events of a
// partly-delivered transaction that the sink has already seen. Not thread-safe;
// the parse thread owns it. No allocation per row: row bytes are copied into
// reusable chunks once per event. Memory is bounded by the piece thresholds,
// not the transaction: between pieces it keeps at most max_bytes of chunks;
// a chunk made for one oversized value is freed once its piece is delivered.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/gtid_state.h"
#include "canal/parser/transaction.h"

namespace canal::parser {

struct TransactionBufferOptions {
  // A piece is handed over once a transaction holds this many events...
  size_t max_events = 4096;
  // ...or this many bytes of rows and statements...
  size_t max_bytes = 8u << 20;
  // ...and, when set, the buffer's memory stays within this many bytes: a
  // limit that moves while the stream runs (the server's memory budget,
  // shared by its destinations). A piece is then cut once its bytes and its
  // events (sizeof(TxEvent) each) reach half of it, and chunks are a quarter
  // of it (64 KiB to 1 MiB), so chunks, list and the event that crosses the
  // line fit the rest (one larger event still comes whole). Must outlive the
  // buffer.
  const std::atomic<uint64_t>* shared_max_bytes = nullptr;
};

class TransactionBuffer {
 public:
  TransactionBuffer(TransactionSink* sink, TransactionBufferOptions options = {});
  ~TransactionBuffer();
  TransactionBuffer(const TransactionBuffer&) = delete;
  TransactionBuffer& operator=(const TransactionBuffer&) = delete;

  // One event, in stream order. `file` is the binlog file it is in; `offset`
  // and `end_offset` its place there (for events inside a payload, the
  // payload's). `decoder` is the one that decoded it (for shared table maps).
  // Errors come from the sink, or from an event sequence no server writes
  // (reported with file and offset).
  Status Add(const binlog::Event& event, const binlog::EventDecoder& decoder, std::string_view file,
             uint64_t offset, uint64_t end_offset);

  // Where to restart after a reconnect, given what the sink has accepted.
  const ResumePoint& resume_point() const { return resume_; }
  // Sets the resume point (start-up) and drops anything half-built; the next
  // events must come from a stream started at point.file:point.position.
  void ResetTo(const ResumePoint& point);
  // Drops anything half-built and prepares to skip what was delivered: call
  // before restarting the stream at resume_point().
  void ResetForReconnect() { ResetTo(resume_); }

  // The GTID state delivered so far (MariaDB): the parser starts it, transactions carry it.
  GtidStateTracker& gtid_state() { return gtid_state_; }
  const GtidStateTracker& gtid_state() const { return gtid_state_; }

  bool in_transaction() const;
  // Counters for status lines and tests.
  uint64_t transactions() const { return transactions_; }
  uint64_t pieces() const { return pieces_; }
  uint64_t skipped_events() const { return skipped_events_; }
  // Bytes held between pieces (copy chunks and the event list): bounded by
  // about max_bytes + 1 MiB whatever the size of a transaction or a value.
  size_t retained_bytes() const;

 private:
  enum class State : uint8_t { kIdle, kGroupOpened, kInTransaction };
  Status OpenGroup(const binlog::Event& event, std::string_view file, uint64_t offset, std::string_view gtid,
                   const binlog::MariaGtidEvent* maria = nullptr, const binlog::GtidEvent* mysql = nullptr);
  Status Deliver(bool last_piece, uint64_t end_offset);
  void SetGtidBase(const std::shared_ptr<const std::string>& base);
  TxEvent* Append(TxEventKind kind, const binlog::Event& event, uint64_t offset, uint64_t end_offset);
  std::string_view Copy(std::string_view bytes);
  // The shared limit now (SIZE_MAX without one), and the chunk size it gives.
  size_t SharedLimit() const;
  size_t ChunkSize() const;
  Status MaybeCut(uint64_t next_offset);
  // Empties the piece and gives back memory past the steady-state bound.
  void Recycle();

  TransactionSink* sink_;
  TransactionBufferOptions options_;
  State state_ = State::kIdle;
  Transaction txn_;
  size_t txn_bytes_ = 0;
  bool skipping_ = false;      // replaying the delivered part of a transaction
  uint64_t skip_until_ = 0;
  ResumePoint resume_;
  GtidStateTracker gtid_state_;
  // The open transaction's GTID, applied to the state once it is delivered whole.
  enum class GtidKind : uint8_t { kNone, kMariadb, kMysql } gtid_kind_ = GtidKind::kNone;
  uint32_t gtid_domain_ = 0, gtid_server_ = 0;
  uint64_t gtid_seq_ = 0;
  std::array<uint8_t, 16> gtid_sid_{};
  std::string gtid_tag_;  // assigned per transaction: keeps its capacity, no allocation
  int64_t gtid_gno_ = 0;
  uint64_t transactions_ = 0, pieces_ = 0, skipped_events_ = 0;

  // Chunked arena for statement text and row bytes: stable addresses, reused.
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t size = 0, used = 0;
  };
  std::vector<Chunk> chunks_;
  size_t chunk_index_ = 0;
};

}  // namespace canal::parser
