// SnapshotMerger: where a snapshot's chunks meet the binlog stream (library canal_snapshot_driver).
//
// It stands between the parser and the destination's sink (a parser::TransactionSink wrapping
// the sink), so it sees every transaction in stream order before the sink does, and it is the
// one place chunks go out, between two transactions. The rule that makes the result exact is
// ChunkWindow's (chunk_window.h); this class applies it across threads:
//
//   reader thread                              parse thread
//   OpenWindow(table)  -- window opens at the    OnTransaction(txn): for each open window of a
//                         position delivered,    table the txn changes, notes each changed key
//                         records changes        (and a DDL on the table); hands txn to the
//   read chunk at P (own connection)             sink; at its end, delivered = its end
//   Offer(chunk)       -- waits until the stream
//                         has delivered past P; rows the stream changed at or after P are left
//                         out; the rest go out as one chunk (ChunkOutput::PutChunk) at the
//                         delivered position, carrying the progress after it.
//
// A window that overflowed, or that saw a DDL on its table before P (the chunk may have been
// read with the old columns), makes Offer answer kRedo: the reader reads the chunk again.
//
// Keyless tables cannot drop a changed row by key, so their one consistent read must go out at
// exactly P: HoldStream stops the stream before the next transaction, the reader starts its read
// and learns P, ReleaseStreamTo(P) lets the stream deliver every transaction that begins before
// P (P is a transaction boundary) and no other, and once WaitStreamAt(P) returns the rows go out
// (EmitHeld) while the stream waits; ReleaseHold lets it go on.
//
// A keyless table's row events are left out of the stream until its read has gone out: the read
// at P holds every change before P, and a consumer cannot upsert a keyless row (so a row the
// stream delivered and the read then held would be there twice). A table is keyless when its
// TableProgress says so (the planner decides it with ChooseChunkKey before the stream starts).
//
// Progress: the merger keeps the snapshot's SnapshotProgress; each chunk that goes out advances
// its table (the chunk's last key, rows, done when exhausted), and the output stamps the new
// progress on the chunk's last entry and every entry after it (LogPosition::snapshot), so an ack
// makes it durable with the cursor. When every table is done the progress becomes null and
// `on_complete` runs (on the thread that emitted the last chunk).
//
// Threads: OnTransaction/OnIdle on the parse thread; everything else from reader threads. One
// mutex orders what goes to the sink, another guards the state and is never held while the sink
// waits for ring space; the parse thread does key work only for tables with an open window.
// Stop never waits for the sink, and wakes every waiter (kStopped).
#pragma once

#include <condition_variable>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/transaction.h"
#include "canal/snapshot/chunk_key.h"
#include "canal/snapshot/chunk_rows.h"
#include "canal/snapshot/chunk_window.h"
#include "canal/snapshot/snapshot_progress.h"

namespace canal::snapshot {

// One chunk's rows as they go out.
struct EmittedChunk {
  const binlog::TableMap* table = nullptr;  // names the table and columns
  std::span<const std::string_view> rows;  // RowData fields (RowWriter's bytes), in key order
  // When not empty: the same rows, every one of the chunk's, in their segments (rows at
  // [ChunkRows::kRoom, end) of each), whose buffers the output may take (swap out) instead of
  // copying the rows; the views above then point into buffers it took.
  std::span<ChunkSegment> segments;
  LogPosition at;                          // the stream boundary; `snapshot` = progress before
  std::shared_ptr<const std::string> progress_after;  // null once the snapshot is complete
  int64_t execute_time_ms = 0;
  bool begin = true, end = true;  // the chunk's TRANSACTIONBEGIN / TRANSACTIONEND (a keyless
                                  // table's one read goes out in pieces of one transaction)
};

// Where chunks go: the destination's sink (server/ adapts EntrySink), a recorder in tests.
class ChunkOutput {
 public:
  virtual ~ChunkOutput() = default;
  virtual Status PutChunk(const EmittedChunk& chunk) = 0;
  // Every entry put from now on carries `progress` (null: none).
  virtual void SetProgress(std::shared_ptr<const std::string> progress) = 0;
  // Waits until `bytes` more would be taken at once (the destination's ring has room).
  virtual Status WaitForRoom(uint64_t /*bytes*/) { return Status::OK(); }
};

struct MergerStats {
  uint64_t chunks = 0;        // chunks that went out
  uint64_t rows = 0;          // rows that went out
  uint64_t dropped_rows = 0;  // chunk rows the stream had changed after P
  uint64_t redone = 0;        // chunks read again (window overflowed, DDL)
  uint64_t suppressed_events = 0;  // stream row events of keyless tables before their read
  uint64_t tables_done = 0;
  uint64_t tables_total = 0;
  bool complete = false;
};

class SnapshotMerger final : public parser::TransactionSink {
 public:
  enum class OfferResult : uint8_t { kEmitted, kRedo, kStopped };
  using WindowId = uint64_t;

