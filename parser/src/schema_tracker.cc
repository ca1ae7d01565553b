#include "schema_tracker.h"

#include <chrono>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "canal/parser/binlog/column_text.h"
#include "canal/parser/history_schema_provider.h"
#include "canal/schema/ddl.h"
#include "canal/schema/statement.h"

namespace canal::parser {
namespace {

constexpr uint64_t kAnsiQuotes = 1u << 2;          // sql_mode ANSI_QUOTES
constexpr uint64_t kNoBackslashEscapes = 1u << 20;  // sql_mode NO_BACKSLASH_ESCAPES

std::string TableName(std::string_view db, std::string_view table) {
  return "`" + std::string(db) + "`.`" + std::string(table) + "`";
}

// A statement for a log line or an error: one line, cut, control bytes escaped.
std::string Excerpt(std::string_view sql) {
  std::string out;
  for (char c : sql.substr(0, 300)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  if (sql.size() > 300) out += "...";
  return out;
}

std::string Describe(const schema::TableSchema& t) {
  std::string s = std::to_string(t.columns.size()) + " columns (";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) s += ", ";
    s += t.columns[i].name + " " + t.columns[i].type;
  }
  return s + ")";
}

// Whether a replayed statement changed the history (every table is tracked,
// so every such statement is stored, for a rebuild to replay it).
bool ChangesHistory(const schema::DdlStatement& ddl) {
  using K = schema::DdlStatement::Kind;
  return ddl.kind != K::kNotDdl && ddl.kind != K::kNoColumnChange && ddl.kind != K::kTruncate;
}

}  // namespace

SchemaTracker::SchemaTracker(SchemaTrackerOptions options, std::shared_ptr<spdlog::logger> log)
    : options_(std::move(options)),
      log_(log ? std::move(log) : spdlog::default_logger()),
      history_(options_.scope),
      provider_(&history_, /*strict=*/true, FixHint()) {
  provider_.set_learn_missing([this](std::string_view db, std::string_view table) { return LearnFromPrimary(db, table); });
  store_ = options_.store != nullptr ? options_.store
                                     : std::make_shared<schema::FileHistoryStore>(options_.history_file);
}

std::string SchemaTracker::FixHint() const {
  if (options_.store != nullptr) {
    return "; to rebuild the schema history from the primary: stop the destination on every server, delete " +
           options_.store->Describe() + " (zkCli.sh deleteall <path>), and start again: the next start "
           "snapshots the primary's tables at its current position (docs/schema-history.md, \"Recovering\")";
  }
  return "; to rebuild the schema history from the primary: stop the server, run `bin/canal-admin.sh "
         "rebuild-schema-history " + options_.destination + "` (it moves " + options_.history_file +
         " aside; the next start snapshots the primary's tables at its current position), and start again "
         "(docs/schema-history.md, \"Recovering\")";
}

Status SchemaTracker::Save() {
  return store_->Save(stored_).WithContext("storing the schema history in " + store_->Describe());
}

Status SchemaTracker::MaybeCompact(const schema::BinlogPoint& start) {
  if (options_.compact_interval_s <= 0 || start.empty()) return Status::OK();
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  if (now_ms - stored_.compacted_at_ms < options_.compact_interval_s * 1000) return Status::OK();
  const int64_t cutoff = now_ms / 1000 - options_.compact_expire_s;
  size_t folded = 0;
  CANAL_RETURN_IF_ERROR(stored_.Compact(start, cutoff <= 0 ? 0 : static_cast<uint32_t>(cutoff), options_.scope,
                                        lexer_, &folded)
                            .WithContext("compacting the schema history"));
  stored_.compacted_at_ms = now_ms;
  CANAL_RETURN_IF_ERROR(Save());
  if (folded > 0) {
    log_->info("[{}] schema history: {} DDL record(s) older than {} h folded into the snapshot, now at {}",
               options_.destination, folded, options_.compact_expire_s / 3600, stored_.snapshot_at.ToString());
  }
  return Status::OK();
}

