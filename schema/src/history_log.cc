#include "canal/schema/history_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace canal::schema {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "canal-schema-history/1";

uint64_t FileSequence(const std::string& file) {
  const size_t dot = file.rfind('.');
  uint64_t n = 0;
  for (size_t i = dot == std::string::npos ? file.size() : dot + 1; i < file.size(); ++i) {
    if (file[i] < '0' || file[i] > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(file[i] - '0');
  }
  return n;
}

Column ColumnFrom(const json& j) {
  Column c;
  c.name = j.at("name").get<std::string>();
  c.type = j.at("type").get<std::string>();
  c.is_unsigned = j.value("unsigned", false);
  c.nullable = j.value("nullable", true);
  c.is_key = j.value("key", false);
  c.charset = j.value("charset", std::string());
  c.collation = j.value("collation", std::string());
  if (j.contains("labels")) c.labels = j.at("labels").get<std::vector<std::string>>();
  c.length = j.value("length", int64_t{-1});
  c.precision = j.value("precision", int64_t{-1});
  c.scale = j.value("scale", int64_t{-1});
  return c;
}

json PointJson(const BinlogPoint& p) { return {{"file", p.file}, {"position", p.position}}; }
BinlogPoint PointFrom(const json& j) {
  return BinlogPoint{j.at("file").get<std::string>(), j.at("position").get<uint64_t>()};
}

}  // namespace

bool PointBefore(const BinlogPoint& a, const BinlogPoint& b) {
  const uint64_t fa = FileSequence(a.file), fb = FileSequence(b.file);
  if (fa != fb) return fa < fb;
  if (fa == 0 && a.file != b.file) return a.file < b.file;
  return a.position < b.position;
}

Status HistoryLog::Rebuild(const BinlogPoint& at, SchemaHistory* out, const LexerOptions& options) const {
  for (const auto& [db, cs] : databases) out->PutDatabase(db, cs);
  for (const TableSchema& t : tables) out->PutTable(t);
  for (const HistoryRecord& r : records) {
    if (!at.empty() && !PointBefore(r.at, at)) break;
    Status s = out->ApplySql(r.sql, r.db, options);
    if (!s.ok()) return s.WithContext("replaying the stored DDL at " + r.at.ToString());
  }
  return Status::OK();
}

bool HistoryLog::Append(HistoryRecord record) {
  if (!records.empty() && !PointBefore(records.back().at, record.at)) return false;
  if (!snapshot_at.empty() && PointBefore(record.at, snapshot_at)) return false;
  records.push_back(std::move(record));
  return true;
}

void HistoryLog::SetSnapshot(const BinlogPoint& at, const SchemaHistory& history) {
  snapshot_at = at;
  databases = history.databases();
  tables.clear();
  for (const auto& [key, t] : history.tables()) tables.push_back(t);
}

Status HistoryLog::Compact(const BinlogPoint& at, uint32_t older_than, const SchemaHistory::Scope& scope,
                           const LexerOptions& options, size_t* folded) {
  size_t n = 0;
  while (n < records.size() && PointBefore(records[n].at, at) && records[n].ts < older_than) ++n;
  if (folded != nullptr) *folded = n;
  if (n == 0) return Status::OK();
  const BinlogPoint after{records[n - 1].at.file, records[n - 1].at.position + 1};
  SchemaHistory h(scope);
  CANAL_RETURN_IF_ERROR(Rebuild(after, &h, options));
  records.erase(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(n));
  SetSnapshot(after, h);
  return Status::OK();
}

namespace {

// JSON text of a string: plain ASCII as is, anything else through the JSON
// library (escapes; invalid UTF-8 replaced).
void AppendJsonString(std::string_view v, std::string* out) {
  bool plain = true;
  for (char ch : v) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u >= 0x7f || ch == '"' || ch == '\\') {
      plain = false;
      break;
    }
  }
  if (!plain) {
    *out += json(std::string(v)).dump(-1, ' ', false, json::error_handler_t::replace);
    return;
  }
  *out += '"';
  out->append(v);
  *out += '"';
}

