#include "canal/parser/mysql/query_connection.h"

#include <mysql.h>

#include <charconv>
#include <utility>

namespace canal::mysql {

namespace {

// Statements in messages are cut here: an information_schema query is long.
constexpr size_t kMaxStatementInMessage = 200;

std::string Abbreviate(std::string_view sql) {
  if (sql.size() <= kMaxStatementInMessage) return std::string(sql);
  return std::string(sql.substr(0, kMaxStatementInMessage)) + "...";
}

// Connector/C's own errors (2000-2999, and its 5000-5999 range) are local or
// network failures; everything else came from the server in an ERR packet.
bool IsClientError(unsigned int code) {
  return (code >= 2000 && code < 3000) || (code >= 5000 && code < 6000);
}

// Connection-level failures after which the handle is useless.
bool IsConnectionLost(unsigned int code) {
  return code == 2006 /* CR_SERVER_GONE_ERROR */ || code == 2013 /* CR_SERVER_LOST */ ||
         code == 2055 /* CR_SERVER_LOST_EXTENDED */ || code == kErConnectionKilled || code == kErServerShutdown;
}

unsigned int TimeoutSeconds(int ms) {
  if (ms <= 0) return 0;  // 0: Connector/C's default (no limit)
  return static_cast<unsigned int>((static_cast<long long>(ms) + 999) / 1000);
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// "10.11.6-MariaDB-0+deb12u1" → 10, 11, 6. MariaDB's replication handshake
// prefixes "5.5.5-" for old clients; skip it when present.
void ParseVersion(std::string_view v, ServerInfo* info) {
  info->mariadb = v.find("MariaDB") != std::string_view::npos;
  if (info->mariadb && v.substr(0, 6) == "5.5.5-") v.remove_prefix(6);
  int* parts[3] = {&info->major, &info->minor, &info->patch};
  for (int* part : parts) *part = 0;
  size_t i = 0;
  for (int* part : parts) {
    int n = 0;
    auto [p, ec] = std::from_chars(v.data() + i, v.data() + v.size(), n);
    if (ec != std::errc()) break;
    *part = n;
    i = static_cast<size_t>(p - v.data());
    if (i >= v.size() || v[i] != '.') break;
    ++i;
  }
}

// ON / 1 / YES (SHOW VARIABLES says ON, SELECT @@log_bin says 1).
bool IsOn(std::string_view v) { return v == "ON" || v == "1" || v == "YES" || v == "on" || v == "yes"; }

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Column index by name, ignoring ASCII case (servers differ in spelling); -1 if absent.
int FindColumn(const ResultSet& rs, std::string_view name) {
  for (size_t i = 0; i < rs.column_names.size(); ++i) {
    const std::string& c = rs.column_names[i];
    if (c.size() != name.size()) continue;
    bool same = true;
    for (size_t k = 0; k < c.size() && same; ++k) same = AsciiLower(c[k]) == AsciiLower(name[k]);
    if (same) return static_cast<int>(i);
  }
  return -1;
}

std::string Cell(const ResultRow& row, int column) {
  if (column < 0 || static_cast<size_t>(column) >= row.size() || !row[column]) return "";
  return *row[column];
}

}  // namespace

struct QueryConnection::Impl {
  ConnectionOptions options;
  MYSQL* mysql = nullptr;
  ServerError last_error;

  void CloseHandle() {
    if (mysql != nullptr) mysql_close(mysql);
    mysql = nullptr;
  }

  // Records the handle's error and builds "<address>: <what> failed: ERROR ...".
  Status Fail(std::string_view what) {
    const unsigned int code = mysql != nullptr ? mysql_errno(mysql) : 0;
    const std::string text = mysql != nullptr ? mysql_error(mysql) : "no connection";
    std::string detail;
    if (code != 0 && !IsClientError(code)) {
      last_error.code = static_cast<uint16_t>(code);
      last_error.sql_state = mysql_sqlstate(mysql);
      last_error.message = text;
      detail = last_error.ToString();
    } else {
      last_error = ServerError{};
      detail = code != 0 ? text + " (client error " + std::to_string(code) + ")" : text;
    }
    // A dead handle would fail every later call the same way; the caller
    // reconnects (connected() turns false).
    if (code != 0 && IsConnectionLost(code)) CloseHandle();
    return Status::IOError(options.Address() + ": " + std::string(what) + " failed: " + detail)
        .WithSubcode(last_error.code);
  }

