#include "canal/server/instance.h"
#include "canal/server/snapshot_request.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cinttypes>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <cstdio>

#include "canal/common/ascii_case.h"
#include "canal/common/json_string.h"
#include "canal/meta/meta_manager.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/snapshot/chunk_key.h"
#include "canal/snapshot/chunk_query.h"
#include "canal/snapshot/table_shape_loader.h"
#include "snapshot_output.h"

namespace canal::server {

namespace {

// Whether the table has a key a snapshot pages it by (snapshot/chunk_key.h): a keyless one is
// one read at its P, and the merger keeps its changes out of the stream until then.
Status MarkKeyless(mysql::QueryConnection* conn, snapshot::TableProgress* t) {
  snapshot::TableShape shape;
  snapshot::ChunkKey key;
  CANAL_RETURN_IF_ERROR(snapshot::LoadTableShape(conn, t->schema, t->table, &shape));
  CANAL_RETURN_IF_ERROR(snapshot::ChooseChunkKey(shape, &key));
  t->keyless = key.kind == snapshot::ChunkKey::Kind::kNone;
  return Status::OK();
}

// when_needed after a purge: the parser must not resume at the purged cursor (it falls back to
// canal.instance.master.* or the primary's end) until a client acks an entry of the new run.
class SkipPurgedCursor final : public parser::CursorSource {
 public:
  SkipPurgedCursor(std::unique_ptr<parser::CursorSource> inner, std::string file)
      : inner_(std::move(inner)), file_(std::move(file)) {}
  Status LoadCursor(LogPosition* cursor, bool* found) override {
    CANAL_RETURN_IF_ERROR(inner_->LoadCursor(cursor, found));
    if (*found && cursor->snapshot == nullptr && cursor->journal_name == file_) *found = false;
    return Status::OK();
  }

 private:
  std::unique_ptr<parser::CursorSource> inner_;
  const std::string file_;
};

// How long Stop lets the parser stop on its own before stopping the ring
// under it (a Put waiting for space wakes only then).
constexpr std::chrono::milliseconds kParserStopGrace{200};

// How often a snapshot request file is looked for, and its bounds.
constexpr std::chrono::milliseconds kRequestPoll{250};

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n >= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  } else if (n >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", n);
  }
  return buf;
}

}  // namespace

Instance::Instance(InstanceConfig config, meta::MetaManager* meta, std::shared_ptr<spdlog::logger> logger,
                   InstanceOptions options)
    : config_(std::move(config)),
      meta_(meta),
      log_(logger ? std::move(logger) : std::make_shared<spdlog::logger>("canal-instance-" + config_.destination)),
      options_(options) {}

Instance::~Instance() { Stop(); }

Status Instance::Start() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  return StartLocked();
}

void Instance::Stop() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  StopLocked();
}

Status Instance::Restart() {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  StopLocked();
  return StartLocked();
}

