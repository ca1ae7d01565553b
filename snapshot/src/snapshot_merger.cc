#include "canal/snapshot/snapshot_merger.h"

#include <algorithm>

#include "canal/schema/statement.h"
#include "canal/snapshot/snapshot_render.h"

namespace canal::snapshot {

struct SnapshotMerger::Window {
  WindowId id = 0;
  size_t table = 0;
  ChunkKey key;
  ChunkWindow window;
  bool broken = false;             // a stream row's key could not be made: read again
  std::vector<LogPosition> ddls;   // DDLs on the table delivered while open

  Window(WindowId i, size_t t, ChunkKey k, const LogPosition& at, size_t keys, size_t bytes)
      : id(i), table(t), key(std::move(k)), window(at, keys, bytes) {}
};

struct SnapshotMerger::TableState {
  uint64_t ddl_generation = 0;
  std::vector<Window*> windows;
};

SnapshotMerger::SnapshotMerger(parser::TransactionSink* inner, ChunkOutput* output, size_t window_keys,
                               size_t window_bytes)
    : inner_(inner), output_(output), window_keys_(window_keys), window_bytes_(window_bytes) {}

SnapshotMerger::~SnapshotMerger() = default;

void SnapshotMerger::Begin(SnapshotProgress progress, std::function<void()> on_complete) {
  std::function<void()> done;
  {
    std::lock_guard<std::mutex> out(out_mu_);  // free: the parser has not started
    std::lock_guard<std::mutex> lock(mu_);
    progress_ = std::move(progress);
    on_complete_ = std::move(on_complete);
    tables_.clear();
    for (size_t i = 0; i < progress_.tables.size(); ++i) tables_.push_back(std::make_unique<TableState>());
    stats_.tables_total = progress_.tables.size();
    stats_.tables_done = progress_.TablesDone();
    stats_.complete = progress_.Complete();
    CountPendingKeyless();
    progress_text_ = stats_.complete ? nullptr : progress_.EncodeShared();
    output_->SetProgress(progress_text_);
    PublishStats();
    Track();
    if (stats_.complete && !progress_.tables.empty()) done = on_complete_;
  }
  if (done) done();
}

void SnapshotMerger::SetStreamStart(const LogPosition& start) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_delivered_ && !start.empty()) Deliver(start);
}

void SnapshotMerger::Deliver(const LogPosition& p) {
  DeliverAt(p.journal_name, p.position, p.server_id, p.gtid, p.timestamp_ms, p.gtid_set);
}

// Under mu_: the stream has delivered up to (file, position); never moves back.
void SnapshotMerger::DeliverAt(std::string_view file, uint64_t position, uint32_t server_id, std::string_view gtid,
                               int64_t timestamp_ms, const std::shared_ptr<const std::string>& gtid_set) {
  if (!has_delivered_ || !StreamBefore(file, position, delivered_.journal_name, delivered_.position)) {
    delivered_.journal_name.assign(file);
    delivered_.position = position;
    delivered_.server_id = server_id;
    delivered_.gtid.assign(gtid);
    delivered_.timestamp_ms = timestamp_ms;
    delivered_.included = false;
    delivered_.transaction_begin = 0;
    if (delivered_.gtid_set != gtid_set) delivered_.gtid_set = gtid_set;
    has_delivered_ = true;
  }
  cv_.notify_all();
}

void SnapshotMerger::NoteRows(const parser::TxEvent& e) {
  const binlog::TableMap& t = *e.table;
  // Which tracked entries: windows are few (one per reader), so a scan beats a map here. A
  // table read in key ranges is several entries, and a change may move a row from one range
  // to another: every entry's windows note it.
  noting_.clear();
  for (size_t i = 0; i < progress_.tables.size(); ++i) {
    if (tables_[i]->windows.empty()) continue;
    const TableProgress& tp = progress_.tables[i];
    if (tp.table == t.table && tp.schema == t.db) {
      noting_.insert(noting_.end(), tables_[i]->windows.begin(), tables_[i]->windows.end());
    }
  }
  if (noting_.empty()) return;
  const std::vector<Window*>* windows = &noting_;
  LogPosition at;
  at.journal_name = current_file_;
  at.position = e.offset;
  reader_.Reset(e.rows);
  for (;;) {
    bool done = false;
    Status s = reader_.Next(&change_, &done);
    if (!s.ok()) {
      for (Window* w : *windows) w->broken = true;  // the sink reports the event itself
      return;
    }
    if (done) return;
    for (Window* w : *windows) {
      for (int image = 0; image < 2; ++image) {
        const bool has = image == 0 ? change_.has_before : change_.has_after;
        if (!has) continue;
        const binlog::RowImage& img = image == 0 ? change_.before : change_.after;
        encoder_.Clear();
        if (!AppendStreamKey(t, img.values, w->key, &encoder_).ok()) {
          w->broken = true;
          continue;
        }
        w->window.NoteChange(encoder_.key(), at);
      }
    }
  }
}

