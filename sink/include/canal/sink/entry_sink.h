// EntrySink: the stage between the parser and a destination's RingStore. It
// turns each transaction (or piece of a large one) into Canal entries,
// filtered as the instance and its client ask, and puts them in the store.
//
// Entries of one transaction, in order:
//   TRANSACTIONBEGIN  when it has a BEGIN, and only once something of it is kept
//   ROWDATA           one per rows event whose table passes the filters
//   ROWDATA (query)   one per statement: DDL (isDdl), or any other statement
//   TRANSACTIONEND    when it has a commit and its BEGIN entry went out (XID as id)
// A standalone statement (DDL) is its entry alone, as Canal sends it.
//
// Filters: a rows event is kept when the table filter accepts its schema.table
// and the event-type switches keep its kind. A statement is dropped by the
// query.dml/ddl/dcl switches; a DDL naming a table (CREATE/ALTER/DROP/
// TRUNCATE/RENAME TABLE, CREATE/DROP INDEX ... ON) is also dropped when the
// table filter refuses that table (Canal matches DDL by its schema/table);
// other statements are not matched against the table filter.
// transaction.entry drops the BEGIN/END entries of every transaction.
// A client's subscription filter replaces the instance's include regex (the
// black list stays), as in Canal; SetSubscriptionFilter may be called from any
// thread and takes effect at the next transaction.
//
// Positions: every entry carries, besides its header's binlog offset, an
// EntryMeta position. An entry after which a resume neither repeats nor skips
// is a safe resume point whose position a cursor can store:
//   end of a transaction:   {file, transaction end, included=false} — resume at it
//   inside a transaction:   {file, end of the entry's event, included=true,
//                            transaction_begin = where the transaction began}
// Every entry is one, except those followed by an entry of the same event
// (the events inside one MySQL compressed payload share their offsets), so a
// client's ack moves its cursor to the very entry it acked, and a restart
// resumes inside a transaction without repeating what was acked.
// (parser/resume_from_cursor.h turns either form back into a start position.)
//
// Empty transactions (nothing kept) put nothing, but so that the cursors of a
// client whose filter matches nothing still move on a busy server, an empty
// TRANSACTIONBEGIN + TRANSACTIONEND pair standing for the last skipped
// transaction (its offsets, GTID and XID; the END is the safe point at its
// end) goes out once `empty_transaction_threshold` transactions were skipped
// or `empty_transaction_interval_ms` passed since a position last advanced,
// whichever comes first, and on OnIdle (a heartbeat) when any are pending.
// Like Canal's, this pair goes out even under transaction.entry: without it
// such a cursor could never move.
//
// Snapshot chunks: PutSnapshotChunk puts the rows a snapshot read from a
// table (rendered by the driver's own EntryBuilder::SnapshotRow) as one
// transaction of INSERTs at a stream boundary: TRANSACTIONBEGIN, ROWDATA
// entries of at most kSnapshotEntryRowBytes of rows, TRANSACTIONEND, every one
// marked with the header prop kSnapshotPropKey=kSnapshotPropValue. Every one
// is a safe resume point at the boundary; all but the last carry the
// snapshot's progress before the chunk (a resume there reads the chunk again:
// an unacked chunk is repeated, never lost), the last the progress after it.
// From then on every entry the sink puts carries that progress
// (SetSnapshotProgress), so whichever ack moves a cursor past the chunk also
// stores the progress with it.
//
// Threads: OnTransaction and OnIdle run on the parse thread; Put blocks while
// the store is full (back-pressure) and a stopped store makes OnTransaction
// return Aborted, which stops the parser. PutSnapshotChunk and
// SetSnapshotProgress are called on the same thread, or by one thread at a
// time serialised with OnTransaction/OnIdle, and only between transactions:
// never between the pieces of a large one (the sink holds nothing staged
// between OnTransaction calls, and a chunk inside a transaction would split
// it). Entry bytes go through buffers the sink reuses: no allocation per row
// once warm.
#pragma once

#include "canal/schema/statement.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/parser/transaction.h"
#include "canal/proto/snapshot_marker.h"
#include "canal/sink/entry_builder.h"
#include "canal/sink/event_type_filter.h"
#include "canal/sink/table_filter.h"
#include "canal/store/ring_store.h"