Status SchemaTracker::Open(mysql::QueryConnection* query, const mysql::ServerInfo& info,
                           const schema::BinlogPoint& start) {
  query_ = query;
  info_ = info;
  start_ = start;
  unknown_since_.clear();
  lexer_.mariadb = info.mariadb;
  lexer_.server_version = static_cast<uint32_t>(info.major * 10000 + info.minor * 100 + info.patch);
  Status s = store_->Load(&stored_);
  if (s.IsNotFound()) {
    schema::SchemaHistory snap(options_.scope);
    schema::BinlogPoint at;
    CANAL_RETURN_IF_ERROR(TakeSchemaSnapshot(query, info, options_.scope, &snap, &at));
    stored_ = schema::HistoryLog{};
    stored_.SetSnapshot(at, snap);
    CANAL_RETURN_IF_ERROR(Save());
    log_->info("[{}] schema history: snapshot of {} table(s) at {} stored in {}", options_.destination,
               stored_.tables.size(), at.ToString(), store_->Describe());
  } else if (!s.ok()) {
    return s.WithContext("loading the schema history");
  }
  CANAL_RETURN_IF_ERROR(MaybeCompact(start));
  history_ = schema::SchemaHistory(options_.scope);
  checked_.reset();
  CANAL_RETURN_IF_ERROR(stored_.Rebuild(start, &history_, lexer_));
  (void)history_.TakeNotes();  // unknown since before the start: LearnFromPrimary checks from the start
  if (!start.empty() && schema::PointBefore(start, stored_.snapshot_at)) {
    log_->warn("[{}] schema history: starting at {}, before the snapshot at {}: rows before the snapshot are "
               "labelled with the snapshot's columns and stop the destination if their shape differs",
               options_.destination, start.ToString(), stored_.snapshot_at.ToString());
  }
  log_->info("[{}] schema history: {} table(s) as of {} ({} DDL record(s) stored)", options_.destination,
             history_.tables().size(), start.empty() ? std::string("the latest record") : start.ToString(),
             stored_.records.size());
  return Status::OK();
}

Status SchemaTracker::CheckNamedTable(const binlog::TableMap& tm, const binlog::EventDecoder* decoder) {
  if (checked_.get() == &tm) return Status::OK();  // the same map, no DDL since
  if (!tm.names_known) return Status::OK();  // positional names (a table outside the scope): nothing to check
  auto pin = [&] {
    if (decoder != nullptr) {
      checked_ = decoder->ShareTable(tm.table_id);
      if (checked_.get() != &tm) checked_.reset();  // not the decoder's current map: nothing to pin
    }
  };
  const schema::TableSchema* t = history_.Find(tm.db, tm.table);
  if (t == nullptr) {
    // FULL metadata names the columns itself: learn the table from it rather
    // than stop (the snapshot could not see it, e.g. no privilege; an online
    // schema change renamed a table the history did not hold into scope; a
    // DDL the parser does not understand). Outside the scope quietly, so that
    // a later RENAME into the scope carries an exact definition.
    const bool in_scope = history_.InScope(tm.db, tm.table);
    Status s = LearnTable(tm, in_scope);
    if (!s.ok() && !in_scope) return Status::OK();
    if (s.ok()) pin();
    return s;
  }
  bool same = t->columns.size() == tm.columns.size();
  for (size_t i = 0; same && i < tm.columns.size(); ++i) {
    same = schema::EqualsIgnoreCase(t->columns[i].name, tm.columns[i].name);
  }
  if (same) {
    pin();
    return Status::OK();
  }
  std::string binlog = std::to_string(tm.columns.size()) + " columns (";
  for (size_t i = 0; i < tm.columns.size(); ++i) binlog += (i > 0 ? ", " : "") + tm.columns[i].name;
  if (!history_.InScope(tm.db, tm.table)) {
    // Outside the scope the binlog's names win: the history heals itself.
    log_->warn("[{}] schema history: {} (outside the filter) held {} but the binlog's TABLE_MAP has {}); "
               "relearned from the TABLE_MAP",
               options_.destination, TableName(tm.db, tm.table), Describe(*t), binlog);
    if (!LearnTable(tm, false).ok()) history_.MarkUnknown(tm.db, tm.table, "its history disagreed with a TABLE_MAP");
    (void)history_.TakeNotes();
    return Status::OK();
  }
  return Status::Corruption("the schema history of " + TableName(tm.db, tm.table) + " holds " + Describe(*t) +
                            " but the binlog's TABLE_MAP (FULL metadata) has " + binlog + ")" + FixHint());
}