void SnapshotMerger::NoteDdl(const parser::TxEvent& e, const std::string& txn_file) {
  const schema::StatementClass c = schema::ClassifyStatement(e.sql);
  if (c.kind != schema::StatementKind::kDdl || !schema::MayChangeColumns(c)) return;
  const std::string_view db = c.db.empty() ? e.db : std::string_view(c.db);
  // A statement that names no table we can read (or RENAME, which names several) counts for
  // every table: reading a chunk again is never wrong.
  const bool every = c.table.empty() || c.verb == schema::DdlVerb::kRename;
  LogPosition at;
  at.journal_name = txn_file;
  at.position = e.offset;
  for (size_t i = 0; i < progress_.tables.size(); ++i) {
    const TableProgress& tp = progress_.tables[i];
    if (!every && !(tp.table == c.table && tp.schema == db)) continue;
    ++tables_[i]->ddl_generation;
    for (Window* w : tables_[i]->windows) w->ddls.push_back(at);
  }
}

Status SnapshotMerger::OnTransaction(const parser::Transaction& txn) {
  if (!tracking_.load(std::memory_order_acquire)) {
    // No snapshot, window, hold or progress to hand over: only the delivered position is kept.
    // A snapshot begun meanwhile misses nothing here: this transaction is in the binlog
    // already, so it commits before any chunk's P, and its DDL before any shape is loaded.
    std::lock_guard<std::mutex> out(out_mu_);
    CANAL_RETURN_IF_ERROR(inner_->OnTransaction(txn));
    std::lock_guard<std::mutex> lock(mu_);
    DeliveredTransaction(txn);
    return Status::OK();
  }
  {
    // A keyless read holds the stream: only transactions that begin before its P go by. The
    // wait is outside out_mu_: the held read goes out (EmitHeld) while the stream waits here.
    std::unique_lock<std::mutex> lock(mu_);
    if (!in_transaction_ && hold_) {
      LogPosition begin;
      begin.journal_name = txn.file;
      begin.position = txn.begin_offset;
      while (hold_ && !stopped_ && !(hold_limit_known_ && StreamBefore(begin, hold_limit_))) {
        stream_waiting_ = true;
        waiting_at_ = begin;
        cv_.notify_all();
        cv_.wait(lock);
      }
    }
    stream_waiting_ = false;
  }
  // Noting the transaction's keys and delivering it happen under out_mu_, so a chunk goes out
  // either before the transaction was noted or after it was delivered, never in between.
  std::lock_guard<std::mutex> out(out_mu_);
  bool suppress = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!windows_.empty() || !stats_.complete) {
      current_file_.assign(txn.file);
      for (const parser::TxEvent& e : txn.events) {
        if (e.kind == parser::TxEventKind::kRows && !windows_.empty()) {
          NoteRows(e);
        } else if (e.kind == parser::TxEventKind::kQuery) {
          NoteDdl(e, txn.file);
        }
      }
    }
    ApplyProgressLocked();
    suppress = SuppressesKeyless(txn);
    if (suppress) WithoutKeyless(txn);  // filtered_ is the parse thread's, read below unlocked
  }
  // mu_ is free while the sink works: it may wait for a full ring, and Stop must not wait for it.
  Status s = suppress ? inner_->OnTransaction(filtered_) : inner_->OnTransaction(txn);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  DeliveredTransaction(txn);
  return Status::OK();
}

// Under mu_: the sink took `txn` (a piece of it, or its last).
void SnapshotMerger::DeliveredTransaction(const parser::Transaction& txn) {
  in_transaction_ = !txn.last_piece;
  if (!txn.last_piece) return;
  // Not through a LogPosition made per transaction, which would allocate its file name.
  DeliverAt(txn.file, txn.end_offset, txn.server_id, txn.gtid, int64_t{txn.timestamp} * 1000, txn.gtid_base);
}