namespace canal::sink {

struct EntrySinkOptions {
  // canal.instance.filter.regex + canal.instance.filter.black.regex; null
  // keeps every table.
  std::shared_ptr<const TableFilter> table_filter;
  // canal.instance.filter.field / canal.instance.filter.black.field; null
  // keeps every column.
  std::shared_ptr<const FieldFilter> field_filter;
  std::shared_ptr<const FieldFilter> black_field_filter;
  // canal.instance.filter.query.* / dml.* / transaction.entry
  EventTypeFilter event_types;
  // How values are written. Its `fields` / `black_fields` are ignored: the
  // sink points them at the two filters above. A snapshot driver renders rows
  // with an EntryBuilder of these options pointed the same way, so its rows
  // are the bytes the sink would write.
  EntryBuilderOptions entries;

  // Empty-transaction pair: at most this often (milliseconds since a
  // position last advanced)...
  int64_t empty_transaction_interval_ms = 5000;
  // ...or once this many transactions were skipped, whichever comes first.
  // 0 or 1: a pair for every empty transaction.
  uint64_t empty_transaction_threshold = 8192;

  // Monotonic milliseconds; empty means std::chrono::steady_clock. For tests.
  std::function<int64_t()> clock_ms;

  // Compiles the four filter settings with the existing filter classes
  // ("" = no patterns). InvalidArgument naming the key and pattern.
  Status CompileFilters(std::string_view regex, std::string_view black_regex, std::string_view field,
                        std::string_view black_field);
};

// The header prop on every entry of a snapshot chunk (BEGIN, each ROWDATA,
// END): how a client tells a table's existing rows from the stream's inserts.
// Defined in proto/ so that mq/ reads the same constants.
using canal::proto::kSnapshotPropKey;
using canal::proto::kSnapshotPropValue;
// Rows (RowData bytes) of one snapshot ROWDATA entry at most; a larger row is
// an entry of its own. Like a rows event's entry, it keeps batches and the
// client's buffers near the stream's sizes.
inline constexpr size_t kSnapshotEntryRowBytes = size_t{256} << 10;

// Rows of a snapshot chunk rendered into a buffer of their own with room in
// front (EntryBuilder::SnapshotRowAt): `rows` RowData fields at
// [rows_begin, rows_end) of *buffer. The sink writes the entry's prefix into
// the room and moves the buffer into the ring: the rows are never copied.
// *buffer is left with another buffer (the ring's spare) to render into next.
struct SnapshotSegment {
  std::string* buffer = nullptr;
  size_t rows_begin = 0, rows_end = 0;
  uint32_t rows = 0;
};

// A snapshot chunk as the sink puts it (PutSnapshotChunk).
struct SnapshotChunkOut {
  const binlog::TableMap* table = nullptr;  // names the rows' table and columns
  // RowData fields, each as EntryBuilder::SnapshotRow appended it. Views that
  // follow each other in memory (one buffer) are copied once, into the entry.
  std::span<const std::string_view> rows;
  // When not empty, the same rows as `rows`, in segments the sink may take
  // (one entry each): used instead of `rows`, without a copy.
  std::span<const SnapshotSegment> segments;
  // The stream boundary the chunk goes out at: file, end offset of the last
  // transaction handed to OnTransaction (at or after every one of them),
  // included=false, server id, gtid; its `snapshot` is the progress before
  // this chunk.
  LogPosition at;
  std::shared_ptr<const std::string> progress_after;  // the progress once this chunk is acked
  int64_t execute_time_ms = 0;  // header executeTime of the chunk's entries (when it was read)
  // Whether this call opens (TRANSACTIONBEGIN) and closes (TRANSACTIONEND) the chunk's
  // transaction: a keyless table's one read goes out in pieces of one transaction, the first
  // with begin, the last with end (which puts its END even with no rows of its own).
  bool begin = true, end = true;
};

// What the sink has done, for metrics and tests (relaxed counters).
struct EntrySinkStats {
  uint64_t transactions = 0;          // complete transactions seen (last pieces)
  uint64_t pieces = 0;                // every OnTransaction call
  uint64_t entries = 0;               // entries put
  uint64_t rows_entries = 0;          // ROWDATA entries of rows events
  uint64_t rows = 0;                  // table rows in those entries (Canal's put_rows)
  uint64_t filtered_events = 0;       // rows events and statements dropped by a filter
  uint64_t skipped_transactions = 0;  // transactions that put nothing
  uint64_t empty_markers = 0;         // empty BEGIN/END pairs put
  uint64_t snapshot_chunks = 0;       // snapshot chunks that put entries
  uint64_t snapshot_entries = 0;      // their entries (BEGIN, ROWDATA, END; also in `entries`)
  uint64_t snapshot_rows = 0;         // their rows (not in `rows`)
};

class EntrySink final : public parser::TransactionSink {
 public:
  // `store` must outlive the sink.
  EntrySink(EntrySinkOptions options, store::RingStore* store);
  ~EntrySink() override;
  EntrySink(const EntrySink&) = delete;
  EntrySink& operator=(const EntrySink&) = delete;

