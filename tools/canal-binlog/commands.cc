#include "commands.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <unordered_map>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/column_text.h"
#include "canal/render/canal_value.h"
#include "canal/parser/history_schema_provider.h"
#include "canal/schema/history_log.h"
#include "canal/schema/statement.h"
#include "canal/tools/row_json.h"
#include "ordered_output.h"
#include "row_lines.h"

namespace canal::tools {

namespace {

using binlog::ColumnValue;
using binlog::Event;
using binlog::EventType;

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool StartsWithWord(std::string_view sql, std::string_view word) {
  size_t i = 0;
  while (i < sql.size() && (sql[i] == ' ' || sql[i] == '\n' || sql[i] == '\t' || sql[i] == '\r')) ++i;
  // Skip leading comments such as /* section 1.1 */ that clients keep.
  while (i + 1 < sql.size() && sql[i] == '/' && sql[i + 1] == '*') {
    size_t end = sql.find("*/", i + 2);
    if (end == std::string_view::npos) return false;
    i = end + 2;
    while (i < sql.size() && (sql[i] == ' ' || sql[i] == '\n' || sql[i] == '\t' || sql[i] == '\r')) ++i;
  }
  if (sql.size() - i < word.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    char c = sql[i + k];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (c != word[k]) return false;
  }
  size_t after = i + word.size();
  return after == sql.size() || !((sql[after] >= 'A' && sql[after] <= 'Z') || (sql[after] >= 'a' && sql[after] <= 'z') || sql[after] == '_');
}

// Transaction control carried in QUERY events: not reported as statements.
bool IsTransactionControl(std::string_view sql) {
  for (std::string_view w : {"BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "XA", "RELEASE"}) {
    if (StartsWithWord(sql, w)) return true;
  }
  return false;
}

// DDL and access control, as the project's one classifier reads them.
bool IsDdl(std::string_view sql) {
  const schema::StatementKind k = schema::ClassifyStatement(sql).kind;
  return k == schema::StatementKind::kDdl || k == schema::StatementKind::kDcl;
}

const char* KindName(binlog::RowsKind k) {
  switch (k) {
    case binlog::RowsKind::kWrite: return "INSERT";
    case binlog::RowsKind::kUpdate: return "UPDATE";
    case binlog::RowsKind::kDelete: return "DELETE";
  }
  return "?";
}

void Fail(const Status& s) { std::fprintf(stderr, "canal-binlog: %s\n", s.ToString().c_str()); }

struct Position {
  std::string_view file;
  uint64_t pos = 0;
  std::string gtid;
  uint32_t ts = 0;
};

void AppendHeader(const Position& p, std::string& b) {
  AppendLineHead(p.file, static_cast<int64_t>(p.pos), p.gtid, p.ts, &b);
}

// A user variable's value as text: strings as their bytes, numbers decoded from
// the little-endian forms the server logs (REAL 8-byte double, INT 8-byte
// integer with the unsigned flag, DECIMAL as precision, scale and binary decimal).
void UserVarText(const binlog::UserVarEvent& uv, std::string* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(uv.value.data());
  const size_t n = uv.value.size();
  switch (uv.value_type) {
    case 1:  // REAL_RESULT
      if (n == 8) {
        double d;
        std::memcpy(&d, p, 8);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", d);
        out->append(buf);
        return;
      }
      break;
    case 2:  // INT_RESULT
      if (n == 8) {
        uint64_t u = 0;
        for (int i = 7; i >= 0; --i) u = (u << 8) | p[i];
        out->append((uv.flags & 1) ? std::to_string(u) : std::to_string(static_cast<int64_t>(u)));
        return;
      }
      break;
    case 4:  // DECIMAL_RESULT
      if (n >= 2 && binlog::AppendDecimalText(uv.value.substr(2), p[0], p[1], out).ok()) return;
      break;
    default:
      break;
  }
  out->append(uv.value);
}

// Walks every event of every input, calling `on_event` for each.
// `before_close` runs whenever the reader is about to let go of a file's bytes
// (next file, end, error): nothing may use that file's events afterwards.
template <typename F, typename G>
int ForEachEvent(const std::vector<std::string>& inputs, bool verify, F&& on_event, G&& before_close,
                 binlog::TableSchemaProvider* schema_provider = nullptr) {
  std::vector<std::string> files;
  Status s = binlog::ExpandBinlogPaths(inputs, &files);
  if (!s.ok()) {
    Fail(s);
    return 1;
  }
  binlog::DecoderOptions dopts;
  dopts.verify_checksum = verify;
  dopts.schema_provider = schema_provider;
  binlog::EventDecoder decoder(dopts);
  binlog::BinlogFileReader reader(&decoder);
  Event ev;
  for (const auto& f : files) {
    s = reader.Open(f);
    while (s.ok()) {
      bool eof = false;
      s = reader.Next(&ev, &eof);
      if (!s.ok() || eof) break;
      if constexpr (std::is_invocable_v<F&, const binlog::BinlogFileReader&, const binlog::EventDecoder&, const Event&>) {
        s = on_event(reader, std::as_const(decoder), ev);
      } else {
        s = on_event(reader, ev);
      }
    }
    before_close();
    if (!s.ok()) {
      Fail(s);
      return 1;
    }
  }
  return 0;
}

template <typename F>
int ForEachEvent(const std::vector<std::string>& inputs, bool verify, F&& on_event) {
  return ForEachEvent(inputs, verify, on_event, [] {});
}

}  // namespace

namespace {

// Rows events with fewer row bytes than this are formatted on the decoding
// thread (see RunDecode); MariaDB and MySQL cut bulk rows events at 8 KiB.
constexpr size_t kInlineRowsBytes = 2048;
// Rows events go to the formatting threads in batches of about this many row
// bytes (a few bulk events).
constexpr size_t kBatchRowsBytes = 48 << 10;

int CountOnly(const DecodeCommandOptions& o) {
  binlog::RowsReader rows_reader;
  binlog::RowChange change;
  uint64_t rows = 0, events = 0, bytes = 0;
  auto start = std::chrono::steady_clock::now();
  int rc = ForEachEvent(o.inputs, o.verify_checksum, [&](const binlog::BinlogFileReader&, const Event& ev) -> Status {
    ++events;
    if (!ev.in_payload) bytes += ev.raw.size();
    if (const auto* rows_ev = ev.As<binlog::RowsEvent>()) {
      rows_reader.Reset(*rows_ev);
      while (true) {
        bool done = false;
        CANAL_RETURN_IF_ERROR(rows_reader.Next(&change, &done));
        if (done) break;
        ++rows;
      }
    }
    return Status::OK();
  });
  if (rc != 0) return rc;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"rows\":%llu,\"events\":%llu,\"bytes\":%llu,\"seconds\":%.6f,\"rows_per_second\":%.0f,\"mb_per_second\":%.2f}\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(events),
              static_cast<unsigned long long>(bytes), secs, secs > 0 ? rows / secs : 0.0,
              secs > 0 ? bytes / secs / 1e6 : 0.0);
  return 0;
}

// The schema history of `--schema FILE`, as of the first event decoded, moved
// forward by the DDL the files hold. Tables it does not know keep positional
// names (@1, @2, ...); DDL it cannot replay is reported on stderr.
class SchemaFromHistory {
 public:
  Status Load(const std::string& path) {
    CANAL_RETURN_IF_ERROR(schema::LoadHistoryFile(path, &stored_));
    loaded_ = true;
    return Status::OK();
  }
  bool loaded() const { return loaded_; }
  binlog::TableSchemaProvider* provider() { return &provider_; }