  // `inner` (the sink) and `output` must outlive the merger. `window_keys`/`window_bytes` bound
  // each window (SnapshotOptions::window_keys).
  SnapshotMerger(parser::TransactionSink* inner, ChunkOutput* output, size_t window_keys, size_t window_bytes);
  ~SnapshotMerger() override;

  // The snapshot to run (its tables' progress) and what to do when it completes. Before the
  // parser starts. A complete progress (every table done) completes at once.
  void Begin(SnapshotProgress progress, std::function<void()> on_complete);

  // Where the stream starts: the parser's resume point, when known before its first delivery.
  void SetStreamStart(const LogPosition& start);

  // parser::TransactionSink
  Status OnTransaction(const parser::Transaction& txn) override;
  void OnIdle(const LogPosition& position) override;

  // Reader side. OpenWindow waits until the stream has a position (never before the stream's
  // start is fixed, so no chunk is read at a P the stream will not pass through); false once
  // stopped. `ddl_generation` receives the table's count of DDLs delivered so far (a reader
  // whose table shape is older loads it again).
  bool OpenWindow(size_t table_index, const ChunkKey& key, WindowId* id, uint64_t* ddl_generation);
  void CloseWindow(WindowId id);
  // The chunk read in window `id` goes out once the stream passed its P (rows changed since
  // dropped), or must be read again. `table`: the columns naming its rows. The output may take
  // the chunk's segment buffers (EmittedChunk::segments).
  OfferResult Offer(WindowId id, ChunkRows& chunk, const binlog::TableMap& table, Status* error);

  // Keyless tables (see above).
  bool HoldStream();
  void ReleaseStreamTo(const LogPosition& p);
  bool WaitStreamAt(const LogPosition& p);
  // Rows of the held read: the first call opens the chunk's transaction, `last` closes it and
  // marks the table done.
  Status EmitHeld(size_t table_index, ChunkRows& rows, const binlog::TableMap& table, bool first, bool last);
  void ReleaseHold();
  // Before a reader reads a chunk of about `bytes`: waits until the output has room for it, so
  // a reader of huge rows holds the next one only once the last one was taken (a slow client
  // slows the snapshot, never grows its memory). false once stopped.
  bool WaitForRoom(uint64_t bytes);
  // DDLs delivered on the table so far.
  uint64_t DdlGeneration(size_t table_index) const;

  // A table that cannot be read (dropped since): done with no rows, so the snapshot completes.
  Status SkipTable(size_t table_index);

  // Tables requested while streaming (incremental snapshot): they join the snapshot under way,
  // or start a new one named `id` when the last one is complete. Returns their indexes.
  std::vector<size_t> AddTables(std::vector<TableProgress> tables, const std::string& id, int64_t started_ms);
  // Whether `schema`.`table` is pending or being read.
  bool Reading(std::string_view schema, std::string_view table) const;
  TableProgress Table(size_t table_index) const;
  int64_t progress_started_ms() const;

