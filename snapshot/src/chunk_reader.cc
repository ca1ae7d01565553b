#include "canal/snapshot/chunk_reader.h"

#include <mysql.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "canal/common/ascii_case.h"
#include "canal/snapshot/chunk_query.h"
#include "result_binding.h"

namespace canal::snapshot {
namespace {

constexpr size_t kMaxStatementInMessage = 160;

std::string Abbreviate(std::string_view sql) {
  if (sql.size() <= kMaxStatementInMessage) return std::string(sql);
  return std::string(sql.substr(0, kMaxStatementInMessage)) + "...";
}

bool IsPrivilegeError(unsigned int code) {
  return code == 1142 /* ER_TABLEACCESS_DENIED_ERROR */ || code == 1143 /* ER_COLUMNACCESS_DENIED_ERROR */ ||
         code == 1044 /* ER_DBACCESS_DENIED_ERROR */;
}

// The most bytes a row of `shape` can count against chunk_bytes (ResultBinding::row_bytes):
// strings and BLOBs at CHARACTER_OCTET_LENGTH, anything else at 16.
uint64_t WidestRow(const TableShape& shape) {
  uint64_t n = 0;
  for (const TableColumn& c : shape.columns) {
    const uint64_t w = c.octet_length > 0 ? c.octet_length : 16;
    n = w > UINT64_MAX - n ? UINT64_MAX : n + w;
  }
  return n;
}

// Rows of `row_bytes` each that reach `chunk_bytes`, within [1, chunk_rows].
uint64_t RowsFitting(uint64_t chunk_bytes, uint64_t row_bytes, uint64_t chunk_rows) {
  if (row_bytes == 0) row_bytes = 1;
  const uint64_t n = chunk_bytes / row_bytes + (chunk_bytes % row_bytes != 0);
  return std::clamp<uint64_t>(n, 1, chunk_rows);
}

}  // namespace

struct ChunkReader::Impl {
  mysql::QueryConnection* conn;
  TableShape shape;
  ChunkKey key;
  ChunkQuery query;
  SnapshotOptions options;
  std::string table;  // `schema`.`table`, for messages
  bool open = false;
  MYSQL_STMT* first = nullptr;
  MYSQL_STMT* next = nullptr;
  ResultBinding results;
  ParamBinding params;
  std::vector<KeyValue> after;  // the bound key: a copy, so the caller may pass its result's last_key
  // The next chunk's LIMIT: rows that reach chunk_bytes at the width of the table's widest
  // possible row at first, then of the last chunk's rows. A LIMIT past the byte bound would have
  // the server send rows the chunk stops before, only to be read off and dropped (16x the
  // values for 256 KiB rows under a fixed 8192-row LIMIT).
  uint64_t limit = 1;

  explicit Impl(mysql::QueryConnection* c) : conn(c) {}
  ~Impl() { CloseStatements(); }

  void CloseStatements() {
    // A statement outlives a lost connection harmlessly: closing it then only frees it.
    if (first != nullptr) mysql_stmt_close(first);
    if (next != nullptr) mysql_stmt_close(next);
    first = next = nullptr;
  }

  // "<table>: <role> failed: ERROR n (state): text", the server's number as subcode, and the
  // GRANT that is missing when that is the error.
  Status Fail(std::string_view role, unsigned int code, const std::string& state, const std::string& text,
              std::string_view sql = {}) const {
    std::string m = table + ": " + std::string(role);
    if (!sql.empty()) m += " (" + Abbreviate(sql) + ")";
    m += " failed: ";
    if (code >= 2000 && code < 3000) {
      m += text + " (client error " + std::to_string(code) + ")";
    } else {
      m += "ERROR " + std::to_string(code) + (state.empty() ? "" : " (" + state + ")") + ": " + text;
    }
    if (IsPrivilegeError(code)) {
      m += "; the snapshot reads every column of the table: GRANT SELECT ON " + table + " TO '" +
           conn->options().user + "'";
    }
    return Status::IOError(m).WithSubcode(static_cast<int32_t>(code));
  }
  Status StmtFail(std::string_view role, MYSQL_STMT* stmt, std::string_view sql) const {
    return Fail(role, mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt), mysql_stmt_error(stmt), sql);
  }
  // QueryConnection's own errors already name the address, statement and server error.
  Status Wrap(std::string_view role, const Status& s) const {
    Status w = s.WithContext(table + ": " + std::string(role));
    if (IsPrivilegeError(static_cast<unsigned int>(s.subcode()))) {
      w = Status::IOError(std::string(w.message()) + "; GRANT SELECT ON " + table + " TO '" + conn->options().user +
                          "'")
              .WithSubcode(s.subcode());
    }
    return w;
  }