Status SchemaTracker::LearnTable(const binlog::TableMap& tm, bool in_scope) {
  schema::TableSchema t;
  t.db = tm.db;
  t.name = tm.table;
  schema::LexerOptions o = lexer_;
  for (const binlog::ColumnInfo& c : tm.columns) {
    // The column's type as Canal prints it ("int(11) unsigned", "enum('a')"), read by the DDL parser.
    schema::DdlStatement ddl;
    const std::string type = c.column_type.empty() ? binlog::ColumnTypeText(c, false) : c.column_type;
    if (!schema::ParseDdl("CREATE TABLE t (c " + type + ")", "d", o, &ddl).ok() || ddl.columns.size() != 1) {
      return Status::Corruption("the schema history holds no table " + TableName(tm.db, tm.table) +
                                " and its TABLE_MAP's column " + c.name + " (" + type + ") cannot be read" +
                                FixHint());
    }
    schema::Column col = std::move(ddl.columns[0]);
    col.name = c.name;
    col.is_key = c.is_key;
    col.nullable = c.nullable;
    if (c.signedness_known) col.is_unsigned = c.is_unsigned;
    t.columns.push_back(std::move(col));
  }
  if (in_scope) {
    const std::string why = history_.Unknown(tm.db, tm.table);
    log_->warn("[{}] schema history: {} was not held ({}); learned its {} column(s) from a FULL-metadata "
               "TABLE_MAP (charsets unknown until its next DDL or a rebuild)",
               options_.destination, TableName(tm.db, tm.table), why.empty() ? "not in the snapshot" : why,
               t.columns.size());
  }
  history_.PutTable(std::move(t));
  return Status::OK();
}

Status SchemaTracker::CheckNoDdlBetween(const schema::BinlogPoint& from, const schema::BinlogPoint& to,
                                        std::string_view db, std::string_view table) {
  constexpr size_t kMaxEvents = 200'000;  // beyond: too far behind the primary to check cheaply
  if (schema::PointBefore(to, from)) {
    return Status::Aborted("the primary's position " + to.ToString() + " is before " + from.ToString());
  }
  std::vector<mysql::BinaryLogFile> files;
  CANAL_RETURN_IF_ERROR(query_->ShowBinaryLogs(&files));
  size_t seen = 0;
  bool started = false;
  for (const mysql::BinaryLogFile& f : files) {
    if (f.name == from.file) started = true;
    if (!started) continue;
    const uint64_t first = f.name == from.file ? from.position : 4;
    mysql::ResultSet rs;
    CANAL_RETURN_IF_ERROR(query_->Query("SHOW BINLOG EVENTS IN " + query_->QuoteString(f.name) + " FROM " +
                                            std::to_string(first) + " LIMIT " + std::to_string(kMaxEvents - seen + 1),
                                        &rs));
    for (const auto& row : rs.rows) {
      // Log_name, Pos, Event_type, Server_id, End_log_pos, Info
      if (row.size() < 6 || !row[1] || !row[2] || !row[5]) continue;
      const uint64_t pos = std::strtoull(row[1]->c_str(), nullptr, 10);
      if (f.name == to.file && pos >= to.position) return Status::OK();
      if (++seen > kMaxEvents) {
        return Status::Aborted("more than " + std::to_string(kMaxEvents) + " events between " + from.ToString() +
                               " and the primary's position " + to.ToString() + " to check");
      }
      if (*row[2] != "Query" || (f.name == from.file && pos == from.position)) continue;
      // Info is "use `db`; statement" when the statement had a default database.
      std::string_view info = *row[5];
      std::string default_db;
      if (info.starts_with("use `")) {
        const size_t end = info.find("`; ");
        if (end != std::string_view::npos) {
          default_db.assign(info.substr(5, end - 5));
          info.remove_prefix(end + 3);
        }
      }
      if (!schema::MayChangeColumns(schema::ClassifyStatement(info, lexer_))) continue;
      schema::DdlStatement ddl;
      const std::string at = f.name + ":" + std::to_string(pos);
      if (!schema::ParseDdl(info, default_db, lexer_, &ddl).ok()) {
        return Status::Aborted("the DDL at " + at + " is not understood: " + Excerpt(info));
      }
      auto names = [&](const schema::TableRef& r) { return r.db == db && r.name == table; };
      bool touches = names(ddl.table) || names(ddl.like) || names(ddl.rename_to) ||
                     (ddl.kind == schema::DdlStatement::Kind::kDropDatabase && ddl.database == db);
      for (const auto& [a, b] : ddl.renames) touches = touches || names(a) || names(b);
      for (const auto& r : ddl.tables) touches = touches || names(r);
      if (touches) return Status::Aborted("the DDL at " + at + " changes it later: " + Excerpt(info));
    }
    if (f.name == to.file) return Status::OK();
  }
  return started ? Status::OK() : Status::Aborted("binlog " + from.file + " is no longer on the primary");
}

