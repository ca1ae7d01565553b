// SqlSession: a plain Connector/C (libmariadb) session as root over a
// sandbox's socket, for the table mirror and its comparator
// (table_mirror.h, table_compare.h). It is the tests' own, not the product's
// QueryConnection, so the oracle shares no code with what it checks.
//
// Rows come back as raw bytes with NULL kept apart from "", in the text
// protocol. Library canal_test_mirror (links libmariadb).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

struct st_mysql;  // Connector/C's MYSQL

namespace canal::testing {

// A value of a result row: nullopt for SQL NULL.
using SqlCell = std::optional<std::string>;
using SqlRow = std::vector<SqlCell>;

struct SqlResult {
  std::vector<std::string> columns;  // the result's column names
  std::vector<SqlRow> rows;
};

class SqlSession {
 public:
  SqlSession() = default;
  ~SqlSession();
  SqlSession(const SqlSession&) = delete;
  SqlSession& operator=(const SqlSession&) = delete;

  // Root (no password) over the Unix socket, utf8mb4, affected rows counting
  // matched rows (CLIENT_FOUND_ROWS: an UPDATE that changes nothing still
  // found its row). IOError naming the socket on failure.
  Status Connect(const std::string& socket);
  void Close();
  bool connected() const { return mysql_ != nullptr; }

  // One statement; *affected gets its affected (matched) row count.
  // InvalidArgument with the server's error and the statement (cut) on failure.
  Status Execute(std::string_view sql, uint64_t* affected = nullptr);
  Status Query(std::string_view sql, SqlResult* result);
  // USE `schema` (Connector/C's mysql_select_db).
  Status SelectDb(const std::string& schema);

  const std::string& socket() const { return socket_; }

 private:
  Status Error(std::string_view what, std::string_view sql) const;

  st_mysql* mysql_ = nullptr;
  std::string socket_;
};

// `name` as a quoted identifier (`a``b`).
std::string QuoteIdentifier(std::string_view name);
// `schema`.`table`.
std::string QualifiedName(std::string_view schema, std::string_view table);
// Bytes as an SQL hex literal's digits (no X'' around them).
std::string HexDigits(std::string_view bytes);

}  // namespace canal::testing
