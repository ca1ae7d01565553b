// QueryConnection: an ordinary SQL session to the primary, through the
// libmysqlclient API (MariaDB Connector/C), for what the parser must ask rather
// than stream: the server's flavour and version, the binlog settings it depends
// on, SHOW MASTER STATUS / SHOW BINARY LOGS, and table schemas.
//
// Not thread-safe; the parse thread owns one. Errors are Status values naming the
// address and the statement; the server's error number is kept in
// last_server_error().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/mysql/connection_options.h"
#include "canal/parser/mysql/dump_connection.h"  // ResultSet
#include "canal/parser/mysql/server_error.h"

struct st_mysql;  // Connector/C's MYSQL, for native_handle()

namespace canal::mysql {

struct ServerInfo {
  std::string version;  // SELECT VERSION(), e.g. "10.11.6-MariaDB-0+deb12u1"
  bool mariadb = false;
  int major = 0, minor = 0, patch = 0;
  uint32_t server_id = 0;
  bool log_bin = false;
  std::string binlog_format;        // ROW / MIXED / STATEMENT
  std::string binlog_row_image;     // FULL / MINIMAL / NOBLOB
  std::string binlog_row_metadata;  // FULL / MINIMAL / NO_LOG ("" when the server has no such variable)
  std::string binlog_checksum;      // CRC32 / NONE
  std::string gtid_mode;            // MySQL: ON / OFF / ...; MariaDB: "" (GTIDs always on)
  std::string gtid_current_pos;     // MariaDB @@gtid_current_pos; MySQL @@gtid_executed
};

struct BinaryLogFile {
  std::string name;
  uint64_t size = 0;
};

struct MasterStatus {
  std::string file;
  uint64_t position = 0;
  std::string executed_gtid_set;  // MySQL; "" on MariaDB
};

class QueryConnection {
 public:
  explicit QueryConnection(ConnectionOptions options);
  ~QueryConnection();
  QueryConnection(const QueryConnection&) = delete;
  QueryConnection& operator=(const QueryConnection&) = delete;

  Status Connect();
  void Close();
  bool connected() const;

  Status Execute(std::string_view sql);
  Status Query(std::string_view sql, ResultSet* result);
  // `s` as a quoted SQL string literal ('it''s'), escaped for the connection's
  // charset and sql_mode (by hand, for utf8, when not connected).
  std::string QuoteString(std::string_view s) const;

  Status ReadServerInfo(ServerInfo* info);
  // SHOW MASTER STATUS, or SHOW BINARY LOG STATUS on MySQL 8.4+.
  Status ShowMasterStatus(MasterStatus* status);
  Status ShowBinaryLogs(std::vector<BinaryLogFile>* files);

  const ServerError& last_server_error() const;
  const ConnectionOptions& options() const;

  // The Connector/C handle (MYSQL*), nullptr when not connected: for callers that need what this
  // class does not wrap (the snapshot reader's prepared statements and streamed reads). They
  // report their own errors; last_server_error() does not see them.
  st_mysql* native_handle();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The settings a row-based replica needs; the first wrong one is refused with a
// message naming the variable and the fix ("binlog_format is MIXED; set
// binlog_format=ROW"). binlog_row_image other than FULL and binlog_row_metadata
// other than FULL are accepted (the schema provider fills in names) and reported
// through *warnings, each with its kind (for callers that act on one) and its text.
struct ReplicationWarning {
  enum class Kind : uint8_t {
    kRowImage,     // binlog_row_image is not FULL
    kRowMetadata,  // binlog_row_metadata is not FULL (or absent): names come from a schema
    kGtidMode,     // MySQL without GTIDs (informational)
  };
  Kind kind;
  std::string text;
};
Status CheckReplicationSettings(const ServerInfo& info, std::vector<ReplicationWarning>* warnings);

}  // namespace canal::mysql
