#include "canal/snapshot/snapshot_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "canal/parser/mysql/query_connection.h"
#include "canal/snapshot/chunk_reader.h"
#include "canal/snapshot/snapshot_render.h"
#include "canal/snapshot/table_shape_loader.h"

namespace canal::snapshot {

namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A chunk read again this many times in a row means the stream changes its rows faster than it
// can be read (or a DDL loop): the table fails with a message saying what to raise.
constexpr int kMaxRedoInARow = 50;

// A keyless read that met a DDL on its table before its position: read again with new columns.
constexpr const char* kReloadColumns = "the table's columns changed before the read's position";

}  // namespace

// One reader thread's connection and buffers (kept across tables: no allocation per row).
struct SnapshotRunner::Reader {
  std::unique_ptr<mysql::QueryConnection> conn;
  std::unique_ptr<RowWriter> writer;
  SnapshotColumnOptions columns;
  ChunkRows chunk;
  KeyEncoder encoder;
};

SnapshotRunner::SnapshotRunner(SnapshotRunnerOptions options, SnapshotMerger* merger)
    : options_(std::move(options)), merger_(merger) {}

SnapshotRunner::~SnapshotRunner() { Stop(); }

Status SnapshotRunner::Start(const SnapshotProgress& progress) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < progress.tables.size(); ++i) {
    if (progress.tables[i].state != TableSnapshotState::kDone) todo.push_back(i);
  }
  return Enqueue(progress.id, todo);
}

// Under mu_: work of snapshot `id` is about to be queued. Refused once stopped; a new
// snapshot (or one after the last completed) starts its clock and counts afresh.
Status SnapshotRunner::BeginWorkLocked(const std::string& id) {
  if (stop_.load()) {
    return Status::Aborted("the snapshot readers are stopped" +
                           (last_error_.empty() ? std::string() : " after an error: " + last_error_) +
                           "; restart the destination (a snapshot under way resumes after its last acked chunk)");
  }
  if (state_ != "reading" || id != id_) {
    started_steady_ms_ = SteadyMs();
    started_wall_ms_ = WallMs();
    finished_steady_ms_ = 0;
    rows_read_.store(0);
    rows_estimate_.store(0);
  }
  id_ = id;
  return Status::OK();
}

Status SnapshotRunner::Enqueue(const std::string& id, const std::vector<size_t>& tables) {
  std::lock_guard<std::mutex> lock(mu_);
  CANAL_RETURN_IF_ERROR(BeginWorkLocked(id));
  state_ = tables.empty() && alive_ == 0 ? "complete" : "reading";
  for (size_t i : tables) {
    Work w;
    w.index = i;
    w.name = merger_->Table(i).Name();
    queue_.push_back(std::move(w));
  }
  return StartReaders(tables.size());
}

Status SnapshotRunner::Request(const std::string& id, int64_t started_ms, std::vector<TableProgress> tables) {
  std::lock_guard<std::mutex> lock(mu_);
  CANAL_RETURN_IF_ERROR(BeginWorkLocked(id));
  state_ = "reading";
  const size_t n = tables.size();
  for (TableProgress& t : tables) {
    Work w;
    w.name = t.Name();
    w.request = std::move(t);
    w.started_ms = started_ms;
    queue_.push_back(std::move(w));
  }
  return StartReaders(n);
}

bool SnapshotRunner::Busy(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Work& w : queue_) {
    if (w.name == name) return true;
  }
  return active_.count(name) != 0;
}

// Under mu_.
Status SnapshotRunner::StartReaders(size_t added) {
  const size_t want = std::min<size_t>(options_.options.threads, alive_ + queue_.size());
  if (options_.log && added != 0) {
    options_.log->info("[{}] snapshot {}: {} tables to read, {} readers, chunks of {} rows / {} bytes",
                       options_.destination, id_, added, want, options_.options.chunk_rows,
                       options_.options.chunk_bytes);
  }
  while (alive_ < want) {
    readers_.push_back(std::make_unique<Reader>());
    Reader* r = readers_.back().get();
    threads_.emplace_back([this, r] { Run(r); });
    ++alive_;
  }
  return Status::OK();
}

void SnapshotRunner::Stop() {
  stop_.store(true);
  merger_->Stop();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == "reading") state_ = "stopped";
}

void SnapshotRunner::MarkComplete() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == "reading") {
    state_ = "complete";
    finished_steady_ms_ = SteadyMs();
  }
}

