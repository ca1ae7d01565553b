#include "commands.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/value_format.h"
#include "json_lines.h"

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

bool IsDdl(std::string_view sql) {
  for (std::string_view w : {"CREATE", "ALTER", "DROP", "TRUNCATE", "RENAME", "GRANT", "REVOKE"}) {
    if (StartsWithWord(sql, w)) return true;
  }
  return false;
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
  b.append("{\"file\":");
  AppendJsonString(p.file, &b);
  b.append(",\"pos\":");
  b.append(std::to_string(p.pos));
  b.append(",\"gtid\":");
  AppendJsonString(p.gtid, &b);
  b.append(",\"ts\":");
  b.append(std::to_string(p.ts));
}

Status AppendImage(const binlog::RowImage& img, const binlog::TableMap& t, const binlog::ValueFormatOptions& fo,
                   const Position& pos, std::string* scratch, std::string& b) {
  b.push_back('{');
  bool first = true;
  for (size_t i = 0; i < img.values.size(); ++i) {
    const ColumnValue& v = img.values[i];
    if (!v.is_present()) continue;
    if (!first) b.push_back(',');
    first = false;
    AppendJsonString(t.columns[i].name, &b);
    b.push_back(':');
    if (v.is_null()) {
      b.append("null");
      continue;
    }
    scratch->clear();
    Status s = binlog::AppendCanalValue(v, t.columns[i], fo, scratch);
    if (!s.ok()) {
      return s.WithContext(std::string(pos.file) + ": offset " + std::to_string(pos.pos) + ": `" + t.db + "`.`" +
                           t.table + "` column " + std::to_string(i + 1) + " (" + t.columns[i].name + ")");
    }
    AppendJsonString(*scratch, &b);
  }
  b.push_back('}');
  return Status::OK();
}

// Walks every event of every input, calling `on_event` for each.
template <typename F>
int ForEachEvent(const std::vector<std::string>& inputs, bool verify, F&& on_event) {
  std::vector<std::string> files;
  Status s = binlog::ExpandBinlogPaths(inputs, &files);
  if (!s.ok()) {
    Fail(s);
    return 1;
  }
  binlog::DecoderOptions dopts;
  dopts.verify_checksum = verify;
  binlog::EventDecoder decoder(dopts);
  binlog::BinlogFileReader reader(&decoder);
  Event ev;
  for (const auto& f : files) {
    s = reader.Open(f);
    if (!s.ok()) {
      Fail(s);
      return 1;
    }
    while (true) {
      bool eof = false;
      s = reader.Next(&ev, &eof);
      if (!s.ok()) {
        Fail(s);
        return 1;
      }
      if (eof) break;
      s = on_event(reader, ev);
      if (!s.ok()) {
        Fail(s);
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace

int RunDecode(const DecodeCommandOptions& o) {
  JsonLineWriter out(stdout);
  binlog::ValueFormatOptions fo;
  fo.readable = o.readable;
  fo.timestamp_utc_offset_seconds = o.tz_offset_seconds;
  binlog::RowsReader rows_reader;
  binlog::RowChange change;
  std::string scratch;
  Position pos;
  uint64_t rows = 0, events = 0, bytes = 0;
  auto start = std::chrono::steady_clock::now();

  int rc = ForEachEvent(o.inputs, o.verify_checksum, [&](const binlog::BinlogFileReader& r, const Event& ev) -> Status {
    ++events;
    if (!ev.in_payload) bytes += ev.raw.size();
    pos.file = BaseName(r.path());
    pos.pos = ev.offset;
    pos.ts = ev.header.timestamp;
    if (const auto* g = ev.As<binlog::MariaGtidEvent>()) {
      pos.gtid = g->ToString();
    } else if (const auto* g2 = ev.As<binlog::GtidEvent>()) {
      pos.gtid = g2->anonymous ? std::string() : g2->ToString();
    } else if (const auto* rows_ev = ev.As<binlog::RowsEvent>()) {
      rows_reader.Reset(*rows_ev);
      const binlog::TableMap& t = *rows_ev->table;
      while (true) {
        bool done = false;
        CANAL_RETURN_IF_ERROR(rows_reader.Next(&change, &done));
        if (done) break;
        ++rows;
        if (o.count_only) continue;
        std::string& b = out.buffer();
        AppendHeader(pos, b);
        b.append(",\"db\":");
        AppendJsonString(t.db, &b);
        b.append(",\"table\":");
        AppendJsonString(t.table, &b);
        b.append(",\"type\":\"");
        b.append(KindName(change.kind));
        b.push_back('"');
        if (!t.names_known) b.append(",\"columns\":\"by-position\"");
        if (change.has_before) {
          b.append(",\"before\":");
          CANAL_RETURN_IF_ERROR(AppendImage(change.before, t, fo, pos, &scratch, b));
        }
        if (change.has_after) {
          b.append(",\"after\":");
          CANAL_RETURN_IF_ERROR(AppendImage(change.after, t, fo, pos, &scratch, b));
        }
        b.push_back('}');
        out.EndLine();
      }
    } else if (const auto* q = ev.As<binlog::QueryEvent>()) {
      if (!o.count_only && !IsTransactionControl(q->query)) {
        std::string& b = out.buffer();
        AppendHeader(pos, b);
        b.append(",\"db\":");
        AppendJsonString(q->db, &b);
        b.append(IsDdl(q->query) ? ",\"type\":\"DDL\",\"sql\":" : ",\"type\":\"QUERY\",\"sql\":");
        AppendJsonString(q->query, &b);
        b.push_back('}');
        out.EndLine();
      }
    }
    return Status::OK();
  });
  if (!out.Flush()) {
    std::fprintf(stderr, "canal-binlog: writing to stdout failed\n");
    return 1;
  }
  if (rc != 0) return rc;
  if (o.count_only) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("{\"rows\":%llu,\"events\":%llu,\"bytes\":%llu,\"seconds\":%.6f,\"rows_per_second\":%.0f,\"mb_per_second\":%.2f}\n",
                static_cast<unsigned long long>(rows), static_cast<unsigned long long>(events),
                static_cast<unsigned long long>(bytes), secs, secs > 0 ? rows / secs : 0.0,
                secs > 0 ? bytes / secs / 1e6 : 0.0);
  }
  return 0;
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