  Status Prepare(std::string_view role, const std::string& sql, MYSQL_STMT** stmt) {
    MYSQL* handle = conn->native_handle();
    if (handle == nullptr) return Status::IOError(table + ": " + std::string(role) + " failed: not connected");
    *stmt = mysql_stmt_init(handle);
    if (*stmt == nullptr) return Fail(role, mysql_errno(handle), mysql_sqlstate(handle), mysql_error(handle));
    if (mysql_stmt_prepare(*stmt, sql.data(), static_cast<unsigned long>(sql.size())) != 0) {
      return StmtFail(role, *stmt, sql);
    }
    return Status::OK();
  }

  // P from the status variables MariaDB fixes when the consistent snapshot is taken.
  Status ReadSnapshotPosition(LogPosition* p) {
    mysql::ResultSet rs;
    CANAL_RETURN_IF_ERROR(Wrap("reading the snapshot position", conn->Query("SHOW STATUS LIKE 'binlog_snapshot_%'", &rs)));
    std::string file, position;
    for (const mysql::ResultRow& row : rs.rows) {
      if (row.size() < 2 || !row[0] || !row[1]) continue;
      if (*row[0] == "Binlog_snapshot_file" || *row[0] == "binlog_snapshot_file") file = *row[1];
      if (*row[0] == "Binlog_snapshot_position" || *row[0] == "binlog_snapshot_position") position = *row[1];
    }
    if (file.empty()) {
      return Status::NotSupported(table +
                                  ": the server reports no binlog_snapshot_file, so a chunk's binlog position is "
                                  "unknown; a consistent snapshot's position needs MariaDB with log_bin=ON");
    }
    uint64_t pos = 0;
    auto [ptr, ec] = std::from_chars(position.data(), position.data() + position.size(), pos);
    if (ec != std::errc() || ptr != position.data() + position.size() || pos < 4) {
      return Status::Corruption(table + ": binlog_snapshot_position is '" + position + "', not a binlog offset");
    }
    *p = LogPosition{};
    p->journal_name = std::move(file);
    p->position = pos;
    return Status::OK();
  }

  void Rollback() {
    // Best effort: an error already decided the outcome; a lost connection rolls back by itself.
    if (conn->connected()) (void)conn->Execute("ROLLBACK");
  }

  Status Fetch(MYSQL_STMT* stmt, std::string_view role, std::string_view sql, const RowCallback& on_row,
               ChunkResult* result);
};

ChunkReader::ChunkReader(mysql::QueryConnection* conn) : impl_(std::make_unique<Impl>(conn)) {}
ChunkReader::~ChunkReader() = default;

const ChunkKey& ChunkReader::key() const { return impl_->key; }
const std::string& ChunkReader::first_statement() const { return impl_->query.first; }
const std::string& ChunkReader::next_statement() const { return impl_->query.next; }