  Status NotConnected(std::string_view what) {
    last_error = ServerError{};
    return Status::IOError(options.Address() + ": " + std::string(what) + " failed: not connected (call Connect)");
  }

  Status Run(std::string_view sql, ResultSet* result) {
    const std::string what = "query `" + Abbreviate(sql) + "`";
    if (mysql == nullptr) return NotConnected(what);
    if (mysql_real_query(mysql, sql.data(), static_cast<unsigned long>(sql.size())) != 0) return Fail(what);
    MYSQL_RES* res = mysql_store_result(mysql);
    if (res == nullptr) {
      // No result set: fine for statements without one, an error otherwise.
      if (mysql_field_count(mysql) != 0) return Fail(what);
      if (result != nullptr) *result = ResultSet{};
      last_error = ServerError{};
      return Status::OK();
    }
    if (result != nullptr) {
      result->column_names.clear();
      result->rows.clear();
      const unsigned int nfields = mysql_num_fields(res);
      MYSQL_FIELD* fields = mysql_fetch_fields(res);
      for (unsigned int i = 0; i < nfields; ++i) {
        result->column_names.emplace_back(fields[i].name, fields[i].name_length);
      }
      result->rows.reserve(mysql_num_rows(res));
      while (MYSQL_ROW row = mysql_fetch_row(res)) {
        unsigned long* lengths = mysql_fetch_lengths(res);
        ResultRow out(nfields);
        for (unsigned int i = 0; i < nfields; ++i) {
          if (row[i] != nullptr) out[i] = std::string(row[i], lengths[i]);
        }
        result->rows.push_back(std::move(out));
      }
    }
    mysql_free_result(res);
    last_error = ServerError{};
    return Status::OK();
  }