Status Instance::StartLocked() {
  if (running()) return Status::OK();
  const std::string& dest = config_.destination;

  std::unique_ptr<store::RingStore> ring;
  CANAL_RETURN_IF_ERROR(store::RingStore::Create(config_.store, &ring).WithContext(config_.properties_file));

  // Cursors are stamped with the upstream they belong to, as Canal does.
  meta::LogIdentity identity;
  identity.address = config_.parser.master.host;
  identity.port = config_.parser.master.port;
  CANAL_RETURN_IF_ERROR(meta_->SetSourceIdentity(dest, identity).WithContext("starting destination " + dest));

  // Batches of an earlier run point into a ring that is gone; the new ring
  // delivers again from the cursor. A subscribed client's own filter applies
  // from the first entry, before the client is back (Canal does the same).
  std::vector<meta::ClientIdentity> clients;
  CANAL_RETURN_IF_ERROR(meta_->ListClients(dest, &clients).WithContext("starting destination " + dest));
  std::string filter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    filter = client_filter_;
  }
  for (const meta::ClientIdentity& client : clients) {
    Status s = meta_->ClearAllBatches(client);
    if (!s.ok() && !s.IsNotFound()) return s.WithContext("starting destination " + dest);
    if (!client.filter.empty()) filter = client.filter;
  }

  auto sink = std::make_unique<sink::EntrySink>(config_.sink, ring.get());
  if (!filter.empty()) {
    Status s = sink->SetSubscriptionFilter(filter);
    if (!s.ok()) {
      log_->warn("[{}] the subscribed client's filter '{}' does not compile ({}); using the instance's filter",
                 dest, filter, s.ToString());
      filter.clear();
    }
  }
  std::unique_ptr<parser::CursorSource> cursor = std::make_unique<SlowestCursorSource>(meta_, dest);

  // A snapshot, when one runs, stands between the parser and the sink (snapshot_merger.h).
  snapshot::SnapshotProgress progress;
  bool run_snapshot = false;
  CANAL_RETURN_IF_ERROR(PlanSnapshot(cursor.get(), filter, &progress, &run_snapshot).WithContext("starting destination " + dest));
  std::unique_ptr<SinkChunkOutput> snapshot_output;
  std::unique_ptr<snapshot::SnapshotMerger> merger;
  std::unique_ptr<snapshot::SnapshotRunner> runner;
  parser::TransactionSink* stream_sink = sink.get();
  if (!purged_cursor_file_.empty()) {
    cursor = std::make_unique<SkipPurgedCursor>(std::move(cursor), purged_cursor_file_);
    purged_cursor_file_.clear();
  }
  // The merger is there even with no snapshot to run, so that one can be requested while
  // streaming (RequestSnapshot); with nothing to merge it costs a lock per transaction.
  {
    snapshot_output = std::make_unique<SinkChunkOutput>(sink.get(), [r = ring.get()] { r->ProducerCaughtUp(); });
    const size_t window_keys = config_.snapshot.window_keys;
    merger = std::make_unique<snapshot::SnapshotMerger>(sink.get(), snapshot_output.get(), window_keys,
                                                        std::max<size_t>(window_keys * 256, size_t{16} << 20));
    merger->Begin(run_snapshot ? progress : snapshot::SnapshotProgress(), [this] { OnSnapshotComplete(); });
    snapshot::SnapshotRunnerOptions ro;
    ro.destination = dest;
    ro.connection = config_.parser.master;
    ro.options = config_.snapshot;
    ro.make_writer = [this] { return std::make_unique<BuilderRowWriter>(config_.sink); };
    ro.log = log_;
    runner = std::make_unique<snapshot::SnapshotRunner>(std::move(ro), merger.get());
    stream_sink = merger.get();
  }

  std::shared_ptr<store::RingStore> shared_ring = std::move(ring);
  parser::EventParserOptions parser_options = config_.parser;
  // Low-latency gets end when the parser has caught up, not at each entry of a backlog.
  shared_ring->TrackCatchUp();
  parser_options.on_caught_up = [r = shared_ring] { r->ProducerCaughtUp(); };
  auto parser = std::make_unique<parser::EventParser>(std::move(parser_options), stream_sink, cursor.get(), log_);

  log_->info("[{}] starting: primary {} as {}, filter '{}' black '{}', ring {} entries {} x {} B, from {}", dest,
             config_.parser.master.Address(), config_.parser.master.user, config_.filter_regex,
             config_.filter_black_regex, config_.store.buffer_size, store::BatchModeName(config_.store.batch_mode),
             config_.store.buffer_memunit, config_.properties_file);
  {
    std::lock_guard<std::mutex> lock(mu_);
    store_ = std::move(shared_ring);  // the last run's ring goes with its last holder
    sink_ = std::move(sink);
    cursor_ = std::move(cursor);
    parser_ = std::move(parser);
    client_filter_ = filter;
    status_stop_ = false;
    snapshot_output_ = std::move(snapshot_output);
    merger_ = std::move(merger);
    runner_ = std::move(runner);
    snapshot_complete_handled_ = false;
  }
  parser_->Start();
  if (run_snapshot) {
    Status s = runner_->Start(progress);
    if (!s.ok()) log_->error("[{}] the snapshot did not start: {}", dest, s.ToString());
  }
  running_.store(true, std::memory_order_release);
  status_thread_ = std::thread([this] { StatusLoop(); });
  return Status::OK();
}

