#include "canal/parser/binlog/event_type.h"

#include <string>

namespace canal::binlog {

std::string_view EventTypeName(EventType t) {
  switch (t) {
    case EventType::kUnknown: return "UNKNOWN";
    case EventType::kStartV3: return "START_V3";
    case EventType::kQuery: return "QUERY";
    case EventType::kStop: return "STOP";
    case EventType::kRotate: return "ROTATE";
    case EventType::kIntvar: return "INTVAR";
    case EventType::kLoad: return "LOAD";
    case EventType::kSlave: return "SLAVE";
    case EventType::kCreateFile: return "CREATE_FILE";
    case EventType::kAppendBlock: return "APPEND_BLOCK";
    case EventType::kExecLoad: return "EXEC_LOAD";
    case EventType::kDeleteFile: return "DELETE_FILE";
    case EventType::kNewLoad: return "NEW_LOAD";
    case EventType::kRand: return "RAND";
    case EventType::kUserVar: return "USER_VAR";
    case EventType::kFormatDescription: return "FORMAT_DESCRIPTION";
    case EventType::kXid: return "XID";
    case EventType::kBeginLoadQuery: return "BEGIN_LOAD_QUERY";
    case EventType::kExecuteLoadQuery: return "EXECUTE_LOAD_QUERY";
    case EventType::kTableMap: return "TABLE_MAP";
    case EventType::kWriteRowsV0: return "WRITE_ROWS_V0";
    case EventType::kUpdateRowsV0: return "UPDATE_ROWS_V0";
    case EventType::kDeleteRowsV0: return "DELETE_ROWS_V0";
    case EventType::kWriteRowsV1: return "WRITE_ROWS_V1";
    case EventType::kUpdateRowsV1: return "UPDATE_ROWS_V1";
    case EventType::kDeleteRowsV1: return "DELETE_ROWS_V1";
    case EventType::kIncident: return "INCIDENT";
    case EventType::kHeartbeat: return "HEARTBEAT";
    case EventType::kIgnorable: return "IGNORABLE";
    case EventType::kRowsQuery: return "ROWS_QUERY";
    case EventType::kWriteRowsV2: return "WRITE_ROWS_V2";
    case EventType::kUpdateRowsV2: return "UPDATE_ROWS_V2";
    case EventType::kDeleteRowsV2: return "DELETE_ROWS_V2";
    case EventType::kGtid: return "GTID";
    case EventType::kAnonymousGtid: return "ANONYMOUS_GTID";
    case EventType::kPreviousGtids: return "PREVIOUS_GTIDS";
    case EventType::kTransactionContext: return "TRANSACTION_CONTEXT";
    case EventType::kViewChange: return "VIEW_CHANGE";
    case EventType::kXaPrepare: return "XA_PREPARE";
    case EventType::kPartialUpdateRows: return "PARTIAL_UPDATE_ROWS";
    case EventType::kTransactionPayload: return "TRANSACTION_PAYLOAD";
    case EventType::kHeartbeatV2: return "HEARTBEAT_V2";
    case EventType::kGtidTagged: return "GTID_TAGGED";
    case EventType::kMariaAnnotateRows: return "MARIA_ANNOTATE_ROWS";
    case EventType::kMariaBinlogCheckpoint: return "MARIA_BINLOG_CHECKPOINT";
    case EventType::kMariaGtid: return "MARIA_GTID";
    case EventType::kMariaGtidList: return "MARIA_GTID_LIST";
    case EventType::kMariaStartEncryption: return "MARIA_START_ENCRYPTION";
    case EventType::kMariaQueryCompressed: return "MARIA_QUERY_COMPRESSED";
    case EventType::kMariaWriteRowsCompressedV1: return "MARIA_WRITE_ROWS_COMPRESSED_V1";
    case EventType::kMariaUpdateRowsCompressedV1: return "MARIA_UPDATE_ROWS_COMPRESSED_V1";
    case EventType::kMariaDeleteRowsCompressedV1: return "MARIA_DELETE_ROWS_COMPRESSED_V1";
    case EventType::kMariaWriteRowsCompressed: return "MARIA_WRITE_ROWS_COMPRESSED";
    case EventType::kMariaUpdateRowsCompressed: return "MARIA_UPDATE_ROWS_COMPRESSED";
    case EventType::kMariaDeleteRowsCompressed: return "MARIA_DELETE_ROWS_COMPRESSED";
  }
  return {};
}

std::string EventTypeLabel(uint8_t code) {
  std::string_view n = EventTypeName(static_cast<EventType>(code));
  if (!n.empty()) return std::string(n);
  return "TYPE_" + std::to_string(code);
}

RowsEventInfo ClassifyRowsEvent(EventType t) {
  RowsEventInfo r;
  auto set = [&r](RowsKind k, int v, bool c = false) {
    r.is_rows = true;
    r.kind = k;
    r.version = v;
    r.compressed = c;
  };
  switch (t) {
    case EventType::kWriteRowsV0: set(RowsKind::kWrite, 0); break;
    case EventType::kUpdateRowsV0: set(RowsKind::kUpdate, 0); break;
    case EventType::kDeleteRowsV0: set(RowsKind::kDelete, 0); break;
    case EventType::kWriteRowsV1: set(RowsKind::kWrite, 1); break;
    case EventType::kUpdateRowsV1: set(RowsKind::kUpdate, 1); break;
    case EventType::kDeleteRowsV1: set(RowsKind::kDelete, 1); break;
    case EventType::kWriteRowsV2: set(RowsKind::kWrite, 2); break;
    case EventType::kUpdateRowsV2: set(RowsKind::kUpdate, 2); break;
    case EventType::kDeleteRowsV2: set(RowsKind::kDelete, 2); break;
    case EventType::kPartialUpdateRows:
      set(RowsKind::kUpdate, 2);
      r.partial = true;
      break;
    case EventType::kMariaWriteRowsCompressedV1: set(RowsKind::kWrite, 1, true); break;
    case EventType::kMariaUpdateRowsCompressedV1: set(RowsKind::kUpdate, 1, true); break;
    case EventType::kMariaDeleteRowsCompressedV1: set(RowsKind::kDelete, 1, true); break;
    case EventType::kMariaWriteRowsCompressed: set(RowsKind::kWrite, 2, true); break;
    case EventType::kMariaUpdateRowsCompressed: set(RowsKind::kUpdate, 2, true); break;
    case EventType::kMariaDeleteRowsCompressed: set(RowsKind::kDelete, 2, true); break;
    default: break;
  }
  return r;
}

}  // namespace canal::binlog