// Under mu_: whether the parse thread must take the slow path (see tracking_). Called after
// every change of what it reads.
void SnapshotMerger::Track() {
  tracking_.store(hold_ || !windows_.empty() || !stats_.complete || progress_dirty_ || pending_keyless_ != 0,
                  std::memory_order_release);
}

// Under out_mu_ and mu_: progress set off the emission path (a snapshot begun, tables added or
// skipped) reaches the output before the next entry goes out.
void SnapshotMerger::ApplyProgressLocked() {
  if (!progress_dirty_) return;
  progress_dirty_ = false;
  output_->SetProgress(progress_text_);
  Track();
}

// Whether `txn` changes a keyless table whose read has not gone out: its one read at P holds
// every change before P, and a consumer cannot tell a repeated keyless row from a second one.
bool SnapshotMerger::SuppressesKeyless(const parser::Transaction& txn) const {
  if (pending_keyless_ == 0) return false;
  for (const parser::TxEvent& e : txn.events) {
    if (e.kind == parser::TxEventKind::kRows && IsPendingKeyless(*e.table)) return true;
  }
  return false;
}

bool SnapshotMerger::IsPendingKeyless(const binlog::TableMap& t) const {
  for (const TableProgress& tp : progress_.tables) {
    if (tp.keyless && tp.state != TableSnapshotState::kDone && tp.table == t.table && tp.schema == t.db) return true;
  }
  return false;
}

const parser::Transaction& SnapshotMerger::WithoutKeyless(const parser::Transaction& txn) {
  filtered_.file = txn.file;
  filtered_.begin_offset = txn.begin_offset;
  filtered_.end_offset = txn.end_offset;
  filtered_.gtid = txn.gtid;
  filtered_.server_id = txn.server_id;
  filtered_.timestamp = txn.timestamp;
  filtered_.piece_index = txn.piece_index;
  filtered_.last_piece = txn.last_piece;
  filtered_.events.clear();
  for (const parser::TxEvent& e : txn.events) {
    if (e.kind == parser::TxEventKind::kRows && IsPendingKeyless(*e.table)) {
      ++stats_.suppressed_events;
      continue;
    }
    filtered_.events.push_back(e);
  }
  return filtered_;
}

void SnapshotMerger::CountPendingKeyless() {
  pending_keyless_ = 0;
  for (const TableProgress& tp : progress_.tables) pending_keyless_ += tp.keyless && tp.state != TableSnapshotState::kDone;
}

void SnapshotMerger::OnIdle(const LogPosition& position) {
  std::lock_guard<std::mutex> out(out_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!in_transaction_) Deliver(position);
    ApplyProgressLocked();
  }
  inner_->OnIdle(position);
}

bool SnapshotMerger::OpenWindow(size_t table_index, const ChunkKey& key, WindowId* id, uint64_t* ddl_generation) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stopped_ || has_delivered_; });
  if (stopped_ || table_index >= tables_.size()) return false;
  auto w = std::make_unique<Window>(next_window_++, table_index, key, delivered_, window_keys_, window_bytes_);
  *id = w->id;
  *ddl_generation = tables_[table_index]->ddl_generation;
  tables_[table_index]->windows.push_back(w.get());
  windows_.push_back(std::move(w));
  Track();
  return true;
}

void SnapshotMerger::CloseWindow(WindowId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(windows_.begin(), windows_.end(), [id](const auto& w) { return w->id == id; });
  if (it == windows_.end()) return;
  auto& list = tables_[(*it)->table]->windows;
  list.erase(std::remove(list.begin(), list.end(), it->get()), list.end());
  windows_.erase(it);
  Track();
}

void SnapshotMerger::Advance(size_t table_index, const ChunkRows& chunk, uint64_t rows_out, bool done,
                               std::shared_ptr<const std::string>* after) {
  TableProgress& t = progress_.tables[table_index];
  if (!chunk.last_key.empty()) t.after = chunk.last_key;
  t.rows += rows_out;
  if (done && t.state != TableSnapshotState::kDone) {
    t.state = TableSnapshotState::kDone;
    ++stats_.tables_done;
  } else if (!done) {
    t.state = TableSnapshotState::kReading;
  }
  stats_.complete = progress_.Complete();
  *after = stats_.complete ? nullptr : progress_.EncodeShared();
  CountPendingKeyless();
  PublishStats();
}