  Status OnEvent(std::string_view file_name, const Event& ev) {
    const std::string file(file_name);
    if (!ready_) {
      ready_ = true;
      Status s = stored_.Rebuild(schema::BinlogPoint{file, ev.offset}, &history_);
      if (!s.ok()) return s.WithContext("--schema");
    }
    const auto* q = ev.As<binlog::QueryEvent>();
    // DDL before the snapshot: its effect is in the snapshot already.
    if (q != nullptr && schema::PointBefore(schema::BinlogPoint{file, ev.offset}, stored_.snapshot_at)) {
      return Status::OK();
    }
    if (q == nullptr || !schema::MayChangeColumns(schema::ClassifyStatement(q->query))) return Status::OK();
    Status s = history_.ApplySql(q->query, q->db);
    if (!s.ok()) {
      std::fprintf(stderr, "canal-binlog: %s: offset %llu: DDL not replayed into the --schema history: %s\n",
                   file.c_str(), static_cast<unsigned long long>(ev.offset), s.ToString().c_str());
    }
    return Status::OK();
  }

 private:
  schema::HistoryLog stored_;
  schema::SchemaHistory history_;
  parser::HistorySchemaProvider provider_{&history_, /*strict=*/false};
  bool loaded_ = false, ready_ = false;
};

// What a statement-format replica needs to replay the next statement: the
// INTVAR, RAND and USER_VAR events before it, as the statement line's
// "context" member.
class StatementContext {
 public:
  // Takes `ev` when it is one of those events.
  bool Take(const Event& ev) {
    if (const auto* iv = ev.As<binlog::IntvarEvent>()) {
      context_.append(context_.empty() ? "" : ",");
      context_.append(iv->kind == 1 ? "\"last_insert_id\":" : "\"insert_id\":");
      context_.append(std::to_string(iv->value));
    } else if (const auto* rd = ev.As<binlog::RandEvent>()) {
      context_.append(context_.empty() ? "" : ",");
      context_.append("\"rand_seed1\":" + std::to_string(rd->seed1) + ",\"rand_seed2\":" + std::to_string(rd->seed2));
    } else if (const auto* uv = ev.As<binlog::UserVarEvent>()) {
      user_vars_.append(user_vars_.empty() ? "" : ",");
      AppendJsonString(uv->name, &user_vars_);
      user_vars_.push_back(':');
      if (uv->is_null) {
        user_vars_.append("null");
      } else {
        std::string text;
        UserVarText(*uv, &text);
        AppendJsonString(text, &user_vars_);
      }
    } else {
      return false;
    }
    return true;
  }
  // ,"context":{...} when there is any.
  void AppendTo(std::string* b) const {
    if (context_.empty() && user_vars_.empty()) return;
    b->append(",\"context\":{");
    b->append(context_);
    if (!user_vars_.empty()) {
      b->append(context_.empty() ? "\"user_vars\":{" : ",\"user_vars\":{");
      b->append(user_vars_);
      b->push_back('}');
    }
    b->push_back('}');
  }
  void Clear() {
    context_.clear();
    user_vars_.clear();
  }

