// Instance's snapshots (docs/snapshot.md): planning one at start (modes, resume from the cursor,
// a purged cursor), listing the tables of the filter's scope, on-demand requests (RequestSnapshot
// and the conf folder's snapshot.request), and the end of one.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "canal/common/ascii_case.h"
#include "canal/common/json_string.h"
#include "canal/meta/meta_manager.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/server/instance.h"
#include "canal/server/snapshot_request.h"
#include "canal/snapshot/chunk_key.h"
#include "canal/snapshot/chunk_query.h"
#include "canal/snapshot/table_shape_loader.h"

namespace canal::server {

namespace {

using Uint128 = unsigned __int128;

// "12345" or "-12345" (a MIN/MAX of an integer column) as a 128-bit integer.
bool ParseKeyInteger(const std::optional<std::string>& text, __int128* v) {
  if (!text || text->empty()) return false;
  const bool negative = (*text)[0] == '-';
  Uint128 m = 0;
  for (size_t i = negative ? 1 : 0; i < text->size(); ++i) {
    const char c = (*text)[i];
    if (c < '0' || c > '9' || m > (Uint128{1} << 100)) return false;
    m = m * 10 + static_cast<unsigned>(c - '0');
  }
  *v = negative ? -static_cast<__int128>(m) : static_cast<__int128>(m);
  return true;
}

std::string KeyIntegerText(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  Uint128 m = negative ? static_cast<Uint128>(-v) : static_cast<Uint128>(v);
  std::string digits;
  while (m != 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  if (negative) digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

// Plans one table: whether a key pages it (snapshot/chunk_key.h: a keyless one is one read at
// its P, and the merger keeps its changes out of the stream until then), and whether it is
// read in several key ranges at once. A big table paged by one integer column is split into
// up to canal.instance.snapshot.threads ranges of that column's [MIN, MAX], each a table of
// the snapshot of its own (the range is its `where`): the readers then keep the primary and
// this server busy on one table as on several. The first range is open below and the last
// above, so a key written since the plan is read too (or streamed). Each range pages, resumes
// and goes out exactly as a table does; the ranges of one table interleave in the stream.
Status PlanTable(mysql::QueryConnection* conn, const snapshot::SnapshotOptions& options,
                 const std::shared_ptr<spdlog::logger>& log, const std::string& destination,
                 snapshot::TableProgress t, std::vector<snapshot::TableProgress>* out) {
  snapshot::TableShape shape;
  snapshot::ChunkKey key;
  CANAL_RETURN_IF_ERROR(snapshot::LoadTableShape(conn, t.schema, t.table, &shape));
  CANAL_RETURN_IF_ERROR(snapshot::ChooseChunkKey(shape, &key));
  t.keyless = key.kind == snapshot::ChunkKey::Kind::kNone;
  const bool integer_key = !t.keyless && key.columns.size() == 1 &&
                           snapshot::IsIntegerType(shape.columns[key.columns[0]].data_type) &&
                           shape.columns[key.columns[0]].name.find('\\') == std::string::npos;
  // Ranges of at least two chunks each: a small table is not worth a second connection.
  uint64_t parts = 1;
  if (integer_key && options.threads > 1) {
    parts = std::min<uint64_t>(options.threads, snapshot::EstimatedRows(conn, t.schema, t.table) /
                                                    (2 * std::max<uint64_t>(1, options.chunk_rows)));
  }
  if (parts < 2) {
    out->push_back(std::move(t));
    return Status::OK();
  }
  const std::string column = snapshot::QuoteIdentifier(shape.columns[key.columns[0]].name);
  const std::string filter = t.where.empty() ? std::string() : "(" + t.where + ") AND ";
  mysql::ResultSet rs;
  CANAL_RETURN_IF_ERROR(conn->Query("SELECT MIN(" + column + "), MAX(" + column + ") FROM " +
                                        snapshot::QuoteIdentifier(t.schema) + "." + snapshot::QuoteIdentifier(t.table) +
                                        (t.where.empty() ? std::string() : " WHERE (" + t.where + ")"),
                                    &rs)
                            .WithContext("the key range of " + t.Name()));
  __int128 lo = 0, hi = 0;
  if (rs.rows.empty() || rs.rows[0].size() < 2 || !ParseKeyInteger(rs.rows[0][0], &lo) ||
      !ParseKeyInteger(rs.rows[0][1], &hi) || hi - lo + 1 < static_cast<__int128>(parts)) {
    out->push_back(std::move(t));  // empty, or too few keys to split
    return Status::OK();
  }
  const __int128 step = (hi - lo + 1) / static_cast<__int128>(parts);
  for (uint64_t i = 0; i < parts; ++i) {
    snapshot::TableProgress part = t;
    const std::string from = KeyIntegerText(lo + step * static_cast<__int128>(i));
    const std::string to = KeyIntegerText(lo + step * static_cast<__int128>(i + 1));
    if (i == 0) {
      part.where = filter + column + " < " + to;
    } else if (i + 1 == parts) {
      part.where = filter + column + " >= " + from;
    } else {
      part.where = filter + column + " >= " + from + " AND " + column + " < " + to;
    }
    out->push_back(std::move(part));
  }
  if (log) {
    log->info("[{}] snapshot: {} is read in {} ranges of {} at once ({}..{})", destination, t.Name(), parts, column,
              KeyIntegerText(lo), KeyIntegerText(hi));
  }
  return Status::OK();
}

}  // namespace

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
  // Counted once the plan is made: a plan that waits for the primary is tried again.
  if (found) ++purged_resnapshots_;
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
    const std::string name = t.Name();
    CANAL_RETURN_IF_ERROR(PlanTable(&conn, config_.snapshot, log_, config_.destination, std::move(t), tables)
                              .WithContext("planning the snapshot of " + name));
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running() && merger_ == nullptr && !plan_error_.empty()) {
      return Status::Aborted("destination " + dest + " waits for its primary before it streams (" + plan_error_ +
                             "); request the snapshot again once it streams");
    }
  }
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
    CANAL_RETURN_IF_ERROR(PlanTable(&conn, config_.snapshot, log_, config_.destination, std::move(t), &list)
                              .WithContext("planning the snapshot of " + name));
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

}  // namespace canal::server