void Instance::StopLocked() {
  if (!running()) return;
  running_.store(false, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_stop_ = true;
  }
  status_cv_.notify_all();
  if (status_thread_.joinable()) status_thread_.join();

  // The parser wakes from a socket read at once, but not from a Put waiting
  // for a full ring: stop the ring too once the parser has stopped or had a
  // moment to see its stop flag (so the ring's Aborted is not reported as a
  // failure). The stopper thread says when the parser is down.
  // A keyless table's read may hold the parse thread: the merger lets it go first.
  if (merger_) merger_->Stop();
  struct {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  } parser_stop;
  std::thread stopper([p = parser_.get(), &parser_stop] {
    p->Stop();
    std::lock_guard<std::mutex> lock(parser_stop.mu);
    parser_stop.done = true;
    parser_stop.cv.notify_all();  // under the lock: parser_stop outlives the call
  });
  {
    std::unique_lock<std::mutex> lock(parser_stop.mu);
    parser_stop.cv.wait_for(lock, kParserStopGrace, [&] { return parser_stop.done; });
  }
  store_->Stop();
  stopper.join();
  if (runner_) runner_->Stop();  // its readers woke from the merger or the stopped ring

  const LogPosition at = parser_->status().position;
  log_->info("[{}] stopped {}", config_.destination, at.empty() ? std::string("before reading any event") : "at " + at.ToString());
  std::lock_guard<std::mutex> lock(mu_);
  runner_.reset();
  parser_.reset();
  merger_.reset();
  snapshot_output_.reset();
  cursor_.reset();
  sink_.reset();
}

std::shared_ptr<store::RingStore> Instance::store() {
  std::lock_guard<std::mutex> lock(mu_);
  return store_;
}

bool Instance::Halted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_.load(std::memory_order_acquire) && parser_ != nullptr && !parser_->running();
}

Status Instance::SetClientFilter(std::string_view regex) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sink_) {
    CANAL_RETURN_IF_ERROR(sink_->SetSubscriptionFilter(regex));
  } else if (!regex.empty()) {
    // Not running: check it now so the client hears of a bad pattern.
    std::unique_ptr<sink::TableFilter> check;
    CANAL_RETURN_IF_ERROR(sink::TableFilter::Create(regex, config_.filter_black_regex, &check));
  }
  if (client_filter_ != regex) {
    log_->info("[{}] client filter {}", config_.destination,
               regex.empty() ? std::string("cleared: the instance's filter applies") : "'" + std::string(regex) + "'");
  }
  client_filter_.assign(regex);
  return Status::OK();
}

InstanceStatus Instance::status() const {
  InstanceStatus st;
  st.running = running();
  std::lock_guard<std::mutex> lock(mu_);
  if (parser_) st.parser = parser_->status();
  if (sink_) st.sink = sink_->stats();
  if (store_) {
    st.store = store_->stats();
    st.store_capacity = store_->options().buffer_size;
    st.store_byte_bound = store_->options().ByteBound();
  }
  st.client_filter = client_filter_;
  st.primary = config_.parser.master.Address();
  st.purged_resnapshots = purged_resnapshots_.load();
  if (runner_) {
    st.snapshot = runner_->status();
    st.snapshot_active = !st.snapshot.id.empty();
  }
  return st;
}

std::string Instance::Warning() const {
  const InstanceStatus st = status();
  const std::string& state = st.parser.state;
  if (st.running && state == "streaming") return {};
  std::string w = "destination " + config_.destination + " is not streaming from its primary " + st.primary + ": " +
                  (!st.running ? std::string("stopped") : state.empty() ? std::string("starting") : state);
  if (!st.parser.last_error.empty()) w += " (last error: " + st.parser.last_error + ")";
  return w;
}

