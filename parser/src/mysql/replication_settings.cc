// CheckReplicationSettings: a pure function of ServerInfo, so every branch is
// unit-tested without a server.
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/ascii_case.h"
#include "canal/parser/mysql/query_connection.h"

namespace canal::mysql {

namespace {

std::string Shown(const std::string& value) { return value.empty() ? "unknown (not reported)" : value; }

}  // namespace

Status CheckReplicationSettings(const ServerInfo& info, std::vector<ReplicationWarning>* warnings) {
  if (warnings != nullptr) warnings->clear();
  if (!info.log_bin) {
    return Status::InvalidArgument("log_bin is OFF; start the server with --log-bin (and server_id != 0)");
  }
  // A primary with server_id 0 refuses every replica's registration.
  if (info.server_id == 0) {
    return Status::InvalidArgument(
        "server_id is 0, and a server with server_id 0 refuses replicas; set server_id to a non-zero value "
        "(SET GLOBAL server_id=1, and in my.cnf)");
  }
  if (!AsciiEqualsIgnoreCase(info.binlog_format, "ROW")) {
    return Status::InvalidArgument("binlog_format is " + Shown(info.binlog_format) +
                                   "; set binlog_format=ROW (SET GLOBAL binlog_format=ROW, and in my.cnf)");
  }
  if (warnings == nullptr) return Status::OK();

  // Servers before MySQL 5.6 have no binlog_row_image and always log full rows.
  if (!info.binlog_row_image.empty() && !AsciiEqualsIgnoreCase(info.binlog_row_image, "FULL")) {
    warnings->push_back({ReplicationWarning::Kind::kRowImage, "binlog_row_image is " + info.binlog_row_image +
                        "; Canal needs FULL for whole before/after images (updates and deletes will carry only "
                        "the columns the server logged); set binlog_row_image=FULL (SET GLOBAL "
                        "binlog_row_image=FULL, and in my.cnf)"});
  }
  if (!AsciiEqualsIgnoreCase(info.binlog_row_metadata, "FULL")) {
    const std::string what = info.binlog_row_metadata.empty()
                                 ? std::string("the server has no binlog_row_metadata (before MySQL 8.0.1 / "
                                               "MariaDB 10.5)")
                                 : "binlog_row_metadata is " + info.binlog_row_metadata;
    warnings->push_back({ReplicationWarning::Kind::kRowMetadata, what +
                        "; column names come from information_schema, which reflects the current schema, not "
                        "the one the rows were written with (a binlog read after DDL is refused rather than "
                        "mislabelled)" +
                        (info.binlog_row_metadata.empty()
                             ? std::string()
                             : "; set binlog_row_metadata=FULL (SET GLOBAL binlog_row_metadata=FULL, and in "
                               "my.cnf)")});
  }
  // MySQL without GTIDs still replicates by file and position; say so only.
  if (!info.mariadb && !info.gtid_mode.empty() && !AsciiEqualsIgnoreCase(info.gtid_mode, "ON")) {
    warnings->push_back({ReplicationWarning::Kind::kGtidMode,
                         "gtid_mode is " + info.gtid_mode +
                             " (informational): positions are tracked by binlog file and offset only"});
  }
  return Status::OK();
}

}  // namespace canal::mysql