void SnapshotRunner::Fail(const Status& s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != "reading") return;
    state_ = "failed";
    last_error_ = s.ToString();
    finished_steady_ms_ = SteadyMs();
  }
  if (options_.log) {
    options_.log->error("[{}] snapshot {} failed: {}. The stream goes on; fix the cause and restart the destination "
                        "(the snapshot resumes after its last acked chunk)",
                        options_.destination, Id(), s.ToString());
  }
  stop_.store(true);
}

void SnapshotRunner::Run(Reader* r) {
  r->conn = std::make_unique<mysql::QueryConnection>(options_.connection);
  Status s = r->conn->Connect();
  if (s.ok()) {
    // The columns' mysqlType as the stream names them: from the binlog's metadata (FULL) or,
    // with MINIMAL, from the schema's COLUMN_TYPE (snapshot_render.h).
    mysql::ResultSet rs;
    s = r->conn->Query("SELECT @@GLOBAL.binlog_row_metadata", &rs);
    if (s.ok() && !rs.rows.empty() && rs.rows[0][0].has_value()) {
      r->columns.schema_column_type = *rs.rows[0][0] != "FULL";
    }
    s = Status::OK();  // MySQL before 8.0 has no such variable: FULL's naming is the default
    // A chunk row the stream changed after the chunk's point is left to the stream, whose
    // after image must then be the whole row: only FULL row images are.
    rs = mysql::ResultSet();
    if (r->conn->Query("SELECT @@GLOBAL.binlog_row_image", &rs).ok() && !rs.rows.empty() &&
        rs.rows[0][0].has_value() && *rs.rows[0][0] != "FULL") {
      s = Status::NotSupported("binlog_row_image is " + *rs.rows[0][0] +
                               " on the primary: a snapshot leaves the rows the stream changes while a chunk is "
                               "read to the stream's images, which must be whole rows; set binlog_row_image=FULL "
                               "(SET GLOBAL binlog_row_image = 'FULL', and in the server's configuration)");
    }
  }
  if (!s.ok()) {
    Fail(s.WithContext("connecting a snapshot reader to " + options_.connection.Address()));
    std::lock_guard<std::mutex> lock(mu_);
    --alive_;
    return;
  }
  r->writer = options_.make_writer();
  for (;;) {
    Work w;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_.load() || queue_.empty()) {
        --alive_;
        break;
      }
      w = std::move(queue_.front());
      queue_.erase(queue_.begin());
      active_.insert(w.name);
    }
    size_t table_index = w.index;
    if (w.request.has_value()) {
      // A table requested while streaming joins the merger's progress here, on a reader thread:
      // the merger may wait for the ring, which the requester must not.
      const std::vector<size_t> added = merger_->AddTables({std::move(*w.request)}, Id(), w.started_ms);
      table_index = added.front();
    }
    s = ReadTable(r, table_index);
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_.erase(w.name);
    }
    if (!s.ok()) {
      if (!stop_.load()) Fail(s);
      std::lock_guard<std::mutex> lock(mu_);
      --alive_;
      break;
    }
  }
  r->conn->Close();
}

// One table being read: its columns as last loaded and the statements made from them.
struct SnapshotRunner::TableRead {
  explicit TableRead(mysql::QueryConnection* conn) : reader(conn) {}
  TableShape shape;
  SnapshotRowConverter converter;
  binlog::TableMap table;
  uint64_t table_version = 0;  // a new one each time `table` is set (RowWriter::AppendAt)
  ChunkReader reader;
  uint64_t generation = UINT64_MAX;  // the merger's DDL count for the table when loaded
  std::string name;
};

Status SnapshotRunner::Load(Reader* r, const TableProgress& tp, TableRead* t, bool* gone) {
  *gone = false;
  Status s = LoadTableShape(r->conn.get(), tp.schema, tp.table, &t->shape);
  if (s.IsNotFound()) {
    *gone = true;
    return Status::OK();
  }
  CANAL_RETURN_IF_ERROR(s);
  CANAL_RETURN_IF_ERROR(t->converter.Init(t->shape, r->columns));
  t->table = binlog::TableMap();
  t->table.db = tp.schema;
  t->table.table = tp.table;
  t->table.columns = t->converter.render_columns();
  t->table.names_known = true;
  t->table.keys_known = true;
  t->table.integer_display_widths = t->converter.integer_display_widths();
  static std::atomic<uint64_t> versions{0};
  t->table_version = ++versions;
  return t->reader.Open(t->shape, tp.where, options_.options);
}

namespace {
constexpr uint64_t kBigRowBytes = 1 << 20;
}  // namespace

