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
// Threads: OnTransaction and OnIdle run on the parse thread; Put blocks while
// the store is full (back-pressure) and a stopped store makes OnTransaction
// return Aborted, which stops the parser. Entry bytes go through buffers the
// sink reuses: no allocation per row once warm.
#pragma once

#include "canal/schema/statement.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/transaction.h"
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
  // sink points them at the two filters above.
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
inline constexpr std::string_view kSnapshotPropKey = "snapshot";
inline constexpr std::string_view kSnapshotPropValue = "true";

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

  std::unique_ptr<PendingEmpty> pending_;
  int64_t last_advance_ms_ = 0;

  // Written by the parse thread only (Bump: no locked read-modify-write on
  // the hot path), read relaxed by stats() from any thread.
  std::atomic<uint64_t> transactions_{0}, pieces_{0}, entries_{0}, rows_entries_{0}, rows_{0}, filtered_events_{0},
      skipped_transactions_{0}, empty_markers_{0};
};

// The table a DDL statement is about: CREATE/ALTER/DROP/TRUNCATE/RENAME
// TABLE and CREATE/DROP INDEX ... ON. `default_schema` stands in when the name
// is not qualified. False (outputs untouched) for any other statement or a
// name it cannot read. The first table when a statement names several.
bool DdlTable(std::string_view sql, std::string_view default_schema, std::string* schema, std::string* table);
bool DdlTable(const canal::schema::StatementClass& c, std::string_view default_schema, std::string* schema,
              std::string* table);

}  // namespace canal::sink