Status ChunkReader::Open(const TableShape& shape, std::string_view where, const SnapshotOptions& options) {
  Impl& m = *impl_;
  m.open = false;
  m.CloseStatements();
  m.shape = shape;
  m.table = QuoteIdentifier(shape.schema) + "." + QuoteIdentifier(shape.table);
  CANAL_RETURN_IF_ERROR(options.Validate().WithContext(m.table));
  if (!shape.engine.empty() && !AsciiEqualsIgnoreCase(shape.engine, "InnoDB")) {
    return Status::NotSupported(m.table + " is ENGINE=" + shape.engine +
                                ": a consistent snapshot covers InnoDB tables only, so its rows could not be placed "
                                "at a binlog position; convert it (ALTER TABLE ... ENGINE=InnoDB) or leave it out");
  }
  m.options = options;
  CANAL_RETURN_IF_ERROR(ChooseChunkKey(shape, &m.key));
  CANAL_RETURN_IF_ERROR(PlanChunkQuery(shape, m.key, where, options.chunk_rows, &m.query));

  CANAL_RETURN_IF_ERROR(m.Wrap("setting up the session",
                               m.conn->Execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")));
  CANAL_RETURN_IF_ERROR(m.Wrap("setting up the session", m.conn->Execute("SET SESSION time_zone = '+00:00'")));
  // CHAR values as the binlog has them, without the trailing spaces PAD_CHAR_TO_FULL_LENGTH adds.
  CANAL_RETURN_IF_ERROR(m.Wrap(
      "setting up the session",
      m.conn->Execute("SET SESSION sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), "
                      "',PAD_CHAR_TO_FULL_LENGTH,', ','))")));

  const bool keyed = !m.query.next.empty();
  CANAL_RETURN_IF_ERROR(m.Prepare(keyed ? "preparing the first chunk" : "preparing the whole-table read",
                                  m.query.first, &m.first));
  if (keyed) {
    CANAL_RETURN_IF_ERROR(m.Prepare("preparing the next chunk", m.query.next, &m.next));
    // Each statement ends with LIMIT ?; the next one's key placeholders come before it.
    if (mysql_stmt_param_count(m.first) != 1 || mysql_stmt_param_count(m.next) != m.query.parameters + 1) {
      return Status::Corruption(m.table + ": the chunk statements have " +
                                std::to_string(mysql_stmt_param_count(m.first)) + " and " +
                                std::to_string(mysql_stmt_param_count(m.next)) + " placeholders, the plan 1 and " +
                                std::to_string(m.query.parameters + 1));
    }
    m.limit = RowsFitting(options.chunk_bytes, WidestRow(shape), options.chunk_rows);
  }
  MYSQL_RES* meta = mysql_stmt_result_metadata(m.first);
  if (meta == nullptr) return m.StmtFail("reading the result columns", m.first, m.query.first);
  Status s = m.results.Setup(meta, shape.columns.size());
  mysql_free_result(meta);
  if (!s.ok()) return s.WithContext(m.table);
  m.open = true;
  return Status::OK();
}

Status ChunkReader::Impl::Fetch(MYSQL_STMT* stmt, std::string_view role, std::string_view sql,
                                const RowCallback& on_row, ChunkResult* result) {
  const bool keyed = !key.columns.empty() && !query.next.empty();
  const uint64_t chunk_limit = limit;
  CANAL_RETURN_IF_ERROR(results.Bind(stmt).WithContext(table));
  bool stopped_at_bytes = false;
  ChunkRow row;
  for (;;) {
    const int rc = mysql_stmt_fetch(stmt);
    if (rc == MYSQL_NO_DATA) break;
    if (rc == 1) return StmtFail(role, stmt, sql);
    if (Status s = results.CompleteRow(); !s.ok()) return s.WithContext(table + ": " + std::string(role));
    row.fields = results.fields();
    row.bytes = results.row_bytes();
    if (keyed) CANAL_RETURN_IF_ERROR(results.CopyKey(key.columns, &result->last_key).WithContext(table));
    CANAL_RETURN_IF_ERROR(on_row(row));
    ++result->rows;
    result->bytes += row.bytes;
    if (keyed && result->bytes >= options.chunk_bytes && result->rows < chunk_limit) {
      stopped_at_bytes = true;
      break;
    }
  }
  // Stopped early, the rest of the result is still on the wire: read off and dropped here.
  mysql_stmt_free_result(stmt);
  result->exhausted = !keyed || (!stopped_at_bytes && result->rows < chunk_limit);
  if (keyed && result->rows > 0) limit = RowsFitting(options.chunk_bytes, result->bytes / result->rows, options.chunk_rows);
  return Status::OK();
}

Status ChunkReader::ReadChunk(const std::vector<KeyValue>& after, const RowCallback& on_row, ChunkResult* result) {
  Impl& m = *impl_;
  m.after = after;  // before *result is cleared: `after` may be its last_key
  *result = ChunkResult{};
  if (!m.open) return Status::InvalidArgument(m.table + ": ReadChunk before a successful Open");
  const bool keyed = !m.query.next.empty();
  if (!keyed && !m.after.empty()) {
    return Status::InvalidArgument(m.table + " has no chunk key: it is read whole, in one chunk");
  }
  if (keyed && !m.after.empty() && m.after.size() != m.key.columns.size()) {
    return Status::InvalidArgument(m.table + ": a chunk is resumed after " + std::to_string(m.after.size()) +
                                   " key values, the key has " + std::to_string(m.key.columns.size()) + " columns");
  }
  MYSQL_STMT* stmt = m.after.empty() ? m.first : m.next;
  const std::string& sql = m.after.empty() ? m.query.first : m.query.next;
  const char* role = !keyed ? "whole-table read" : m.after.empty() ? "first chunk" : "next chunk";

  if (keyed) {
    static const std::vector<size_t> kNoKey;
    CANAL_RETURN_IF_ERROR(m.params.Bind(stmt, m.after, m.after.empty() ? kNoKey : m.query.parameter_keys, m.limit)
                              .WithContext(m.table + ": " + role));
  }

  CANAL_RETURN_IF_ERROR(m.Wrap("starting the consistent snapshot",
                               m.conn->Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")));
  Status s = m.ReadSnapshotPosition(&result->snapshot);
  if (s.ok() && mysql_stmt_execute(stmt) != 0) s = m.StmtFail(role, stmt, sql);
  if (s.ok()) s = m.Fetch(stmt, role, sql, on_row, result);
  if (!s.ok()) {
    mysql_stmt_free_result(stmt);
    m.Rollback();
    return s;
  }
  return m.Wrap("commit", m.conn->Execute("COMMIT"));
}

}  // namespace canal::snapshot