Status SnapshotRunner::ConvertRow(Reader* r, TableRead* t, const ChunkRow& row, bool keyed) {
  CANAL_RETURN_IF_ERROR(t->converter.Convert(row.fields));
  ChunkRows& chunk = r->chunk;
  if (row.bytes > kBigRowBytes) {
    // A huge row is rendered into the chunk only once the destination could take the chunk: the
    // reader then never holds it (fetched, and as RowData) while the last huge chunk still
    // waits in the ring for a slow client. A slow client slows the snapshot; memory stays put.
    if (!merger_->WaitForRoom(chunk.row_bytes + row.bytes)) return Status::Aborted("the snapshot was stopped");
    // A segment of its own, with room for its RowData at once (a BLOB's Latin-1 text at most
    // doubles it; pages not written are never resident): growing the buffer by doubling would
    // copy a huge row and hold it twice meanwhile.
    chunk.StartSegment(2 * row.bytes + 64 * row.fields.size() + 256);
  }
  size_t at = 0;
  std::string* buffer = chunk.NextRowBuffer(&at);
  CANAL_RETURN_IF_ERROR(r->writer->AppendAt(t->table, t->table_version, t->converter.values(), buffer, &at));
  r->encoder.Clear();
  if (keyed) CANAL_RETURN_IF_ERROR(t->converter.AppendKey(t->reader.key(), &r->encoder));
  chunk.AddRow(at, r->encoder.key());
  return Status::OK();
}

Status SnapshotRunner::ReadTable(Reader* r, size_t table_index) {
  const TableProgress tp = merger_->Table(table_index);
  const std::string id = Id();
  rows_estimate_.fetch_add(EstimatedRows(r->conn.get(), tp.schema, tp.table));  // for the time left
  TableRead t(r->conn.get());
  t.name = "`" + tp.schema + "`.`" + tp.table + "`";
  std::vector<KeyValue> after = tp.after;
  ChunkKey key;  // none until the columns are loaded
  int redo_in_a_row = 0;
  const int64_t started = SteadyMs();
  uint64_t rows = 0;

  for (;;) {
    if (stop_.load()) return Status::OK();
    // The chunk's window opens before anything of the chunk is read, columns included.
    SnapshotMerger::WindowId window = 0;
    uint64_t generation = 0;
    if (!merger_->OpenWindow(table_index, key, &window, &generation)) return Status::OK();
    if (generation != t.generation) {
      // A DDL went by since the columns were loaded (or none were): load them again under this
      // window, then read with a window that has the key.
      bool gone = false;
      Status s = Load(r, tp, &t, &gone);
      merger_->CloseWindow(window);
      if (!s.ok()) return s.WithContext("snapshot of " + t.name);
      if (gone) {
        if (options_.log) {
          options_.log->warn("[{}] snapshot {}: table {} no longer exists (dropped or renamed since the snapshot "
                             "began); skipped",
                             options_.destination, id, t.name);
        }
        return merger_->SkipTable(table_index);
      }
      t.generation = generation;
      key = t.reader.key();
      if (key.kind == ChunkKey::Kind::kNone) {
        Status k = ReadKeyless(r, table_index, &t);
        if (!k.ok() && k.message() == kReloadColumns) {
          t.generation = UINT64_MAX;
          continue;
        }
        return k;
      }
      continue;
    }
    ChunkRows& chunk = r->chunk;
    chunk.Clear(2 * options_.options.chunk_bytes);
    ChunkResult result;
    Status s = t.reader.ReadChunk(
        after, [&](const ChunkRow& row) { return ConvertRow(r, &t, row, true); }, &result);
    if (!s.ok()) {
      merger_->CloseWindow(window);
      return s.WithContext("snapshot of " + t.name);
    }
    rows_read_.fetch_add(result.rows);
    chunk.snapshot = result.snapshot;
    chunk.last_key = result.last_key;
    chunk.exhausted = result.exhausted;
    chunk.read_ms = WallMs();
    Status error;
    switch (merger_->Offer(window, chunk, t.table, &error)) {
      case SnapshotMerger::OfferResult::kStopped:
        return error;
      case SnapshotMerger::OfferResult::kRedo:
        if (++redo_in_a_row > kMaxRedoInARow) {
          return Status::Aborted("snapshot of " + t.name + ": a chunk was read " + std::to_string(redo_in_a_row) +
                                 " times and each time the stream changed more of its keys than "
                                 "canal.instance.snapshot.window.keys allows, or a DDL changed the table; raise "
                                 "window.keys or lower chunk.rows");
        }
        continue;
      case SnapshotMerger::OfferResult::kEmitted:
        redo_in_a_row = 0;
        rows += result.rows;
        if (!result.last_key.empty()) after = result.last_key;
        if (result.exhausted) {
          if (options_.log) {
            options_.log->info("[{}] snapshot {}: {} done, {} rows read in {} ms", options_.destination, id,
                               t.name, rows, SteadyMs() - started);
          }
          return Status::OK();
        }
        continue;
    }
  }
}

