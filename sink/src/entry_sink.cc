#include "canal/sink/entry_sink.h"

#include <time.h>

#include <charconv>
#include <utility>

namespace canal::sink {

namespace {

using parser::Transaction;
using parser::TxEvent;
using parser::TxEventKind;

// The only writer of a counter adds without a locked read-modify-write (on
// x86 a full barrier, several per transaction); readers load it relaxed.
void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// The XID as Canal writes it in TRANSACTIONEND (decimal), into `buf`.
std::string_view XidText(bool has_xid, uint64_t xid, char (&buf)[24]) {
  if (!has_xid) return {};
  const auto r = std::to_chars(buf, buf + sizeof buf, xid);
  return std::string_view(buf, static_cast<size_t>(r.ptr - buf));
}

// Read once per transaction, only to time the empty-transaction interval: the
// coarse clock (a few ms of resolution) costs a fraction of the precise one.
int64_t SteadyNowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

bool DdlTable(std::string_view sql, std::string_view default_schema, std::string* schema, std::string* table) {
  return DdlTable(canal::schema::ClassifyStatement(sql), default_schema, schema, table);
}

bool DdlTable(const canal::schema::StatementClass& c, std::string_view default_schema, std::string* schema,
              std::string* table) {
  if (c.kind != canal::schema::StatementKind::kDdl || c.table.empty()) return false;
  if (c.object != canal::schema::DdlObject::kTable && c.object != canal::schema::DdlObject::kIndex) return false;
  schema->assign(c.db.empty() ? default_schema : std::string_view(c.db));
  table->assign(c.table);
  return true;
}

// ---- options --------------------------------------------------------------

Status EntrySinkOptions::CompileFilters(std::string_view regex, std::string_view black_regex, std::string_view field,
                                        std::string_view black_field) {
  std::unique_ptr<TableFilter> tables;
  CANAL_RETURN_IF_ERROR(TableFilter::Create(regex, black_regex, &tables));
  std::unique_ptr<FieldFilter> keep, drop;
  if (!field.empty()) CANAL_RETURN_IF_ERROR(FieldFilter::Create(field, "canal.instance.filter.field", &keep));
  if (!black_field.empty()) {
    CANAL_RETURN_IF_ERROR(FieldFilter::Create(black_field, "canal.instance.filter.black.field", &drop));
  }
  table_filter = std::move(tables);
  field_filter = std::move(keep);
  black_field_filter = std::move(drop);
  return Status::OK();
}

// ---- the sink ---------------------------------------------------------------

// The last transaction that put nothing, for the empty pair that stands for it.
struct EntrySink::PendingEmpty {
  uint64_t count = 0;  // skipped since a position last advanced
  std::string file, gtid;
  std::shared_ptr<const std::string> gtid_base;  // the skipped transaction's (LogPosition::gtid_set)
  uint64_t begin_offset = 0, commit_offset = 0, end_offset = 0;
  uint32_t server_id = 0, begin_time = 0, commit_time = 0;
  uint64_t thread_id = 0;
  bool has_xid = false;
  uint64_t xid = 0;
};

namespace {

EntryBuilderOptions BuilderOptions(const EntrySinkOptions& o) {
  EntryBuilderOptions b = o.entries;
  b.fields = o.field_filter.get();
  b.black_fields = o.black_field_filter.get();
  return b;
}

}  // namespace

EntrySink::EntrySink(EntrySinkOptions options, store::RingStore* store)
    : options_(std::move(options)),
      store_(store),
      builder_(BuilderOptions(options_)),
      instance_filter_(options_.table_filter),
      active_filter_(options_.table_filter),
      pending_(std::make_unique<PendingEmpty>()) {
  last_advance_ms_ = options_.clock_ms ? options_.clock_ms() : SteadyNowMs();
}

EntrySink::~EntrySink() = default;

Status EntrySink::SetSubscriptionFilter(std::string_view regex) {
  std::shared_ptr<const TableFilter> next = instance_filter_;
  if (!regex.empty()) {
    std::unique_ptr<TableFilter> f;
    CANAL_RETURN_IF_ERROR(TableFilter::Create(regex, instance_filter_ ? instance_filter_->exclude_text() : "", &f,
                                              "the client's subscription filter"));
    next = std::move(f);
  }
  std::lock_guard<std::mutex> lock(filter_mu_);
  active_filter_ = std::move(next);
  filter_version_.fetch_add(1, std::memory_order_release);
  return Status::OK();
}

std::shared_ptr<const TableFilter> EntrySink::CurrentFilter() const {
  std::lock_guard<std::mutex> lock(filter_mu_);
  return active_filter_;
}

void EntrySink::RefreshFilter() {
  if (const uint64_t v = filter_version_.load(std::memory_order_acquire); v != txn_filter_version_) {
    txn_filter_ = CurrentFilter();
    txn_filter_version_ = v;
  }
}

bool EntrySink::Keeps(const TableFilter* filter, std::string_view schema, std::string_view table) const {
  return filter == nullptr || filter->Accepts(schema, table);
}

EntrySinkStats EntrySink::stats() const {
  EntrySinkStats s;
  s.transactions = transactions_.load(std::memory_order_relaxed);
  s.pieces = pieces_.load(std::memory_order_relaxed);
  s.entries = entries_.load(std::memory_order_relaxed);
  s.rows_entries = rows_entries_.load(std::memory_order_relaxed);
  s.rows = rows_.load(std::memory_order_relaxed);
  s.filtered_events = filtered_events_.load(std::memory_order_relaxed);
  s.skipped_transactions = skipped_transactions_.load(std::memory_order_relaxed);
  s.empty_markers = empty_markers_.load(std::memory_order_relaxed);
  s.snapshot_chunks = snapshot_chunks_.load(std::memory_order_relaxed);
  s.snapshot_entries = snapshot_entries_.load(std::memory_order_relaxed);
  s.snapshot_rows = snapshot_rows_put_.load(std::memory_order_relaxed);
  return s;
}

void EntrySink::FitNext(size_t need) {
  // Best fit: the smallest buffer that holds `need` bytes, else the largest.
  auto better = [need](size_t c, size_t best) {
    const bool fits = c >= need;
    if (fits != (best >= need)) return fits;
    return fits ? c < best : c > best;
  };
  std::string* best = &next_;
  for (std::string& s : spare_) {
    if (better(s.capacity(), best->capacity())) best = &s;
  }
  if (best != &next_) {
    next_.swap(*best);  // next_'s buffer becomes a spare, unless it is big
    constexpr size_t kMaxSpareBytes = 1u << 20;
    if (best->capacity() > kMaxSpareBytes) std::string().swap(*best);
  }
  if (next_.capacity() >= need) return;
  // None fits: room for a quarter more, so that the next slightly larger
  // entry does not make the writer double the buffer; within what the ring
  // keeps for any entry when `need` fits in that (past it the ring would drop
  // the buffer at its next small entry).
  const size_t keep = store_->spare_capacity();
  size_t want = need + need / 4;
  if (need <= keep) want = std::min(want, keep);
  next_.clear();  // nothing to copy: the writer overwrites it all
  next_.reserve(want);
}

void EntrySink::NoteBuilt(size_t* need) const {
  // The largest recent entry of the kind; back down when entries get much
  // smaller (another table).
  const size_t size = next_.size();
  if (size > *need || size < *need / 2) *need = size;
}

void EntrySink::SetContext(const Transaction& txn, const TxEvent& e) {
  LogPosition& p = ctx_.position;
  p.journal_name.assign(txn.file);  // assign: the buffers keep their capacity
  p.position = e.offset;
  p.server_id = e.server_id;
  p.gtid.assign(txn.gtid);
  p.timestamp_ms = int64_t{e.timestamp} * 1000;
  p.included = false;
  p.transaction_begin = 0;
  ctx_.event_length = e.end_offset - e.offset;
  next_event_end_ = e.end_offset;
}

void EntrySink::SetMeta(store::EntryKind kind) {
  next_meta().kind = kind;
  next_meta().safe_resume_point = false;
  next_meta().rows = 0;
  LogPosition& p = next_meta().position;
  p.journal_name.assign(ctx_.position.journal_name);
  p.position = ctx_.position.position;
  p.server_id = ctx_.position.server_id;
  p.gtid.assign(ctx_.position.gtid);
  p.timestamp_ms = ctx_.position.timestamp_ms;
  p.included = false;
  p.transaction_begin = 0;
  // Assigned only when it changed: a shared_ptr copy is two atomic operations.
  if (p.snapshot != snapshot_progress_) p.snapshot = snapshot_progress_;
  if (p.gtid_set != gtid_base_) p.gtid_set = gtid_base_;
}

// The store keeps its own copy of what is put: an entry buffer that grew for
// one huge value (a 64 MiB BLOB) is given back at once instead of being kept
// for reuse, so the sink does not hold a second copy of the biggest row seen.
void EntrySink::ReleaseIfOversized(std::string* entry) {
  constexpr size_t kKeepBytes = 4u << 20;
  if (entry->capacity() > kKeepBytes) std::string().swap(*entry);
}

Status EntrySink::Stage(const Transaction& txn, store::EntryKind kind) {
  SetMeta(kind);
  if (staged_full_) {
    // The staged entry ends its event: a resume right after it is exact.
    const bool safe = staged_event_end_ != next_event_end_;
    if (safe) {
      LogPosition& p = staged_meta().position;
      staged_meta().safe_resume_point = true;
      p.position = staged_event_end_;
      p.included = true;
      p.transaction_begin = txn.begin_offset;
    }
    CANAL_RETURN_IF_ERROR(store_->Put(&staged_, staged_meta()));
    ReleaseIfOversized(&staged_);  // the buffer the ring handed back
    Bump(entries_);
    if (safe) pending_->count = 0;  // the clock: by this call's last put
  }
  std::swap(staged_, next_);
  staged_meta_index_ ^= 1;  // the metas swap roles (no copy of their strings)
  staged_event_end_ = next_event_end_;
  staged_full_ = true;
  return Status::OK();
}

Status EntrySink::PutStagedAsSafe(const Transaction& txn) {
  LogPosition& p = staged_meta().position;
  staged_meta().safe_resume_point = true;
  p.position = txn.end_offset;
  if (txn.last_piece) {
    p.included = false;  // resume at the transaction's end
    p.transaction_begin = 0;
  } else {
    p.included = true;  // everything up to the piece's end was consumed
    p.transaction_begin = txn.begin_offset;
  }
  staged_full_ = false;
  CANAL_RETURN_IF_ERROR(store_->Put(&staged_, staged_meta()));
  ReleaseIfOversized(&staged_);  // the buffer the ring handed back
  Bump(entries_);
  NoteSafePut();
  return Status::OK();
}

// A safe put resets the skipped count; the clock is read once per
// OnTransaction, by its last put (PutStagedAsSafe), which every call that put
// anything ends with.
void EntrySink::NoteSafePut() {
  pending_->count = 0;
  last_advance_ms_ = options_.clock_ms ? options_.clock_ms() : SteadyNowMs();
}

Status EntrySink::EnsureBegin(const Transaction& txn) {
  if (begin_put_ || !has_begin_ || options_.event_types.DropsTransactionEntries()) return Status::OK();
  SetContext(txn, begin_event_);
  FitNext(small_need_);
  CANAL_RETURN_IF_ERROR(builder_.BeginEntry(ctx_, begin_event_.thread_id, &next_));
  NoteBuilt(&small_need_);
  CANAL_RETURN_IF_ERROR(Stage(txn, store::EntryKind::kTransactionBegin));
  begin_put_ = true;
  return Status::OK();
}

Status EntrySink::OnTransaction(const Transaction& txn) {
  Bump(pieces_);
  if (gtid_base_ != txn.gtid_base) gtid_base_ = txn.gtid_base;
  staged_full_ = false;  // nothing carries over from a call that failed
  if (txn.first_piece() || !open_) {
    // A continuation without its first piece is a restart inside a
    // transaction: its BEGIN went out before (a cursor can only stand inside
    // a transaction after something of it was put), so its END must follow.
    RefreshFilter();
    has_begin_ = !txn.first_piece();
    begin_put_ = !txn.first_piece();
    open_ = true;
  }
  const TableFilter* filter = txn_filter_.get();
  std::string ddl_schema, ddl_table;

  for (const TxEvent& e : txn.events) {
    switch (e.kind) {
      case TxEventKind::kBegin:
        has_begin_ = true;
        begin_event_.offset = e.offset;
        begin_event_.end_offset = e.end_offset;
        begin_event_.timestamp = e.timestamp;
        begin_event_.server_id = e.server_id;
        begin_event_.thread_id = e.thread_id;
        break;
      case TxEventKind::kRows: {
        const binlog::TableMap& table = *e.table;
        if (!Keeps(filter, table.db, table.table) || options_.event_types.DropsRows(e.rows.info.kind)) {
          Bump(filtered_events_);
          break;
        }
        CANAL_RETURN_IF_ERROR(EnsureBegin(txn));
        SetContext(txn, e);
        uint64_t rows = 0;
        FitNext(rows_need_);
        CANAL_RETURN_IF_ERROR(builder_.RowsEntry(ctx_, e.rows, &next_, &rows));
        NoteBuilt(&rows_need_);
        CANAL_RETURN_IF_ERROR(Stage(txn, store::EntryKind::kOther));
        staged_meta().rows = static_cast<uint32_t>(rows);  // Stage moved the entry into staged_
        Bump(rows_entries_);
        Bump(rows_, rows);
        break;
      }
      case TxEventKind::kQuery: {
        const canal::schema::StatementClass cls = canal::schema::ClassifyStatement(e.sql);
        if (options_.event_types.DropsKind(cls.kind)) {
          Bump(filtered_events_);
          break;
        }
        std::string_view schema = e.db, table;
        if (DdlTable(cls, e.db, &ddl_schema, &ddl_table)) {
          if (!Keeps(filter, ddl_schema, ddl_table)) {
            Bump(filtered_events_);
            break;
          }
          schema = ddl_schema;  // Canal names the DDL's own schema and table
          table = ddl_table;
        }
        CANAL_RETURN_IF_ERROR(EnsureBegin(txn));
        SetContext(txn, e);
        FitNext(e.sql.size() + small_need_);  // the statement, and about a BEGIN's header
        CANAL_RETURN_IF_ERROR(builder_.QueryEntry(ctx_, schema, e.sql, &next_, table));
        const bool is_ddl = cls.kind == canal::schema::StatementKind::kDdl;
        CANAL_RETURN_IF_ERROR(Stage(txn, is_ddl ? store::EntryKind::kDdl : store::EntryKind::kOther));
        break;
      }
      case TxEventKind::kCommit: {
        if (!begin_put_ || options_.event_types.DropsTransactionEntries()) break;
        SetContext(txn, e);
        char id[24];
        FitNext(small_need_);
        CANAL_RETURN_IF_ERROR(builder_.EndEntry(ctx_, XidText(e.has_xid, e.xid, id), &next_));
        NoteBuilt(&small_need_);
        CANAL_RETURN_IF_ERROR(Stage(txn, store::EntryKind::kTransactionEnd));
        break;
      }
    }
  }

  const bool put_safe = staged_full_;
  if (staged_full_) CANAL_RETURN_IF_ERROR(PutStagedAsSafe(txn));
  if (!txn.last_piece) return Status::OK();
  open_ = false;
  Bump(transactions_);
  if (put_safe) return Status::OK();
  NoteSkipped(txn);
  const int64_t now = options_.clock_ms ? options_.clock_ms() : SteadyNowMs();
  if (pending_->count >= options_.empty_transaction_threshold ||
      now - last_advance_ms_ >= options_.empty_transaction_interval_ms) {
    return PutEmptyMarker();
  }
  return Status::OK();
}

void EntrySink::NoteSkipped(const Transaction& txn) {
  Bump(skipped_transactions_);
  PendingEmpty& p = *pending_;
  ++p.count;
  p.file.assign(txn.file);
  p.gtid.assign(txn.gtid);
  if (p.gtid_base != txn.gtid_base) p.gtid_base = txn.gtid_base;
  p.begin_offset = txn.begin_offset;
  p.end_offset = txn.end_offset;
  p.server_id = txn.server_id;
  p.begin_time = txn.timestamp;
  p.thread_id = has_begin_ && txn.first_piece() ? begin_event_.thread_id : 0;
  p.has_xid = false;
  p.commit_offset = txn.begin_offset;
  p.commit_time = txn.timestamp;
  if (!txn.events.empty()) {
    const TxEvent& last = txn.events.back();
    p.commit_offset = last.offset;
    p.commit_time = last.timestamp;
    p.has_xid = last.kind == TxEventKind::kCommit && last.has_xid;
    p.xid = last.xid;
  }
}

Status EntrySink::PutEmptyMarker() {
  PendingEmpty& p = *pending_;
  if (p.count == 0) return Status::OK();
  LogPosition& pos = ctx_.position;
  pos.journal_name.assign(p.file);
  pos.position = p.begin_offset;
  pos.server_id = p.server_id;
  pos.gtid.assign(p.gtid);
  // The marker's entries carry the last skipped transaction's base (nothing is put after them
  // before the next transaction sets its own).
  gtid_base_ = p.gtid_base;
  pos.timestamp_ms = int64_t{p.begin_time} * 1000;
  pos.included = false;
  pos.transaction_begin = 0;
  ctx_.event_length = 0;
  CANAL_RETURN_IF_ERROR(builder_.BeginEntry(ctx_, p.thread_id, &next_));
  SetMeta(store::EntryKind::kTransactionBegin);
  CANAL_RETURN_IF_ERROR(store_->Put(&next_, next_meta()));
  Bump(entries_);

  pos.position = p.commit_offset;
  pos.timestamp_ms = int64_t{p.commit_time} * 1000;
  char id[24];
  CANAL_RETURN_IF_ERROR(builder_.EndEntry(ctx_, XidText(p.has_xid, p.xid, id), &next_));
  SetMeta(store::EntryKind::kTransactionEnd);
  next_meta().safe_resume_point = true;
  next_meta().position.position = p.end_offset;  // resume at the skipped transaction's end
  CANAL_RETURN_IF_ERROR(store_->Put(&next_, next_meta()));
  Bump(entries_);
  Bump(empty_markers_);
  NoteSafePut();
  return Status::OK();
}

void EntrySink::OnIdle(const LogPosition& position) {
  (void)position;  // the pair stands for the last skipped transaction, whose GTID and XID it carries
  if (open_ || pending_->count == 0) return;
  // A stopped store fails the next OnTransaction too; nothing to report here.
  PutEmptyMarker().PermitUncheckedError();
}

// ---- snapshot chunks --------------------------------------------------------

Status EntrySink::PutSnapshotChunk(const SnapshotChunkOut& chunk) {
  if (chunk.table == nullptr) return Status::InvalidArgument("a snapshot chunk names no table");
  const binlog::TableMap& t = *chunk.table;
  const auto what = [&] { return "the snapshot chunk of `" + t.db + "`.`" + t.table + "`"; };
  if (open_) {
    return Status::InvalidArgument(what() + " came inside a transaction; chunks go out only between transactions");
  }
  for (const std::string_view row : chunk.rows) {
    if (row.empty()) return Status::InvalidArgument(what() + " has an empty row (not a RowData field)");
  }
  for (const SnapshotSegment& g : chunk.segments) {
    if (g.buffer == nullptr || g.rows == 0 || g.rows_begin >= g.rows_end || g.rows_end > g.buffer->size()) {
      return Status::InvalidArgument(what() + " has a segment without rows in its buffer");
    }
  }
  if (store_->stopped()) return Status::Aborted(what() + ": the store is stopped");
  staged_full_ = false;  // nothing carries over from a call that failed
  RefreshFilter();
  const bool dropped =
      !Keeps(txn_filter_.get(), t.db, t.table) || options_.event_types.DropsRows(binlog::RowsKind::kWrite);
  // A piece that closes a transaction an earlier piece opened puts its END even with no rows.
  const bool closes_open_piece = !chunk.begin && chunk.end && snapshot_piece_open_;
  if (!dropped && (!chunk.rows.empty() || !chunk.segments.empty() || closes_open_piece)) {
    CANAL_RETURN_IF_ERROR(PutSnapshotEntries(chunk));
    NoteSafePut();  // `at` is at or after every transaction skipped so far
    Bump(snapshot_chunks_);
  }
  SetSnapshotProgress(chunk.progress_after);
  return Status::OK();
}

Status EntrySink::PutSnapshotEntries(const SnapshotChunkOut& chunk) {
  const binlog::TableMap& t = *chunk.table;
  LogPosition& p = ctx_.position;  // the header's: the boundary, the read's time, no GTID
  p.journal_name.assign(chunk.at.journal_name);
  p.position = chunk.at.position;
  p.server_id = chunk.at.server_id;
  p.gtid.clear();
  p.timestamp_ms = chunk.execute_time_ms;
  p.included = false;
  p.transaction_begin = 0;
  ctx_.event_length = 0;
  const HeaderProp marker[] = {{kSnapshotPropKey, kSnapshotPropValue}};
  const bool boundaries = !options_.event_types.DropsTransactionEntries();
  // A piece in the middle of a keyless read goes out without its own BEGIN (the first piece's
  // opened the transaction) and, unless it is the last, without END.
  const bool begin = boundaries && (chunk.begin || !snapshot_piece_open_);
  const bool end = boundaries && chunk.end;
  if (begin) {
    FitNext(small_need_);
    CANAL_RETURN_IF_ERROR(builder_.BeginEntry(ctx_, 0, marker, &next_));
    NoteBuilt(&small_need_);
    CANAL_RETURN_IF_ERROR(
        PutSnapshotEntry(chunk.at, store::EntryKind::kTransactionBegin, 0, chunk.at.snapshot, &next_));
  }
  for (size_t k = 0; k < chunk.segments.size(); ++k) {
    const bool last = k + 1 == chunk.segments.size() && !boundaries && chunk.end;
    CANAL_RETURN_IF_ERROR(PutSnapshotSegment(chunk, chunk.segments[k], last, marker));
  }
  const std::span<const std::string_view> rows = chunk.segments.empty() ? chunk.rows : std::span<const std::string_view>();
  for (size_t i = 0; i < rows.size();) {
    // Rows up to the byte bound (at least one). Views that follow each other
    // in memory are one run, wrapped without a copy of their own.
    size_t j = i, bytes = 0;
    bool one_run = true;
    while (j < rows.size() && (j == i || bytes + rows[j].size() <= kSnapshotEntryRowBytes)) {
      one_run = one_run && (j == i || rows[j].data() == rows[j - 1].data() + rows[j - 1].size());
      bytes += rows[j].size();
      ++j;
    }
    std::string_view group(rows[i].data(), bytes);
    if (!one_run) {
      snapshot_rows_.clear();
      for (size_t k = i; k < j; ++k) snapshot_rows_.append(rows[k]);
      group = snapshot_rows_;
    }
    const auto count = static_cast<uint32_t>(j - i);
    // Built only once the ring can take it: a huge row is never held both as this entry and as
    // the unacked one before it.
    CANAL_RETURN_IF_ERROR(store_->WaitForRoom(bytes));
    FitNext(bytes + small_need_ + t.db.size() + t.table.size() + 64);  // the rows, and a header with names
    CANAL_RETURN_IF_ERROR(builder_.SnapshotRowsEntry(ctx_, t, group, count, marker, &next_));
    const bool last = j == rows.size() && !boundaries && chunk.end;
    CANAL_RETURN_IF_ERROR(PutSnapshotEntry(chunk.at, store::EntryKind::kOther, count,
                                           last ? chunk.progress_after : chunk.at.snapshot, &next_));
    Bump(snapshot_rows_put_, count);
    i = j;
  }
  snapshot_piece_open_ = begin || (snapshot_piece_open_ && !end);
  if (end) {
    FitNext(small_need_);
    CANAL_RETURN_IF_ERROR(builder_.EndEntry(ctx_, {}, marker, &next_));
    NoteBuilt(&small_need_);
    CANAL_RETURN_IF_ERROR(
        PutSnapshotEntry(chunk.at, store::EntryKind::kTransactionEnd, 0, chunk.progress_after, &next_));
    snapshot_piece_open_ = false;
  }
  return Status::OK();
}

Status EntrySink::PutSnapshotSegment(const SnapshotChunkOut& chunk, const SnapshotSegment& segment, bool last,
                                     std::span<const HeaderProp> marker) {
  const binlog::TableMap& t = *chunk.table;
  const size_t bytes = segment.rows_end - segment.rows_begin;
  // As for views: built only once the ring can take it.
  CANAL_RETURN_IF_ERROR(store_->WaitForRoom(bytes));
  const std::shared_ptr<const std::string>& progress = last ? chunk.progress_after : chunk.at.snapshot;
  size_t entry_begin = 0;
  Status s = builder_.SnapshotRowsEntryInPlace(ctx_, t, segment.buffer, segment.rows_begin, segment.rows_end,
                                               segment.rows, marker, &entry_begin);
  if (s.ok()) {
    CANAL_RETURN_IF_ERROR(
        PutSnapshotEntry(chunk.at, store::EntryKind::kOther, segment.rows, progress, segment.buffer, entry_begin));
  } else if (s.code() == Status::Code::kNotFound) {
    // Too little room in front (names longer than the room allows): the rows are copied.
    FitNext(bytes + small_need_ + t.db.size() + t.table.size() + 64);
    const std::string_view rows(segment.buffer->data() + segment.rows_begin, bytes);
    CANAL_RETURN_IF_ERROR(builder_.SnapshotRowsEntry(ctx_, t, rows, segment.rows, marker, &next_));
    CANAL_RETURN_IF_ERROR(PutSnapshotEntry(chunk.at, store::EntryKind::kOther, segment.rows, progress, &next_));
  } else {
    return s;
  }
  Bump(snapshot_rows_put_, segment.rows);
  return Status::OK();
}

Status EntrySink::PutSnapshotEntry(const LogPosition& at, store::EntryKind kind, uint32_t rows,
                                   const std::shared_ptr<const std::string>& progress, std::string* bytes,
                                   size_t offset) {
  store::EntryMeta& m = next_meta();
  m.kind = kind;
  m.safe_resume_point = true;  // every entry: resuming at `at` with its progress repeats at most this chunk
  m.rows = rows;
  LogPosition& p = m.position;
  p.journal_name.assign(at.journal_name);
  p.position = at.position;
  p.server_id = at.server_id;
  p.gtid.assign(at.gtid);
  p.timestamp_ms = at.timestamp_ms;
  p.included = at.included;
  p.transaction_begin = at.transaction_begin;
  if (p.snapshot != progress) p.snapshot = progress;
  if (p.gtid_set != at.gtid_set) p.gtid_set = at.gtid_set;
  CANAL_RETURN_IF_ERROR(store_->Put(bytes, offset, m));
  if (bytes == &next_) ReleaseIfOversized(&next_);  // the buffer the ring handed back
  Bump(entries_);
  Bump(snapshot_entries_);
  return Status::OK();
}

}  // namespace canal::sink