SnapshotMerger::OfferResult SnapshotMerger::Offer(WindowId id, ChunkRows& chunk, const binlog::TableMap& table,
                                                  Status* error) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = std::find_if(windows_.begin(), windows_.end(), [id](const auto& w) { return w->id == id; });
  if (it == windows_.end()) {
    *error = Status::InvalidArgument("no such snapshot window");
    return OfferResult::kStopped;
  }
  Window* w = it->get();
  w->window.SetSnapshotPoint(chunk.snapshot);
  cv_.wait(lock, [&] { return stopped_ || (has_delivered_ && w->window.Passed(delivered_)); });
  // The decision and the chunk's put go under out_mu_ (taken before mu_), so no transaction is
  // delivered between them. The window stays open meanwhile (the delivered position only moves
  // on, so it has still passed P).
  lock.unlock();
  std::unique_lock<std::mutex> out(out_mu_);
  lock.lock();
  const auto close = [&] {
    auto& list = tables_[w->table]->windows;
    list.erase(std::remove(list.begin(), list.end(), w), list.end());
    windows_.erase(std::find_if(windows_.begin(), windows_.end(), [id](const auto& x) { return x->id == id; }));
    Track();
  };
  if (stopped_) {
    close();
    return OfferResult::kStopped;
  }
  bool ddl_before = false;
  for (const LogPosition& d : w->ddls) ddl_before = ddl_before || StreamBefore(d, chunk.snapshot);
  if (w->broken || w->window.overflowed() || ddl_before) {
    close();
    ++stats_.redone;
    PublishStats();
    return OfferResult::kRedo;
  }
  current_table_ = &table;
  kept_.clear();
  uint64_t dropped = 0;
  chunk.ForEachRow([&](std::string_view row, std::string_view key) {
    if (w->window.Drops(key)) {
      ++dropped;
    } else {
      kept_.push_back(row);
    }
  });
  const size_t table_index = w->table;
  close();
  stats_.dropped_rows += dropped;
  Status s = PutKept(lock, out, table_index, chunk, dropped == 0, true, true, chunk.exhausted);
  if (!s.ok()) {
    *error = std::move(s);
    return OfferResult::kStopped;
  }
  return OfferResult::kEmitted;
}

// Sends kept_ (rows of `table_index`) at the delivered position and advances the table's
// progress: to the chunk's last key (done when `done`), or, for a piece of a held read that is
// not its last (`end` false), not at all. Called under out_mu_ and mu_; mu_ is free while the
// output works (it may wait for a full ring), and both are free when on_complete runs (when
// that completed the snapshot).
Status SnapshotMerger::PutKept(std::unique_lock<std::mutex>& lock, std::unique_lock<std::mutex>& out_lock,
                               size_t table_index, ChunkRows& chunk, bool all_kept, bool begin, bool end,
                               bool done) {
  EmittedChunk out;
  out.table = current_table_;
  out.rows = kept_;
  if (all_kept) out.segments = std::span<ChunkSegment>(chunk.segments.data(), chunk.used_segments);
  out.at = delivered_;
  out.at.snapshot = progress_text_;
  out.execute_time_ms = chunk.read_ms;
  out.begin = begin;
  out.end = end;
  if (end) {
    Advance(table_index, chunk, kept_.size(), done, &out.progress_after);
  } else {
    progress_.tables[table_index].state = TableSnapshotState::kReading;
    out.progress_after = progress_text_;
  }
  progress_text_ = out.progress_after;
  progress_dirty_ = false;  // the chunk's put sets it
  lock.unlock();
  Status s = output_->PutChunk(out);
  lock.lock();
  Track();
  if (!s.ok()) return s;
  stats_.rows += kept_.size();
  if (end) ++stats_.chunks;
  PublishStats();
  std::function<void()> complete = end && stats_.complete ? on_complete_ : nullptr;
  lock.unlock();
  out_lock.unlock();
  if (complete) complete();
  return Status::OK();
}

bool SnapshotMerger::HoldStream() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stopped_ || (has_delivered_ && !hold_); });
  if (stopped_) return false;
  hold_ = true;
  hold_limit_known_ = false;
  Track();
  return true;
}