// A keyless table: one consistent read whose rows go out while the stream waits at its P
// (snapshot_merger.h), in pieces of one transaction bounded like chunks.
Status SnapshotRunner::ReadKeyless(Reader* r, size_t table_index, TableRead* t) {
  if (!merger_->HoldStream()) return Status::OK();
  struct Release {
    SnapshotMerger* m;
    ~Release() { m->ReleaseHold(); }
  } release{merger_};
  ChunkRows& chunk = r->chunk;
  chunk.Clear(2 * options_.options.chunk_bytes);
  ChunkResult result;
  bool positioned = false, first = true, ddl = false;
  // Lets the stream run up to P and waits for it there; a DDL on the table on the way means the
  // columns were loaded before it.
  const auto position = [&]() -> Status {
    merger_->ReleaseStreamTo(result.snapshot);
    if (!merger_->WaitStreamAt(result.snapshot)) return Status::Aborted("the snapshot was stopped");
    if (merger_->DdlGeneration(table_index) != t->generation) {
      ddl = true;
      return Status::Aborted(kReloadColumns);
    }
    positioned = true;
    return Status::OK();
  };
  const uint64_t bound_rows = options_.options.chunk_rows, bound_bytes = options_.options.chunk_bytes;
  Status s = t->reader.ReadChunk(
      {},
      [&](const ChunkRow& row) -> Status {
        if (!positioned) CANAL_RETURN_IF_ERROR(position());
        CANAL_RETURN_IF_ERROR(ConvertRow(r, t, row, false));
        if (chunk.row_count() >= bound_rows || chunk.row_bytes >= bound_bytes) {
          chunk.read_ms = WallMs();
          CANAL_RETURN_IF_ERROR(merger_->EmitHeld(table_index, chunk, t->table, first, false));
          rows_read_.fetch_add(chunk.row_count());
          first = false;
          chunk.Clear(2 * options_.options.chunk_bytes);
        }
        return Status::OK();
      },
      &result);
  if (ddl) return Status::Aborted(kReloadColumns);
  if (!s.ok()) return s.WithContext("snapshot of " + t->name);
  if (!positioned) CANAL_RETURN_IF_ERROR(position());
  chunk.read_ms = WallMs();
  rows_read_.fetch_add(chunk.row_count());
  CANAL_RETURN_IF_ERROR(merger_->EmitHeld(table_index, chunk, t->table, first, true));
  if (options_.log) {
    options_.log->info("[{}] snapshot {}: {} (no key: one read, the stream held at its position) done, {} rows",
                       options_.destination, Id(), t->name, result.rows);
  }
  return Status::OK();
}

std::string SnapshotRunner::Id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return id_;
}

SnapshotRunStatus SnapshotRunner::status() const {
  SnapshotRunStatus st;
  const MergerStats m = merger_->stats();
  st.id = Id();
  st.tables_total = m.tables_total;
  st.tables_done = m.tables_done;
  st.rows_read = rows_read_.load();
  st.rows_sent = m.rows;
  st.rows_estimate = rows_estimate_.load();
  st.chunks = m.chunks;
  st.redone = m.redone;
  st.dropped_rows = m.dropped_rows;
  st.started_ms = started_wall_ms_;
  std::lock_guard<std::mutex> lock(mu_);
  st.state = m.complete && state_ == "reading" ? "complete" : state_;
  st.last_error = last_error_;
  const int64_t end = finished_steady_ms_ != 0 ? finished_steady_ms_ : SteadyMs();
  st.elapsed_ms = started_steady_ms_ == 0 ? 0 : end - started_steady_ms_;
  if (st.elapsed_ms > 0) st.rows_per_second = static_cast<double>(st.rows_sent) * 1000.0 / st.elapsed_ms;
  if (st.state == "complete") {
    st.eta_ms = 0;
  } else if (st.rows_per_second > 0 && st.rows_estimate > st.rows_sent) {
    st.eta_ms = static_cast<int64_t>(static_cast<double>(st.rows_estimate - st.rows_sent) / st.rows_per_second * 1000);
  }
  return st;
}

}  // namespace canal::snapshot