std::string Instance::StatusLine() const {
  InstanceStatus st = status();
  std::string line = st.parser.state.empty() ? std::string("stopped") : st.parser.state;
  line += " at " + (st.parser.position.empty() ? std::string("(no event yet)") : st.parser.position.ToString());
  line += ", lag " + std::to_string(st.parser.lag_ms) + " ms";
  line += ", store " + std::to_string(st.store.put_sequence - st.store.ack_sequence) + "/" +
          std::to_string(st.store_capacity) + " entries " + Bytes(st.store.held_bytes);
  if (st.store_byte_bound != 0) line += "/" + Bytes(st.store_byte_bound);
  line += ", " + std::to_string(st.store.put_sequence - st.store.get_sequence) + " not yet fetched";
  if (st.snapshot_active) {
    const snapshot::SnapshotRunStatus& sn = st.snapshot;
    char buf[256];
    std::snprintf(buf, sizeof buf, ", snapshot %s %s: %" PRIu64 "/%" PRIu64 " tables, %" PRIu64 " rows sent (%.0f rows/s)",
                  sn.id.c_str(), sn.state.c_str(), sn.tables_done, sn.tables_total, sn.rows_sent, sn.rows_per_second);
    line += buf;
    if (sn.eta_ms > 0) line += ", about " + std::to_string((sn.eta_ms + 999) / 1000) + " s left";
  }
  return line;
}

