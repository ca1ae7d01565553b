// EventType: binlog event type codes (MySQL 3.23 .. 9.x and MariaDB 10.x/11.x).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace canal::binlog {

enum class EventType : uint8_t {
  kUnknown = 0,
  kStartV3 = 1,
  kQuery = 2,
  kStop = 3,
  kRotate = 4,
  kIntvar = 5,
  kLoad = 6,
  kSlave = 7,
  kCreateFile = 8,
  kAppendBlock = 9,
  kExecLoad = 10,
  kDeleteFile = 11,
  kNewLoad = 12,
  kRand = 13,
  kUserVar = 14,
  kFormatDescription = 15,
  kXid = 16,
  kBeginLoadQuery = 17,
  kExecuteLoadQuery = 18,
  kTableMap = 19,
  kWriteRowsV0 = 20,
  kUpdateRowsV0 = 21,
  kDeleteRowsV0 = 22,
  kWriteRowsV1 = 23,
  kUpdateRowsV1 = 24,
  kDeleteRowsV1 = 25,
  kIncident = 26,
  kHeartbeat = 27,
  kIgnorable = 28,
  kRowsQuery = 29,
  kWriteRowsV2 = 30,
  kUpdateRowsV2 = 31,
  kDeleteRowsV2 = 32,
  kGtid = 33,
  kAnonymousGtid = 34,
  kPreviousGtids = 35,
  kTransactionContext = 36,
  kViewChange = 37,
  kXaPrepare = 38,
  kPartialUpdateRows = 39,
  kTransactionPayload = 40,
  kHeartbeatV2 = 41,
  kGtidTagged = 42,
  // MariaDB
  kMariaAnnotateRows = 160,
  kMariaBinlogCheckpoint = 161,
  kMariaGtid = 162,
  kMariaGtidList = 163,
  kMariaStartEncryption = 164,
  kMariaQueryCompressed = 165,
  kMariaWriteRowsCompressedV1 = 166,
  kMariaUpdateRowsCompressedV1 = 167,
  kMariaDeleteRowsCompressedV1 = 168,
  kMariaWriteRowsCompressed = 169,
  kMariaUpdateRowsCompressed = 170,
  kMariaDeleteRowsCompressed = 171,
};

// Short upper-case name ("QUERY", "WRITE_ROWS_V2", "MARIA_GTID"); "UNKNOWN(<n>)"
// style names are produced by EventTypeLabel for codes without a name.
std::string_view EventTypeName(EventType t);
// EventTypeName, or "TYPE_<n>" for unnamed codes.
std::string EventTypeLabel(uint8_t code);

enum class RowsKind : uint8_t { kWrite, kUpdate, kDelete };

// Rows events: which kind, which version (0, 1, 2), whether MariaDB-compressed.
struct RowsEventInfo {
  bool is_rows = false;
  RowsKind kind = RowsKind::kWrite;
  int version = 0;
  bool compressed = false;
  bool partial = false;  // MySQL PARTIAL_UPDATE_ROWS (JSON diffs in the after image)
};
RowsEventInfo ClassifyRowsEvent(EventType t);

}  // namespace canal::binlog