void SnapshotMerger::ReleaseStreamTo(const LogPosition& p) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_limit_ = p;
  hold_limit_known_ = true;
  cv_.notify_all();
}

bool SnapshotMerger::WaitStreamAt(const LogPosition& p) {
  std::unique_lock<std::mutex> lock(mu_);
  // There once everything before P went by: the stream delivered up to P, or it waits at a
  // transaction that begins at or after P (events between, such as a ROTATE, deliver nothing).
  cv_.wait(lock, [&] {
    return stopped_ || (has_delivered_ && !StreamBefore(delivered_, p)) ||
           (stream_waiting_ && !StreamBefore(waiting_at_, p));
  });
  return !stopped_;
}

Status SnapshotMerger::EmitHeld(size_t table_index, ChunkRows& rows, const binlog::TableMap& table, bool first,
                                bool last) {
  std::unique_lock<std::mutex> out(out_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  if (stopped_) return Status::Aborted("the snapshot was stopped");
  kept_.clear();
  rows.ForEachRow([&](std::string_view row, std::string_view) { kept_.push_back(row); });
  current_table_ = &table;
  return PutKept(lock, out, table_index, rows, true, first, last, true);
}

void SnapshotMerger::ReleaseHold() {
  std::lock_guard<std::mutex> lock(mu_);
  hold_ = false;
  hold_limit_known_ = false;
  Track();
  cv_.notify_all();
}

bool SnapshotMerger::WaitForRoom(uint64_t bytes) {
  if (bytes == 0) return true;
  std::lock_guard<std::mutex> out(out_mu_);  // the output is the emitting thread's
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return false;
  }
  return output_->WaitForRoom(bytes).ok();
}

uint64_t SnapshotMerger::DdlGeneration(size_t table_index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_index < tables_.size() ? tables_[table_index]->ddl_generation : 0;
}

Status SnapshotMerger::SkipTable(size_t table_index) {
  std::unique_lock<std::mutex> lock(mu_);
  if (table_index >= progress_.tables.size()) return Status::InvalidArgument("no such snapshot table");
  ChunkRows none;
  std::shared_ptr<const std::string> after;
  Advance(table_index, none, 0, true, &after);
  progress_text_ = after;
  progress_dirty_ = true;
  Track();
  std::function<void()> done = stats_.complete ? on_complete_ : nullptr;
  lock.unlock();
  if (done) done();
  return Status::OK();
}

std::vector<size_t> SnapshotMerger::AddTables(std::vector<TableProgress> tables, const std::string& id,
                                              int64_t started_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stats_.complete) {
    // A new snapshot: the last one's tables are done and no reader holds their indexes.
    progress_ = SnapshotProgress();
    progress_.id = id;
    progress_.started_ms = started_ms;
    tables_.clear();
    stats_ = MergerStats();
  }
  std::vector<size_t> added;
  for (TableProgress& t : tables) {
    added.push_back(progress_.tables.size());
    progress_.tables.push_back(std::move(t));
    tables_.push_back(std::make_unique<TableState>());
  }
  stats_.tables_total = progress_.tables.size();
  stats_.complete = progress_.Complete();
  progress_text_ = stats_.complete ? nullptr : progress_.EncodeShared();
  CountPendingKeyless();
  PublishStats();
  progress_dirty_ = true;
  Track();
  return added;
}

bool SnapshotMerger::Reading(std::string_view schema, std::string_view table) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const TableProgress& t : progress_.tables) {
    if (t.state != TableSnapshotState::kDone && t.schema == schema && t.table == table) return true;
  }
  return false;
}

TableProgress SnapshotMerger::Table(size_t table_index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_index < progress_.tables.size() ? progress_.tables[table_index] : TableProgress();
}

int64_t SnapshotMerger::progress_started_ms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return progress_.started_ms;
}

void SnapshotMerger::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  cv_.notify_all();
}

// Under mu_: the copy stats() reads, so that a status page never waits for a chunk that waits
// for a full ring.
void SnapshotMerger::PublishStats() {
  std::lock_guard<std::mutex> lock(stats_mu_);
  public_stats_ = stats_;
}

MergerStats SnapshotMerger::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return public_stats_;
}

SnapshotProgress SnapshotMerger::progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return progress_;
}

LogPosition SnapshotMerger::delivered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return delivered_;
}

}  // namespace canal::snapshot