  // Puts the entries of `txn`. Errors: Aborted once the store is stopped;
  // a row that does not decode (naming file, offset and table).
  Status OnTransaction(const parser::Transaction& txn) override;

  // A heartbeat while no transaction is open: puts the empty pair for the
  // skipped transactions, if any are pending (a store error is left for the
  // next OnTransaction to report).
  void OnIdle(const LogPosition& position) override;

  // A client's subscription filter: a non-empty `regex` replaces the
  // instance's include regex (its black regex still applies); "" goes back to
  // the instance's. InvalidArgument (the filter in force stays) for a bad
  // pattern. Any thread.
  Status SetSubscriptionFilter(std::string_view regex);

  // Puts a snapshot chunk (see "Snapshot chunks" above) and then holds
  // SetSnapshotProgress(chunk.progress_after). Nothing is put, the progress
  // still moves, when the chunk has no rows (the caller dropped them all), the
  // table filter refuses its table or the dml.insert switch drops inserts;
  // without BEGIN/END (transaction.entry) the last ROWDATA carries the
  // progress after. InvalidArgument for a null table, an empty row view, or a
  // call inside a transaction; Aborted once the store is stopped (the
  // progress then stays). Only between transactions.
  Status PutSnapshotChunk(const SnapshotChunkOut& chunk);

  // From now on every entry the sink puts carries `progress` as its meta
  // position's `snapshot` (null: none). Only between transactions.
  void SetSnapshotProgress(std::shared_ptr<const std::string> progress) { snapshot_progress_ = std::move(progress); }
  // Waits until the ring could take an entry of `bytes` at once (RingStore::WaitForRoom); on
  // the thread that puts, as PutSnapshotChunk.
  Status WaitForRoom(uint64_t bytes) { return store_->WaitForRoom(bytes); }

  EntrySinkStats stats() const;

 private:
  struct PendingEmpty;

  std::shared_ptr<const TableFilter> CurrentFilter() const;
  // Before an entry is built in next_: the best fit of next_ and the spare
  // buffers for `need` bytes (see spare_), reserved with headroom when none
  // holds it.
  void FitNext(size_t need);
  // After an entry is built in next_: the bytes the next entry of its kind
  // will need.
  void NoteBuilt(size_t* need) const;
  bool Keeps(const TableFilter* filter, std::string_view schema, std::string_view table) const;
  // txn_filter_ as the subscription now says (the lock only when it changed).
  void RefreshFilter();
  void SetContext(const parser::Transaction& txn, const parser::TxEvent& e);
  void SetMeta(store::EntryKind kind);
  // Puts the staged entry (if any) and stages the one just built in next_.
  Status Stage(const parser::Transaction& txn, store::EntryKind kind);
  Status PutStagedAsSafe(const parser::Transaction& txn);
  static void ReleaseIfOversized(std::string* entry);
  Status EnsureBegin(const parser::Transaction& txn);
  Status PutEmptyMarker();
  void NoteSafePut();
  void NoteSkipped(const parser::Transaction& txn);
  Status PutSnapshotEntries(const SnapshotChunkOut& chunk);
  // Puts a snapshot entry: a safe resume point at `at` carrying `progress`. The entry is in
  // *bytes (from `offset`; next_ unless a segment's buffer).
  Status PutSnapshotEntry(const LogPosition& at, store::EntryKind kind, uint32_t rows,
                          const std::shared_ptr<const std::string>& progress, std::string* bytes, size_t offset = 0);
  // One ROWDATA entry of a segment's rows, made in its buffer when the prefix fits the room.
  Status PutSnapshotSegment(const SnapshotChunkOut& chunk, const SnapshotSegment& segment, bool last,
                            std::span<const HeaderProp> marker);