 private:
  std::string context_, user_vars_;
};

}  // namespace

int RunDecode(const DecodeCommandOptions& o) {
  if (o.count_only) return CountOnly(o);
  render::ValueFormatOptions fo;
  fo.readable = o.readable;
  fo.forms = o.mysql_forms ? render::TextForms::kMysql : render::TextForms::kCanal;
  fo.timestamp_utc_offset_seconds = o.tz_offset_seconds;
  const int threads = o.threads;
  std::unique_ptr<FormatPool> pool;
  if (threads > 0) pool = std::make_unique<FormatPool>(threads, fo);
  // Inline formatting (threads == 0, small events, and events whose rows
  // depend on decoder state, such as partial JSON updates) uses these.
  RowFormatter inline_formatter;
  std::string inline_prefix, statement;
  uint64_t inline_rows = 0;

  std::unordered_map<uint64_t, std::shared_ptr<const TableSnapshot>> tables;
  OrderedOutput output(pool.get(), threads);
  Position pos;
  StatementContext context;

  // --schema: column names from a stored schema history (MINIMAL metadata).
  SchemaFromHistory names;
  if (!o.schema_file.empty()) {
    Status s = names.Load(o.schema_file);
    if (!s.ok()) {
      Fail(s);
      return 1;
    }
  }

  auto on_event = [&](const binlog::BinlogFileReader& r, const binlog::EventDecoder& decoder,
                      const Event& ev) -> Status {
    if (!output.task_error().ok()) return output.task_error();
    pos.file = BaseName(r.path());
    pos.pos = ev.offset;
    pos.ts = ev.header.timestamp;
    if (names.loaded()) CANAL_RETURN_IF_ERROR(names.OnEvent(pos.file, ev));
    if (ev.type() == EventType::kFormatDescription) tables.clear();
    if (const auto* g = ev.As<binlog::MariaGtidEvent>()) {
      pos.gtid = g->ToString();
    } else if (const auto* g2 = ev.As<binlog::GtidEvent>()) {
      pos.gtid = g2->anonymous ? std::string() : g2->ToString();
    } else if (const auto* tm = ev.As<binlog::TableMapEventRef>()) {
      std::shared_ptr<const binlog::TableMap> map = decoder.ShareTable(tm->table->table_id);
      // (A map the decoder does not hold, which it does not make today, is copied.)
      if (map.get() != tm->table) map = std::make_shared<const binlog::TableMap>(*tm->table);
      // A transaction repeating its table's TABLE_MAP gets the decoder's same
      // map: keep its snapshot and keys.
      auto it = tables.find(tm->table->table_id);
      if (it == tables.end() || it->second->map != map) {
        if (tables.size() > 4096) tables.clear();
        auto snap = std::make_shared<TableSnapshot>();
        snap->map = std::move(map);
        snap->keys.Refresh(snap->table());
        tables[tm->table->table_id] = std::move(snap);
      }
    } else if (const auto* rows_ev = ev.As<binlog::RowsEvent>()) {
      auto it = tables.find(rows_ev->table_id);
      if (it == tables.end()) return Status::Corruption("rows event without a table snapshot");
      const std::shared_ptr<const TableSnapshot>& snap = it->second;
      const binlog::TableMap& t = snap->table();
      const bool stateful = rows_ev->json_rows != nullptr;
      // A hand-off (task, queue lock, wake-up, in-order wait) costs more than
      // formatting a few rows: small events, such as single-row transactions,
      // are formatted here, so the threads never make decoding slower.
      const bool small = rows_ev->rows.size() < kInlineRowsBytes;
      if (!pool || stateful || small) {
        inline_prefix.clear();
        AppendHeader(pos, inline_prefix);
        AppendRowTarget(t.db, t.table, KindName(rows_ev->info.kind), &inline_prefix);
        if (!t.names_known) inline_prefix.append(",\"columns\":\"by-position\"");
        // Partial JSON documents come from the decoder's row cache, in order:
        // those events keep the decoder's table (rows_ev->table).
        binlog::RowsEvent event = *rows_ev;
        if (!stateful) event.table = &t;
        CANAL_RETURN_IF_ERROR(FormatRows(event, t, snap->keys, inline_prefix, {pos.file, pos.pos}, fo,
                                         &inline_formatter, output.InlineTarget(), &inline_rows));
      } else {
        OutputTask* batch = output.batch();
        if (batch == nullptr) batch = output.StartBatch(std::string(rows_ev->source));
        TaskPart& part = batch->parts.emplace_back();
        part.table = snap;
        part.event = *rows_ev;
        part.event.table = &t;
        part.event.source = batch->source;
        part.where = {pos.file, pos.pos};
        part.prefix.reserve(160);
        AppendHeader(pos, part.prefix);
        AppendRowTarget(t.db, t.table, KindName(rows_ev->info.kind), &part.prefix);
        if (!t.names_known) part.prefix.append(",\"columns\":\"by-position\"");
        if (rows_ev->info.compressed) {
          // Inflated rows live in a decoder buffer that the next event reuses.
          part.owned_rows.assign(rows_ev->rows);
          part.owns_rows = true;
        }
        batch->row_bytes += rows_ev->rows.size();
        if (batch->row_bytes >= kBatchRowsBytes) output.SubmitBatch();
      }
    } else if (context.Take(ev)) {
      // (kept for the next statement's line)
    } else if (const auto* q = ev.As<binlog::QueryEvent>()) {
      if (!IsTransactionControl(q->query)) {
        std::string& b = statement;
        b.clear();
        AppendHeader(pos, b);
        AppendStatement(q->db, IsDdl(q->query), q->query, &b);
        context.AppendTo(&b);
        b.append("}\n");
        output.InlineTarget()->Append(b);
      }
      context.Clear();
    } else if (ev.type() == EventType::kXid) {
      context.Clear();
    }
    output.AfterEvent();
    if (output.write_failed()) return Status::IOError("writing to stdout failed");
    return output.task_error();
  };
  // Rows point into the file's mapping: everything is formatted and written
  // before the reader lets go of it. Lines formatted before an error are
  // written too.
  int rc = ForEachEvent(o.inputs, o.verify_checksum, on_event, [&] { output.Finish(); },
                        names.loaded() ? names.provider() : nullptr);
  // A worker's error surfaces through the walk (reported there) or only at the
  // final drain (reported here).
  if (rc == 0 && !output.task_error().ok()) {
    Fail(output.task_error());
    rc = 1;
  }
  if (std::fflush(stdout) != 0 || output.write_failed()) {
    if (rc == 0) std::fprintf(stderr, "canal-binlog: writing to stdout failed\n");
    return 1;
  }
  return rc;
}

int RunStats(const std::vector<std::string>& inputs, bool verify) {
  std::map<std::string, uint64_t> outer, inner, rows_by_table;
  uint64_t transactions = 0, rows = 0, files = 0;
  std::string last_file;
  binlog::RowsReader rows_reader;
  binlog::RowChange change;
  int rc = ForEachEvent(inputs, verify, [&](const binlog::BinlogFileReader& r, const Event& ev) -> Status {
    if (r.path() != last_file) {
      last_file = r.path();
      ++files;
    }
    (ev.in_payload ? inner : outer)[binlog::EventTypeLabel(ev.header.type_code)]++;
    if (ev.type() == EventType::kXid || ev.type() == EventType::kXaPrepare) ++transactions;
    if (const auto* q = ev.As<binlog::QueryEvent>()) {
      if (StartsWithWord(q->query, "COMMIT")) ++transactions;
    }
    if (const auto* rows_ev = ev.As<binlog::RowsEvent>()) {
      rows_reader.Reset(*rows_ev);
      std::string key = rows_ev->table->db + "." + rows_ev->table->table;
      while (true) {
        bool done = false;
        CANAL_RETURN_IF_ERROR(rows_reader.Next(&change, &done));
        if (done) break;
        ++rows;
        ++rows_by_table[key];
      }
    }
    return Status::OK();
  });
  if (rc != 0) return rc;
  std::string b = "{\"files\":" + std::to_string(files) + ",\"events\":{";
  auto dump = [&b](const std::map<std::string, uint64_t>& m) {
    bool first = true;
    for (const auto& [k, v] : m) {
      if (!first) b.push_back(',');
      first = false;
      AppendJsonString(k, &b);
      b.push_back(':');
      b.append(std::to_string(v));
    }
  };
  dump(outer);
  b.append("},\"events_in_payloads\":{");
  dump(inner);
  b.append("},\"transactions\":" + std::to_string(transactions) + ",\"rows\":" + std::to_string(rows) +
           ",\"rows_by_table\":{");
  dump(rows_by_table);
  b.append("}}\n");
  std::fwrite(b.data(), 1, b.size(), stdout);
  return 0;
}

}  // namespace canal::tools