  // The server version from the handshake (for choosing statement variants).
  void HandshakeVersion(ServerInfo* info) const {
    if (mysql == nullptr) return;
    const char* v = mysql_get_server_info(mysql);
    if (v != nullptr) ParseVersion(v, info);
  }
};

QueryConnection::QueryConnection(ConnectionOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

QueryConnection::~QueryConnection() { Close(); }

Status QueryConnection::Connect() {
  Impl& m = *impl_;
  m.CloseHandle();
  m.last_error = ServerError{};
  const ConnectionOptions& o = m.options;
  const std::string what = "connecting as '" + o.user + "'";
  // mysql_init would initialise the library on first use, which is not
  // thread-safe; a function-local static is.
  static const bool library_ready = mysql_library_init(0, nullptr, nullptr) == 0;
  if (!library_ready) return Status::IOError(o.Address() + ": " + what + " failed: mysql_library_init failed");
  m.mysql = mysql_init(nullptr);
  if (m.mysql == nullptr) return Status::IOError(o.Address() + ": " + what + " failed: mysql_init: out of memory");

  const unsigned int connect_s = TimeoutSeconds(o.connect_timeout_ms);
  const unsigned int read_s = TimeoutSeconds(o.read_timeout_ms);
  const unsigned int protocol = MYSQL_PROTOCOL_TCP;  // "localhost" must not mean the socket
  bool ok = mysql_options(m.mysql, MYSQL_OPT_PROTOCOL, &protocol) == 0;
  if (connect_s > 0) ok = ok && mysql_options(m.mysql, MYSQL_OPT_CONNECT_TIMEOUT, &connect_s) == 0;
  if (read_s > 0) {
    ok = ok && mysql_options(m.mysql, MYSQL_OPT_READ_TIMEOUT, &read_s) == 0;
    ok = ok && mysql_options(m.mysql, MYSQL_OPT_WRITE_TIMEOUT, &read_s) == 0;
  }
  if (!o.charset.empty()) ok = ok && mysql_options(m.mysql, MYSQL_SET_CHARSET_NAME, o.charset.c_str()) == 0;

  if (o.tls != TlsMode::kDisabled) {
    // Asking for TLS without enforcing it falls back to plain TCP when the
    // server offers none (kPreferred); ENFORCE turns that into an error.
    ok = ok && mysql_ssl_set(m.mysql, nullptr, nullptr, o.tls_ca_file.empty() ? nullptr : o.tls_ca_file.c_str(),
                             nullptr, nullptr) == 0;
    const my_bool enforce = o.tls == TlsMode::kRequired;
    if (enforce) ok = ok && mysql_options(m.mysql, MYSQL_OPT_SSL_ENFORCE, &enforce) == 0;
    // Without a CA there is nothing to verify against.
    const my_bool verify = !o.tls_ca_file.empty();
    ok = ok && mysql_options(m.mysql, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify) == 0;
  }
  // Connector/C fetches the RSA key from the server itself when no file is set
  // (it has no switch to forbid that, so allow_public_key_retrieval is moot here).
  if (!o.server_public_key_file.empty()) {
    ok = ok && mysql_options(m.mysql, MYSQL_SERVER_PUBLIC_KEY, o.server_public_key_file.c_str()) == 0;
  }
  if (!ok) {
    Status s = m.Fail(what + " (setting client options)");
    m.CloseHandle();
    return s;
  }

  if (mysql_real_connect(m.mysql, o.host.c_str(), o.user.c_str(), o.password.c_str(), nullptr, o.port, nullptr,
                         0) == nullptr) {
    Status s = m.Fail(what);
    m.CloseHandle();
    if (m.last_error.code == kErAccessDenied) {
      return Status::IOError(std::string(s.message()) + " (check canal.instance.dbUsername / dbPassword)")
          .WithSubcode(s.subcode());
    }
    // The server switched to a plugin Connector/C does not have: its fallback
    // then reports the server's refusal, ER_NOT_SUPPORTED_AUTH_MODE (the text
    // names the plugin that "could not be loaded"). Name the fix, as the dump
    // connection does.
    if (m.last_error.code == kErNotSupportedAuthMode) {
      return Status::IOError(std::string(s.message()) +
                             " (the replication user's authentication plugin is not supported; use "
                             "mysql_native_password or caching_sha2_password for it, e.g. ALTER USER ... IDENTIFIED "
                             "WITH mysql_native_password BY '...')")
          .WithSubcode(s.subcode());
    }
    return s;
  }
  // Some Connector/C builds let ENFORCE pass against a server without TLS;
  // checking the session itself does not depend on that.
  if (o.tls == TlsMode::kRequired && mysql_get_ssl_cipher(m.mysql) == nullptr) {
    m.CloseHandle();
    return Status::IOError(o.Address() + ": " + what +
                           " failed: TLS is required but the server did not offer it; configure TLS on the "
                           "server (ssl_cert, ssl_key) or do not require TLS");
  }
  return Status::OK();
}

void QueryConnection::Close() { impl_->CloseHandle(); }

bool QueryConnection::connected() const { return impl_->mysql != nullptr; }

Status QueryConnection::Execute(std::string_view sql) { return impl_->Run(sql, nullptr); }

Status QueryConnection::Query(std::string_view sql, ResultSet* result) { return impl_->Run(sql, result); }

std::string QueryConnection::QuoteString(std::string_view s) const {
  if (impl_->mysql != nullptr) {
    // Worst case doubles every byte; the connection's charset and sql_mode
    // (NO_BACKSLASH_ESCAPES) decide the escaping.
    std::string buf(s.size() * 2 + 1, '\0');
    const unsigned long n =
        mysql_real_escape_string(impl_->mysql, buf.data(), s.data(), static_cast<unsigned long>(s.size()));
    if (n != static_cast<unsigned long>(-1)) {
      buf.resize(n);
      return "'" + buf + "'";
    }
  }
  // No connection: quote by hand. Safe for utf8/utf8mb4 and every ASCII-based
  // charset, where these bytes never occur inside a multibyte character.
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  for (char c : s) {
    switch (c) {
      case '\0': out += "\\0"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\x1a': out += "\\Z"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "''"; break;
      default: out += c;
    }
  }
  out += '\'';
  return out;
}

Status QueryConnection::ReadServerInfo(ServerInfo* info) {
  *info = ServerInfo{};
  ResultSet rs;
  CANAL_RETURN_IF_ERROR(Query("SELECT VERSION()", &rs));
  if (rs.rows.empty() || rs.rows[0].empty() || !rs.rows[0][0]) {
    return Status::Corruption(impl_->options.Address() + ": SELECT VERSION() returned no value");
  }
  info->version = *rs.rows[0][0];
  ParseVersion(info->version, info);

  // SHOW VARIABLES lists only what exists, so one statement serves every
  // flavour and version (SELECT @@x fails with 1193 on a server without x).
  // GLOBAL: a session value could differ from what the binlog gets.
  CANAL_RETURN_IF_ERROR(Query(
      "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('server_id', 'log_bin', 'binlog_format', "
      "'binlog_row_image', 'binlog_row_metadata', 'binlog_checksum', 'gtid_mode', 'gtid_executed', "
      "'gtid_current_pos')",
      &rs));
  for (const ResultRow& row : rs.rows) {
    if (row.size() < 2 || !row[0]) continue;
    const std::string& name = *row[0];
    const std::string value = row[1].value_or("");
    if (name == "server_id") {
      uint64_t id = 0;
      if (!ParseU64(value, &id) || id > UINT32_MAX) {
        return Status::Corruption(impl_->options.Address() + ": server_id is '" + value + "', not a 32-bit number");
      }
      info->server_id = static_cast<uint32_t>(id);
    } else if (name == "log_bin") {
      info->log_bin = IsOn(value);
    } else if (name == "binlog_format") {
      info->binlog_format = value;
    } else if (name == "binlog_row_image") {
      info->binlog_row_image = value;
    } else if (name == "binlog_row_metadata") {
      info->binlog_row_metadata = value;
    } else if (name == "binlog_checksum") {
      info->binlog_checksum = value;
    } else if (name == "gtid_mode") {
      if (!info->mariadb) info->gtid_mode = value;
    } else if (name == "gtid_executed") {
      if (!info->mariadb) info->gtid_current_pos = value;
    } else if (name == "gtid_current_pos") {
      if (info->mariadb) info->gtid_current_pos = value;
    }
  }
  return Status::OK();
}

Status QueryConnection::ShowMasterStatus(MasterStatus* status) {
  *status = MasterStatus{};
  ServerInfo v;
  impl_->HandshakeVersion(&v);
  // MySQL 8.4 removed SHOW MASTER STATUS; MariaDB keeps it.
  const bool new_syntax = !v.mariadb && (v.major > 8 || (v.major == 8 && v.minor >= 4));
  const char* sql = new_syntax ? "SHOW BINARY LOG STATUS" : "SHOW MASTER STATUS";
  ResultSet rs;
  CANAL_RETURN_IF_ERROR(Query(sql, &rs));
  if (rs.rows.empty()) {
    return Status::InvalidArgument(impl_->options.Address() + ": " + sql +
                                   " returned no row: log_bin is OFF; start the server with --log-bin "
                                   "(and server_id != 0)");
  }
  const int file = FindColumn(rs, "File");
  const int pos = FindColumn(rs, "Position");
  const int gtids = FindColumn(rs, "Executed_Gtid_Set");
  if (file < 0 || pos < 0) {
    return Status::NotSupported(impl_->options.Address() + ": " + sql + " has no File/Position columns");
  }
  const ResultRow& row = rs.rows[0];
  status->file = Cell(row, file);
  const std::string p = Cell(row, pos);
  if (status->file.empty() || !ParseU64(p, &status->position)) {
    return Status::Corruption(impl_->options.Address() + ": " + sql + " returned File '" + status->file +
                              "', Position '" + p + "'");
  }
  // MySQL lists the set over several lines when it is long.
  std::string set = Cell(row, gtids);
  std::string compact;
  for (char c : set) {
    if (c != '\n' && c != '\r') compact += c;
  }
  status->executed_gtid_set = std::move(compact);
  return Status::OK();
}

Status QueryConnection::ShowBinaryLogs(std::vector<BinaryLogFile>* files) {
  files->clear();
  ResultSet rs;
  CANAL_RETURN_IF_ERROR(Query("SHOW BINARY LOGS", &rs));
  const int name = FindColumn(rs, "Log_name");
  const int size = FindColumn(rs, "File_size");
  if (name < 0 || size < 0) {
    return Status::NotSupported(impl_->options.Address() + ": SHOW BINARY LOGS has no Log_name/File_size columns");
  }
  for (const ResultRow& row : rs.rows) {
    BinaryLogFile f;
    f.name = Cell(row, name);
    const std::string s = Cell(row, size);
    if (f.name.empty() || !ParseU64(s, &f.size)) {
      return Status::Corruption(impl_->options.Address() + ": SHOW BINARY LOGS returned Log_name '" + f.name +
                                "', File_size '" + s + "'");
    }
    files->push_back(std::move(f));
  }
  return Status::OK();
}

const ServerError& QueryConnection::last_server_error() const { return impl_->last_error; }

const ConnectionOptions& QueryConnection::options() const { return impl_->options; }

st_mysql* QueryConnection::native_handle() { return impl_->mysql; }

}  // namespace canal::mysql