  const EntrySinkOptions options_;
  store::RingStore* const store_;
  EntryBuilder builder_;
  std::shared_ptr<const TableFilter> instance_filter_;

  mutable std::mutex filter_mu_;
  std::shared_ptr<const TableFilter> active_filter_;  // guarded by filter_mu_
  // Bumped (under filter_mu_) when active_filter_ changes, so the parse thread
  // takes the lock only then, not once per transaction.
  std::atomic<uint64_t> filter_version_{0};

  // Parse-thread state.
  std::shared_ptr<const TableFilter> txn_filter_;  // read once per transaction
  uint64_t txn_filter_version_ = ~uint64_t{0};     // filter_version_ when it was read (none yet)
  bool open_ = false;          // a piece went by and the last piece has not
  bool has_begin_ = false;     // the transaction has a BEGIN event
  bool begin_put_ = false;     // its TRANSACTIONBEGIN went out
  parser::TxEvent begin_event_;  // offsets, time, thread of the BEGIN (no views kept)

  EntryContext ctx_;
  // The metas of next_ and staged_; Stage swaps their roles by the index.
  store::EntryMeta metas_[2];
  unsigned staged_meta_index_ = 0;
  store::EntryMeta& next_meta() { return metas_[staged_meta_index_ ^ 1]; }
  store::EntryMeta& staged_meta() { return metas_[staged_meta_index_]; }
  std::string next_, staged_;
  bool staged_full_ = false;
  uint64_t next_event_end_ = 0, staged_event_end_ = 0;  // end offsets of the entries' events

  // Buffers kept between entries. Every moving Put hands back the buffer of
  // whatever entry last used the slot (a small BEGIN/END as often as a
  // ROWDATA), so each entry is built in the one of next_ and these that best
  // fits recent entries of its kind: big buffers stay with big entries.
  static constexpr size_t kSpareBuffers = 3;
  std::string spare_[kSpareBuffers];
  size_t rows_need_ = 0;   // bytes of a recent ROWDATA entry (the largest)
  size_t small_need_ = 0;  // bytes of a recent TRANSACTIONBEGIN/END entry

  // The snapshot's progress every entry carries (SetSnapshotProgress); the
  // metas copy it only when it changed, so no reference count moves per entry
  // but the ring's own copy (none while null).
  std::shared_ptr<const std::string> snapshot_progress_;
  // The GTID state base SetMeta stamps (LogPosition::gtid_set): the transaction being put's,
  // or the skipped one's a marker stands for.
  std::shared_ptr<const std::string> gtid_base_;
  std::string snapshot_rows_;  // a snapshot entry's rows, when their views are not one run of memory

  bool snapshot_piece_open_ = false;  // a keyless read's transaction is open (PutSnapshotChunk)
  std::unique_ptr<PendingEmpty> pending_;
  int64_t last_advance_ms_ = 0;

  // Written by the parse thread only (Bump: no locked read-modify-write on
  // the hot path), read relaxed by stats() from any thread.
  std::atomic<uint64_t> transactions_{0}, pieces_{0}, entries_{0}, rows_entries_{0}, rows_{0}, filtered_events_{0},
      skipped_transactions_{0}, empty_markers_{0}, snapshot_chunks_{0}, snapshot_entries_{0}, snapshot_rows_put_{0};
};

// The table a DDL statement is about: CREATE/ALTER/DROP/TRUNCATE/RENAME
// TABLE and CREATE/DROP INDEX ... ON. `default_schema` stands in when the name
// is not qualified. False (outputs untouched) for any other statement or a
// name it cannot read. The first table when a statement names several.
bool DdlTable(std::string_view sql, std::string_view default_schema, std::string* schema, std::string* table);
bool DdlTable(const canal::schema::StatementClass& c, std::string_view default_schema, std::string* schema,
              std::string* table);

}  // namespace canal::sink