  void Stop();
  // Never waits for a chunk being sent (its own lock).
  MergerStats stats() const;
  SnapshotProgress progress() const;
  LogPosition delivered() const;

 private:
  struct Window;
  struct TableState;
  void Deliver(const LogPosition& p);
  void DeliverAt(std::string_view file, uint64_t position, uint32_t server_id, std::string_view gtid,
                 int64_t timestamp_ms, const std::shared_ptr<const std::string>& gtid_set);
  void PublishStats();
  bool SuppressesKeyless(const parser::Transaction& txn) const;
  bool IsPendingKeyless(const binlog::TableMap& t) const;
  const parser::Transaction& WithoutKeyless(const parser::Transaction& txn);
  void CountPendingKeyless();
  void NoteRows(const parser::TxEvent& e);
  void NoteDdl(const parser::TxEvent& e, const std::string& txn_file);
  Status PutKept(std::unique_lock<std::mutex>& lock, std::unique_lock<std::mutex>& out_lock, size_t table_index,
                 ChunkRows& chunk, bool all_kept, bool begin, bool end, bool done);
  void ApplyProgressLocked();
  void DeliveredTransaction(const parser::Transaction& txn);
  void Track();
  void Advance(size_t table_index, const ChunkRows& chunk, uint64_t rows_out, bool done,
                 std::shared_ptr<const std::string>* after);

  parser::TransactionSink* const inner_;
  ChunkOutput* const output_;
  const size_t window_keys_, window_bytes_;

  // Lock order out_mu_, then mu_. out_mu_ orders what goes to the sink (transactions, chunks)
  // and is held while the sink waits for ring space; mu_ guards the state below and is never
  // held while the sink works, so Stop and the readers' bookkeeping never wait for a full ring.
  std::mutex out_mu_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Whether a transaction must be looked at (a hold, a window, a snapshot not complete, progress
  // to hand over): set under mu_ (Track), read by the parse thread without it. While false a
  // transaction costs out_mu_ and the delivered position only.
  std::atomic<bool> tracking_{false};
  bool stopped_ = false;
  bool has_delivered_ = false;
  bool in_transaction_ = false;  // between the first and the last piece of a transaction
  LogPosition delivered_;        // end of the last transaction handed to the sink
  // Keyless hold.
  bool hold_ = false;
  bool hold_limit_known_ = false;
  LogPosition hold_limit_;
  bool stream_waiting_ = false;  // the parse thread waits at the hold...
  LogPosition waiting_at_;       // ...before the transaction that begins here

  SnapshotProgress progress_;
  std::shared_ptr<const std::string> progress_text_;
  bool progress_dirty_ = false;  // progress_text_ not yet handed to the output
  std::function<void()> on_complete_;
  std::vector<std::unique_ptr<TableState>> tables_;  // by progress_.tables index
  std::vector<std::unique_ptr<Window>> windows_;
  WindowId next_window_ = 1;
  MergerStats stats_;
  mutable std::mutex stats_mu_;  // guards public_stats_ (taken inside mu_, never around it)
  MergerStats public_stats_;

  // Parse-thread scratch (under mu_; filtered_ also read under out_mu_ alone).
  std::string current_file_;
  size_t pending_keyless_ = 0;    // keyless tables not done: their row events are left out
  parser::Transaction filtered_;  // a transaction without them (reused)
  binlog::RowsReader reader_;
  binlog::RowChange change_;
  KeyEncoder encoder_;
  // The open windows a rows event's table has: every entry of the table (a big table is read
  // in several key ranges, each an entry with windows of its own). Kept for its capacity.
  std::vector<Window*> noting_;
  // Emission scratch (under out_mu_).
  std::vector<std::string_view> kept_;
  const binlog::TableMap* current_table_ = nullptr;  // names kept_'s rows
};

}  // namespace canal::snapshot