Status Instance::PlanSnapshot(parser::CursorSource* cursor, const std::string& client_filter,
                              snapshot::SnapshotProgress* progress, bool* run) {
  *run = false;
  const snapshot::SnapshotMode mode = config_.snapshot.mode;
  LogPosition at;
  bool found = false;
  CANAL_RETURN_IF_ERROR(cursor->LoadCursor(&at, &found));
  if (found && at.snapshot != nullptr) {
    // A snapshot was under way when the destination stopped: it goes on after its last acked chunk.
    Status s = snapshot::SnapshotProgress::Decode(*at.snapshot, progress);
    if (!s.ok()) {
      return s.WithContext("the cursor's snapshot progress (meta.dat or ZooKeeper) does not read; remove its "
                           "\"snapshot\" member to stream without the snapshot, or the cursor to start again");
    }
    if (mode == snapshot::SnapshotMode::kNever) {
      log_->warn("[{}] snapshot {} was under way when the destination stopped; it goes on although "
                 "canal.instance.snapshot.mode=never (the mode decides only whether a new one starts)",
                 config_.destination, progress->id);
    }
    log_->info("[{}] snapshot {} resumes at the cursor {}: {} of {} tables done", config_.destination, progress->id,
               at.ToString(), progress->TablesDone(), progress->tables.size());
    *run = !progress->Complete();
    return Status::OK();
  }
  std::string reason = "no cursor yet";
  if (found && mode == snapshot::SnapshotMode::kWhenNeeded) {
    // when_needed: a cursor whose binlog the primary has purged cannot be resumed; the rows are
    // read again instead of the destination stopping, and the stream starts afresh.
    bool purged = false;
    CANAL_RETURN_IF_ERROR(CursorFilePurged(at, &purged));
    if (!purged) return Status::OK();
    log_->warn("[{}] the cursor {} names a binlog the primary {} no longer has (purged); "
               "canal.instance.snapshot.mode=when_needed: taking a new snapshot of every table of the filter and "
               "streaming from the primary's position now",
               config_.destination, at.ToString(), config_.parser.master.Address());
    purged_cursor_file_ = at.journal_name;
    ++purged_resnapshots_;
    reason = "the cursor's binlog " + at.journal_name + " was purged";
  } else if (found || mode == snapshot::SnapshotMode::kNever) {
    return Status::OK();
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  progress->id = std::string(found ? "resnapshot-" : "initial-") + std::to_string(now_ms);
  progress->started_ms = now_ms;
  CANAL_RETURN_IF_ERROR(ListSnapshotTables(client_filter, &progress->tables));
  if (progress->tables.empty()) {
    log_->warn("[{}] canal.instance.snapshot.mode={}: no InnoDB table of {} is in the filter's scope ('{}' black "
               "'{}'); nothing to snapshot, streaming only",
               config_.destination, snapshot::SnapshotModeName(mode), config_.parser.master.Address(),
               client_filter.empty() ? config_.filter_regex : client_filter, config_.filter_black_regex);
    return Status::OK();
  }
  log_->info("[{}] canal.instance.snapshot.mode={} and {}: snapshot {} of {} tables, then the stream",
             config_.destination, snapshot::SnapshotModeName(mode), reason, progress->id, progress->tables.size());
  *run = true;
  return Status::OK();
}

Status Instance::CursorFilePurged(const LogPosition& cursor, bool* purged) {
  *purged = false;
  mysql::QueryConnection conn(config_.parser.master);
  std::vector<mysql::BinaryLogFile> files;
  Status s = conn.Connect();
  if (s.ok()) s = conn.ShowBinaryLogs(&files);
  CANAL_RETURN_IF_ERROR(s.WithContext("checking whether the cursor's binlog " + cursor.journal_name + " is still on " +
                                      config_.parser.master.Address()));
  *purged = std::none_of(files.begin(), files.end(),
                         [&](const mysql::BinaryLogFile& f) { return f.name == cursor.journal_name; });
  return Status::OK();
}

// Every base table the destination's filter accepts (the subscribed client's, when it has one).
// Tables of an engine without consistent snapshots (MyISAM, ...) are left out with a WARN line:
// their rows cannot be placed exactly in the stream.
Status Instance::ListSnapshotTables(const std::string& client_filter, std::vector<snapshot::TableProgress>* tables) {
  std::shared_ptr<const sink::TableFilter> filter = config_.sink.table_filter;
  if (!client_filter.empty()) {
    std::unique_ptr<sink::TableFilter> f;
    if (sink::TableFilter::Create(client_filter, config_.filter_black_regex, &f).ok()) filter = std::move(f);
  }
  mysql::QueryConnection conn(config_.parser.master);
  CANAL_RETURN_IF_ERROR(conn.Connect().WithContext("listing the tables to snapshot on " +
                                                   config_.parser.master.Address()));
  mysql::ResultSet rs;
  CANAL_RETURN_IF_ERROR(conn.Query("SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE FROM information_schema.TABLES WHERE "
                                   "TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', "
                                   "'information_schema', 'performance_schema', 'sys') ORDER BY 1, 2",
                                   &rs)
                            .WithContext("listing the tables to snapshot on " + config_.parser.master.Address()));
  for (const auto& row : rs.rows) {
    if (row.size() < 3 || !row[0].has_value() || !row[1].has_value()) continue;
    if (filter != nullptr && !filter->Accepts(*row[0], *row[1])) continue;
    const std::string engine = row[2].value_or("");
    if (!AsciiEqualsIgnoreCase(engine, "InnoDB")) {
      log_->warn("[{}] snapshot: `{}`.`{}` uses engine {}; a consistent snapshot covers InnoDB tables only, so its "
                 "rows are not read (its changes still stream)",
                 config_.destination, *row[0], *row[1], engine.empty() ? std::string("(none)") : engine);
      continue;
    }
    snapshot::TableProgress t;
    t.schema = *row[0];
    t.table = *row[1];
    CANAL_RETURN_IF_ERROR(MarkKeyless(&conn, &t).WithContext("planning the snapshot of " + t.Name()));
    tables->push_back(std::move(t));
  }
  return Status::OK();
}

Status Instance::RequestSnapshot(const std::vector<std::string>& tables, const std::string& where, std::string* id) {
  std::lock_guard<std::mutex> lifecycle(lifecycle_mu_);
  return RequestSnapshotLocked(tables, where, id);
}

// The status thread calls this without lifecycle_mu_: it runs only while the instance does, and
// Stop joins it before the merger and readers go.
Status Instance::RequestSnapshotLocked(const std::vector<std::string>& tables, const std::string& where,
                                       std::string* id) {
  const std::string& dest = config_.destination;
  if (!running() || merger_ == nullptr) {
    return Status::NotFound("destination " + dest + " is not running here; start it (or ask the server "
                                      "where it is active) and request the snapshot again");
  }
  if (tables.empty()) return Status::InvalidArgument("no table named: give one or more schema.table");
  if (!where.empty()) CANAL_RETURN_IF_ERROR(snapshot::CheckWhereClause(where).WithContext("--where"));
  std::shared_ptr<const sink::TableFilter> filter = config_.sink.table_filter;
  std::string filter_text = config_.filter_regex;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!client_filter_.empty()) {
      std::unique_ptr<sink::TableFilter> f;
      if (sink::TableFilter::Create(client_filter_, config_.filter_black_regex, &f).ok()) {
        filter = std::move(f);
        filter_text = client_filter_ + " (the subscribed client's)";
      }
    }
  }
  mysql::QueryConnection conn(config_.parser.master);
  CANAL_RETURN_IF_ERROR(conn.Connect().WithContext("checking the requested tables on " +
                                                   config_.parser.master.Address()));
  std::vector<snapshot::TableProgress> list;
  for (const std::string& name : tables) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size() || name.size() > 129) {
      return Status::InvalidArgument("'" + name + "' is not schema.table");
    }
    snapshot::TableProgress t;
    t.schema = name.substr(0, dot);
    t.table = name.substr(dot + 1);
    t.where = where;
    if (filter != nullptr && !filter->Accepts(t.schema, t.table)) {
      return Status::InvalidArgument("table " + name + " is outside destination " + dest + "'s filter '" + filter_text +
                                     "' (black '" + config_.filter_black_regex +
                                     "'): its changes are not streamed, so its snapshot would go stale at once; "
                                     "widen canal.instance.filter.regex first");
    }
    for (const snapshot::TableProgress& other : list) {
      if (other.schema == t.schema && other.table == t.table) {
        return Status::InvalidArgument("table " + name + " is named twice");
      }
    }
    if (runner_->Busy(t.Name())) {
      return Status::InvalidArgument("table " + name + " is already being read by snapshot " +
                                   runner_->status().id + "; wait for it to finish (/status, \"snapshot\")");
    }
    mysql::ResultSet rs;
    CANAL_RETURN_IF_ERROR(conn.Query("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
                                         conn.QuoteString(t.schema) + " AND TABLE_NAME = " + conn.QuoteString(t.table) +
                                         " AND TABLE_TYPE = 'BASE TABLE'",
                                     &rs)
                              .WithContext("checking table " + name));
    if (rs.rows.empty()) {
      return Status::NotFound("table " + name + " does not exist on " + config_.parser.master.Address() +
                              ", or user '" + config_.parser.master.user + "' may not see it (GRANT SELECT ON " +
                              t.schema + "." + t.table + " TO '" + config_.parser.master.user + "')");
    }
    if (!AsciiEqualsIgnoreCase(rs.rows[0][0].value_or(""), "InnoDB")) {
      return Status::NotSupported("table " + name + " uses engine " + rs.rows[0][0].value_or("(none)") +
                                  "; a consistent snapshot covers InnoDB tables only");
    }
    // SELECT itself, not just visibility: information_schema lists a table for any privilege.
    Status probe = conn.Execute("SELECT 1 FROM " + snapshot::QuoteIdentifier(t.schema) + "." +
                                snapshot::QuoteIdentifier(t.table) +
                                (where.empty() ? std::string() : " WHERE (" + where + ")") + " LIMIT 0");
    if (!probe.ok()) {
      if (conn.last_server_error().code == 1142) {
        return Status::InvalidArgument("user '" + config_.parser.master.user + "' has no SELECT on " + name +
                                        ": GRANT SELECT ON " + t.schema + "." + t.table + " TO '" +
                                        config_.parser.master.user + "'");
      }
      return probe.WithContext("reading " + name + (where.empty() ? std::string() : " with --where"));
    }
    CANAL_RETURN_IF_ERROR(MarkKeyless(&conn, &t).WithContext("planning the snapshot of " + name));
    list.push_back(std::move(t));
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const snapshot::SnapshotRunStatus before = runner_->status();
  const std::string new_id = before.state == "reading" ? before.id : "request-" + std::to_string(now_ms);
  const size_t count = list.size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_complete_ = false;
    snapshot_complete_handled_ = false;
  }
  CANAL_RETURN_IF_ERROR(runner_->Request(new_id, now_ms, std::move(list)));
  *id = new_id;
  log_->info("[{}] snapshot {} requested while streaming: {} table(s){}", dest, new_id, count,
             where.empty() ? std::string() : ", rows where (" + where + ")");
  return Status::OK();
}

