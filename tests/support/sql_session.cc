#include "support/sql_session.h"

#include <mysql.h>

namespace canal::testing {
namespace {

// Statements in messages are cut here: a row's REPLACE can be megabytes.
constexpr size_t kMaxStatementInMessage = 300;

}  // namespace

SqlSession::~SqlSession() { Close(); }

void SqlSession::Close() {
  if (mysql_ != nullptr) mysql_close(mysql_);
  mysql_ = nullptr;
}

Status SqlSession::Connect(const std::string& socket) {
  Close();
  socket_ = socket;
  mysql_ = mysql_init(nullptr);
  if (mysql_ == nullptr) return Status::IOError("mysql_init failed");
  mysql_optionsv(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  const unsigned int timeout = 10;
  mysql_optionsv(mysql_, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  if (mysql_real_connect(mysql_, "localhost", "root", "", nullptr, 0, socket.c_str(), CLIENT_FOUND_ROWS) ==
      nullptr) {
    Status s = Status::IOError("connecting as root to " + socket + ": " + mysql_error(mysql_));
    Close();
    return s;
  }
  return Status::OK();
}

Status SqlSession::Error(std::string_view what, std::string_view sql) const {
  std::string text = std::string(what) + " on " + socket_ + ": ";
  if (mysql_ == nullptr) return Status::IOError(text + "not connected");
  text += "ERROR " + std::to_string(mysql_errno(mysql_)) + ": " + mysql_error(mysql_);
  if (!sql.empty()) {
    text += "; statement: ";
    text += sql.size() <= kMaxStatementInMessage ? sql : sql.substr(0, kMaxStatementInMessage);
    if (sql.size() > kMaxStatementInMessage) text += "... (" + std::to_string(sql.size()) + " bytes)";
  }
  return Status::InvalidArgument(text);
}

Status SqlSession::Execute(std::string_view sql, uint64_t* affected) {
  if (mysql_ == nullptr) return Error("executing", sql);
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return Error("executing", sql);
  // A statement with a result (a SELECT passed here) must still be drained.
  if (MYSQL_RES* res = mysql_store_result(mysql_); res != nullptr) mysql_free_result(res);
  if (affected != nullptr) *affected = mysql_affected_rows(mysql_);
  return Status::OK();
}

Status SqlSession::Query(std::string_view sql, SqlResult* result) {
  result->columns.clear();
  result->rows.clear();
  if (mysql_ == nullptr) return Error("querying", sql);
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return Error("querying", sql);
  MYSQL_RES* res = mysql_store_result(mysql_);
  if (res == nullptr) {
    if (mysql_errno(mysql_) != 0) return Error("reading the result of", sql);
    return Status::OK();  // no result set
  }
  const unsigned int n = mysql_num_fields(res);
  const MYSQL_FIELD* fields = mysql_fetch_fields(res);
  for (unsigned int i = 0; i < n; ++i) result->columns.emplace_back(fields[i].name, fields[i].name_length);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    const unsigned long* lengths = mysql_fetch_lengths(res);
    SqlRow& out = result->rows.emplace_back();
    out.reserve(n);
    for (unsigned int i = 0; i < n; ++i) {
      if (row[i] == nullptr) {
        out.emplace_back(std::nullopt);
      } else {
        out.emplace_back(std::string(row[i], lengths[i]));
      }
    }
  }
  mysql_free_result(res);
  return Status::OK();
}

Status SqlSession::SelectDb(const std::string& schema) {
  if (mysql_ == nullptr || mysql_select_db(mysql_, schema.c_str()) != 0) return Error("USE " + schema, "");
  return Status::OK();
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  out += '`';
  return out;
}

std::string QualifiedName(std::string_view schema, std::string_view table) {
  return QuoteIdentifier(schema) + "." + QuoteIdentifier(table);
}

std::string HexDigits(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace canal::testing
