// ServerError: an ERR packet from the server (error number, SQLSTATE, text).
//
// Connections keep the last one so callers can act on the number (1236: the
// requested binlog position is gone; 1045: access denied; ...) while the Status
// they return carries the readable text.
#pragma once

#include <cstdint>
#include <string>

namespace canal::mysql {

struct ServerError {
  uint16_t code = 0;  // 0 = no server error (the failure was local or on the network)
  std::string sql_state;
  std::string message;

  bool empty() const { return code == 0; }
  // "ERROR 1236 (HY000): Could not find first log file name in binary log index file"
  std::string ToString() const {
    return "ERROR " + std::to_string(code) + (sql_state.empty() ? "" : " (" + sql_state + ")") + ": " + message;
  }
};

// Error numbers the parser acts on. A Status made from a server error carries
// its number as Status::subcode(); decisions read that, never the text.
constexpr uint16_t kErAccessDenied = 1045;           // wrong user or password
constexpr uint16_t kErDbAccessDenied = 1044;
constexpr uint16_t kErTableAccessDenied = 1142;
constexpr uint16_t kErNotSupportedAuthMode = 1251;   // the user's authentication method
constexpr uint16_t kErSpecificAccessDenied = 1227;   // missing privilege (REPLICATION SLAVE, ...)
constexpr uint16_t kErMasterFatalReadingBinlog = 1236;  // purged / invalid start position
constexpr uint16_t kErUnknownSystemVariable = 1193;
constexpr uint16_t kErConnectionKilled = 1927;       // MariaDB "Connection was killed"
constexpr uint16_t kErServerShutdown = 1053;
constexpr uint16_t kErSlaveSameId = 4052;           // MariaDB: another replica registered with our id

// Another replica (or canal-server) registered with this connection's server
// id, so the primary dropped this one: MariaDB's 4052, or MySQL's 1236 "A slave
// with the same server_uuid/server_id as this slave has connected".
inline bool IsSlaveIdConflict(const ServerError& e) {
  if (e.code == kErSlaveSameId) return true;
  return e.code == kErMasterFatalReadingBinlog && e.message.find("same server_uuid/server_id") != std::string::npos;
}

}  // namespace canal::mysql
