// DumpConnection: the replica side of the MySQL client/server protocol, enough to
// log in and stream a binlog — our own client on a socket (see docs/replication.md
// for why not Connector/C's replication API).
//
// Connect() opens TCP, reads the server greeting, upgrades to TLS when asked and
// offered, and authenticates with whatever plugin the server names:
// mysql_native_password, caching_sha2_password (fast path; full exchange over TLS
// or with the server's RSA key) and sha256_password. Execute() runs a statement
// on the text protocol (SET @master_binlog_checksum=..., ...). RegisterSlave() and
// Dump*() start the stream; ReadEvent() then returns one binlog event at a time
// (the OK byte stripped, packets of an event over 16 MiB joined).
//
// Errors are Status values naming the server address and what was being done; an
// ERR packet is also kept in last_server_error(). Not thread-safe, except
// Shutdown(), which may be called from any thread to make a blocked call return.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/mysql/connection_options.h"
#include "canal/parser/mysql/server_error.h"

namespace canal::mysql {

// One row of a text-protocol result; nullopt is SQL NULL.
using ResultRow = std::vector<std::optional<std::string>>;

struct ResultSet {
  std::vector<std::string> column_names;
  std::vector<ResultRow> rows;
};

class DumpConnection {
 public:
  explicit DumpConnection(ConnectionOptions options);
  ~DumpConnection();
  DumpConnection(const DumpConnection&) = delete;
  DumpConnection& operator=(const DumpConnection&) = delete;

  // TCP connect + handshake + (TLS) + authentication. Wrong password or missing
  // privilege: the server's error text in the Status, the number in last_server_error().
  Status Connect();

  // A statement whose result (OK or rows) is read and discarded / returned.
  Status Execute(std::string_view sql);
  Status Query(std::string_view sql, ResultSet* result);

  // COM_REGISTER_SLAVE with our server id (host/port reported as given).
  Status RegisterSlave(uint32_t server_id, std::string_view report_host = "", uint16_t report_port = 0);

  // COM_BINLOG_DUMP from file + position. On MariaDB with @slave_connect_state
  // set, the server starts at that GTID state instead (file may be empty).
  Status DumpFromPosition(std::string_view file, uint32_t position, uint32_t server_id);

  // COM_BINLOG_DUMP_GTID (MySQL): start after the transactions in `gtid_set`
  // ("uuid:1-5,uuid2:1-3"); `file`/`position` may be empty/4.
  Status DumpFromGtidSet(std::string_view gtid_set, uint32_t server_id, std::string_view file = "",
                         uint64_t position = 4);

  // After a Dump*: the next event, checksum included, as a view valid until the
  // next call. End of stream (EOF packet) is NotFound; an ERR packet (e.g. 1236)
  // is an IOError with last_server_error() set; a dropped connection or a read
  // timeout is an IOError with last_server_error() empty.
  Status ReadEvent(std::string_view* event);

  // Closes the socket; a ReadEvent blocked in another thread returns an IOError.
  void Shutdown();
  void Close();

  bool connected() const;
  uint32_t connection_id() const;      // the server's thread id (for KILL)
  const std::string& server_version() const;
  bool is_mariadb() const;
  bool tls_active() const;
  const std::string& auth_plugin() const;  // the plugin that finally authenticated us
  const ServerError& last_server_error() const;
  // Bytes of binlog events received since Connect (for MB/s figures).
  uint64_t bytes_received() const;

  // Largest message accepted from the server (default 1 GiB, the ceiling of
  // max_allowed_packet): a longer event is a Corruption error before anything is
  // allocated for it.
  void set_max_event_bytes(uint64_t bytes);
  // Called on the reading thread when a ReadEvent is about to block because
  // every byte the server has sent so far is read (PacketChannel::set_before_block).
  void set_before_block(std::function<void()> f);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Encodes a MySQL GTID set ("uuid:1-5:7-9,uuid2:1-3") in the binary form
// COM_BINLOG_DUMP_GTID carries; InvalidArgument naming the bad part otherwise.
Status EncodeMysqlGtidSet(std::string_view gtid_set, std::string* out);

}  // namespace canal::mysql