// bin/canal-admin.sh snapshot: a request file in the destination's conf folder, answered by a
// result file beside it (the request is taken once: read, removed, answered).
void Instance::TakeSnapshotRequest() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(config_.properties_file).parent_path();
  const fs::path request = dir / "snapshot.request";
  std::error_code ec;
  if (!fs::exists(request, ec)) return;
  std::string text;
  {
    // One byte past the bound is enough to refuse it.
    std::ifstream in(request, std::ios::binary);
    char buf[4096];
    while (text.size() <= kMaxSnapshotRequestBytes && (in.read(buf, sizeof buf) || in.gcount() > 0)) {
      text.append(buf, static_cast<size_t>(in.gcount()));
    }
  }
  fs::remove(request, ec);
  std::string answer;
  SnapshotRequest parsed;
  Status s = ParseSnapshotRequest(text, &parsed);
  std::string id;
  if (s.ok()) s = RequestSnapshotLocked(parsed.tables, parsed.where, &id);
  if (s.ok()) {
    answer = "accepted: snapshot " + id + "\n";
  } else {
    answer = "refused: " + s.ToString() + "\n";
    std::string shown;
    AppendJsonString(s.ToString(), &shown);
    log_->warn("[{}] snapshot request refused: {}", config_.destination, shown);
  }
  const fs::path tmp = dir / "snapshot.result.tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << answer;
  }
  fs::rename(tmp, dir / "snapshot.result", ec);
}