Status SchemaTracker::LearnFromPrimary(std::string_view db, std::string_view table) {
  if (query_ == nullptr) return Status::NotSupported("no connection to the primary");
  auto since = unknown_since_.find({std::string(db), std::string(table)});
  const schema::BinlogPoint from = since != unknown_since_.end() ? since->second : start_;
  if (from.empty()) return Status::NotSupported("no binlog position to check from");
  schema::TableSchema t;
  bool found = false;
  CANAL_RETURN_IF_ERROR(ReadTableFromPrimary(query_, info_, db, table, &t, &found));
  if (!found) return Status::NotFound("the primary has no base table " + TableName(db, table) + " now");
  mysql::MasterStatus now;
  CANAL_RETURN_IF_ERROR(query_->ShowMasterStatus(&now));
  const schema::BinlogPoint to{now.file, now.position};
  // Exact only if the table read now is the table as of the row being
  // decoded: no DDL naming it from the point since which it is unknown (before
  // this row) to the primary's position after the read.
  CANAL_RETURN_IF_ERROR(CheckNoDdlBetween(from, to, db, table));
  log_->warn("[{}] schema history: {} was not held ({}); took its {} column(s) from the primary's "
             "information_schema (no DDL on it between {} and the primary's {}); the decoder checks them against "
             "the TABLE_MAP's types",
             options_.destination, TableName(db, table), history_.Unknown(db, table), t.columns.size(),
             from.ToString(), to.ToString());
  history_.PutTable(std::move(t));
  checked_.reset();
  return Status::OK();
}

Status SchemaTracker::OnQuery(const binlog::QueryEvent& q, const schema::BinlogPoint& at, uint32_t timestamp) {
  schema::LexerOptions lexer = lexer_;
  if (q.has_sql_mode) {
    lexer.ansi_quotes = (q.sql_mode & kAnsiQuotes) != 0;
    lexer.no_backslash_escapes = (q.sql_mode & kNoBackslashEscapes) != 0;
  }
  const schema::StatementClass cls = schema::ClassifyStatement(q.query, lexer);
  if (!schema::MayChangeColumns(cls)) return Status::OK();
  checked_.reset();  // any DDL: every map is compared afresh
  if (!stored_.snapshot_at.empty() && schema::PointBefore(at, stored_.snapshot_at)) {
    return Status::OK();  // the snapshot already shows its effect
  }
  auto fail = [&](const Status& s) {
    return Status::Corruption("cannot replay the DDL at " + at.ToString() + " into the schema history: " +
                              s.ToString() + "; statement: " + Excerpt(q.query) + FixHint());
  };
  schema::DdlStatement ddl;
  Status s = history_.ApplySql(q.query, q.db, lexer, &ddl);
  if (!s.ok()) return fail(s);
  const std::vector<schema::SchemaHistory::UnknownNote> notes = history_.TakeNotes();
  for (const auto& n : notes) {
    unknown_since_[{n.db, n.table}] = at;
    log_->warn("[{}] schema history: after the DDL at {}, {} is unknown ({}); outside the filter its rows keep "
               "positional names, inside it FULL-metadata TABLE_MAPs or the primary's information_schema (when no "
               "DDL on it follows) name them, or its first row stops the destination",
               options_.destination, at.ToString(), TableName(n.db, n.table), n.reason);
  }
  if (notes.empty() && !ChangesHistory(ddl)) return Status::OK();
  schema::HistoryRecord record;
  record.at = at;
  record.db.assign(q.db);
  record.sql.assign(q.query);
  record.ts = timestamp;
  if (stored_.Append(std::move(record))) {
    CANAL_RETURN_IF_ERROR(Save());  // durable before the DDL goes on to the sink
    log_->info("[{}] schema history: {} at {}", options_.destination, Excerpt(q.query), at.ToString());
  }
  return Status::OK();
}

}  // namespace canal::parser