// The snapshot's tables written directly: with every table of the primary
// tracked (thousands), building them as a JSON tree first was ~90% of
// storing the history after each DDL.
void AppendTablesJson(const std::vector<TableSchema>& tables, std::string* out) {
  *out += '[';
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    const TableSchema& t = tables[ti];
    if (ti > 0) *out += ',';
    *out += "{\"db\":";
    AppendJsonString(t.db, out);
    *out += ",\"name\":";
    AppendJsonString(t.name, out);
    *out += ",\"charset\":";
    AppendJsonString(t.charset, out);
    *out += ",\"collation\":";
    AppendJsonString(t.collation, out);
    *out += ",\"columns\":[";
    for (size_t ci = 0; ci < t.columns.size(); ++ci) {
      const Column& c = t.columns[ci];
      if (ci > 0) *out += ',';
      *out += "{\"name\":";
      AppendJsonString(c.name, out);
      *out += ",\"type\":";
      AppendJsonString(c.type, out);
      if (c.is_unsigned) *out += ",\"unsigned\":true";
      if (!c.nullable) *out += ",\"nullable\":false";
      if (c.is_key) *out += ",\"key\":true";
      if (!c.charset.empty()) {
        *out += ",\"charset\":";
        AppendJsonString(c.charset, out);
      }
      if (!c.collation.empty()) {
        *out += ",\"collation\":";
        AppendJsonString(c.collation, out);
      }
      if (!c.labels.empty()) {
        *out += ",\"labels\":[";
        for (size_t li = 0; li < c.labels.size(); ++li) {
          if (li > 0) *out += ',';
          AppendJsonString(c.labels[li], out);
        }
        *out += ']';
      }
      if (c.length >= 0) *out += ",\"length\":" + std::to_string(c.length);
      if (c.precision >= 0) *out += ",\"precision\":" + std::to_string(c.precision);
      if (c.scale >= 0) *out += ",\"scale\":" + std::to_string(c.scale);
      *out += '}';
    }
    *out += "]}";
  }
  *out += ']';
}

}  // namespace

std::string HistoryLog::ToJson() const {
  json recs = json::array();
  for (const HistoryRecord& r : records) {
    recs.push_back({{"at", PointJson(r.at)}, {"db", r.db}, {"sql", r.sql}, {"ts", r.ts}});
  }
  json doc = {{"format", kFormat},       {"snapshot_at", PointJson(snapshot_at)},
              {"databases", databases},  {"records", std::move(recs)},
              {"compacted_at_ms", compacted_at_ms}};
  // Invalid UTF-8 in a statement (a latin1 literal) is replaced, not refused.
  std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  text.pop_back();  // the closing brace: the tables go last
  text.reserve(text.size() + 64 * tables.size());
  text += ",\"tables\":";
  AppendTablesJson(tables, &text);
  text += '}';
  return text;
}

Status HistoryLog::FromJson(std::string_view text, HistoryLog* out) {
  HistoryLog log;
  try {
    const json doc = json::parse(text);
    if (doc.value("format", std::string()) != kFormat) {
      return Status::Corruption("not a schema history (format is not " + std::string(kFormat) + ")");
    }
    log.snapshot_at = PointFrom(doc.at("snapshot_at"));
    log.databases = doc.at("databases").get<std::map<std::string, std::string>>();
    for (const json& t : doc.at("tables")) {
      TableSchema ts;
      ts.db = t.at("db").get<std::string>();
      ts.name = t.at("name").get<std::string>();
      ts.charset = t.value("charset", std::string());
      ts.collation = t.value("collation", std::string());
      for (const json& c : t.at("columns")) ts.columns.push_back(ColumnFrom(c));
      log.tables.push_back(std::move(ts));
    }
    for (const json& r : doc.at("records")) {
      HistoryRecord rec;
      rec.at = PointFrom(r.at("at"));
      rec.db = r.at("db").get<std::string>();
      rec.sql = r.at("sql").get<std::string>();
      rec.ts = r.value("ts", uint32_t{0});
      log.records.push_back(std::move(rec));
    }
    log.compacted_at_ms = doc.value("compacted_at_ms", int64_t{0});
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("schema history: ") + e.what());
  }
  *out = std::move(log);
  return Status::OK();
}

Status SaveHistoryFile(const std::string& path, const HistoryLog& log) {
  const std::string text = log.ToJson();
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);  // the open below reports failures
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("creating " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      return Status::IOError("writing " + tmp + ": " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return Status::IOError("syncing " + tmp + ": " + std::strerror(errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IOError("renaming " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself survives a crash
    ::close(dfd);
  }
  return Status::OK();
}

Status LoadHistoryFile(const std::string& path, HistoryLog* log) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (::access(path.c_str(), F_OK) != 0) return Status::NotFound("no schema history at " + path);
    return Status::IOError("reading " + path + ": " + std::strerror(errno));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return HistoryLog::FromJson(ss.str(), log).WithContext(path);
}

}  // namespace canal::schema