void Instance::OnSnapshotComplete() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_complete_ = true;
  }
  status_cv_.notify_all();
}

// On the status thread: the merger said the last table is done.
void Instance::FinishSnapshot() {
  snapshot::SnapshotRunStatus st;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!runner_) return;
    runner_->MarkComplete();
    st = runner_->status();
  }
  log_->info("[{}] snapshot {} complete: {} tables, {} rows sent in {:.1f} s ({:.0f} rows/s; {} chunks read again, {} "
             "rows left to the stream's newer version)",
             config_.destination, st.id, st.tables_total, st.rows_sent, static_cast<double>(st.elapsed_ms) / 1000,
             st.rows_per_second, st.redone, st.dropped_rows);
  if (config_.snapshot.mode == snapshot::SnapshotMode::kInitialOnly) {
    log_->info("[{}] canal.instance.snapshot.mode=initial_only: the stream stops here; clients read what the ring "
               "holds",
               config_.destination);
    parser::EventParser* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      p = parser_.get();
    }
    if (p != nullptr) p->Stop();
  }
}

void Instance::StatusLoop() {
  using Clock = std::chrono::steady_clock;
  auto last_time = Clock::now();
  uint64_t last_entries = 0, last_rows = 0;
  bool reported_failure = false;
  auto next_status = last_time + options_.status_interval;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Wakes for a snapshot's end, a snapshot request (polled), and the status line.
    const auto wait = std::min<std::chrono::steady_clock::duration>(kRequestPoll, next_status - Clock::now());
    if (status_cv_.wait_for(lock, std::max<std::chrono::steady_clock::duration>(wait, std::chrono::milliseconds(1)),
                            [this] { return status_stop_ || (snapshot_complete_ && !snapshot_complete_handled_); })) {
      if (status_stop_) return;
      snapshot_complete_handled_ = true;
      lock.unlock();
      FinishSnapshot();
      lock.lock();
      continue;
    }
    lock.unlock();
    TakeSnapshotRequest();
    if (Clock::now() < next_status) {
      lock.lock();
      continue;
    }
    next_status = Clock::now() + options_.status_interval;
    InstanceStatus st = status();
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_time).count();
    const double entries_per_s = seconds > 0 ? static_cast<double>(st.sink.entries - last_entries) / seconds : 0;
    const double rows_per_s = seconds > 0 ? static_cast<double>(st.parser.rows_events - last_rows) / seconds : 0;
    last_time = now;
    last_entries = st.sink.entries;
    last_rows = st.parser.rows_events;
    char rates[96];
    std::snprintf(rates, sizeof rates, ", %.1f entries/s, %.1f row events/s", entries_per_s, rows_per_s);
    log_->info("[{}] status: {}{}, reconnects {}", config_.destination, StatusLine(), rates, st.parser.reconnects);
    if (st.parser.state == "failed" && !reported_failure) {
      reported_failure = true;
      log_->error("[{}] the replica has stopped: {}. Clients can still read what the ring holds; fix {} (an edit "
                  "restarts this instance when canal.auto.scan is on) or restart the server",
                  config_.destination, st.parser.last_error, config_.properties_file);
    }
    lock.lock();
  }
}

}  // namespace canal::server
