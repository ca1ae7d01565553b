// Canal's protobuf field numbers and enum values (proto/canal/entry.proto and
// packet.proto), named once for every path that reads or writes the wire by
// hand: the sink's entry writer, the server's MESSAGES frame, the entry views,
// the client SDK's frame and Messages readers and MQ's protobuf form.
// Header-only in canal_wire, so none of them needs protobuf's library for a
// number. tests/proto/field_numbers_test.cc checks each constant against the
// descriptors protoc generates from the .proto files, so the two cannot drift.
//
// Fields 1 to 15 take a one-byte tag (wire::Tag); the two numbered 100
// (Messages.server_warning, Get.low_latency) do not and are only compared
// against a decoded field number.
#pragma once

#include <cstdint>

namespace canal::proto::fields {

// ---- canal.entry (entry.proto) ----------------------------------------------

namespace entry {
inline constexpr uint32_t kHeader = 1;
inline constexpr uint32_t kEntryType = 2;
inline constexpr uint32_t kStoreValue = 3;
}  // namespace entry

namespace header {
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kLogfileName = 2;
inline constexpr uint32_t kLogfileOffset = 3;
inline constexpr uint32_t kServerId = 4;
inline constexpr uint32_t kServerenCode = 5;
inline constexpr uint32_t kExecuteTime = 6;
inline constexpr uint32_t kSourceType = 7;
inline constexpr uint32_t kSchemaName = 8;
inline constexpr uint32_t kTableName = 9;
inline constexpr uint32_t kEventLength = 10;
inline constexpr uint32_t kEventType = 11;
inline constexpr uint32_t kProps = 12;
inline constexpr uint32_t kGtid = 13;
}  // namespace header

namespace column {
inline constexpr uint32_t kIndex = 1;
inline constexpr uint32_t kSqlType = 2;
inline constexpr uint32_t kName = 3;
inline constexpr uint32_t kIsKey = 4;
inline constexpr uint32_t kUpdated = 5;
inline constexpr uint32_t kIsNull = 6;
inline constexpr uint32_t kProps = 7;
inline constexpr uint32_t kValue = 8;
inline constexpr uint32_t kLength = 9;
inline constexpr uint32_t kMysqlType = 10;
}  // namespace column

namespace row_data {
inline constexpr uint32_t kBeforeColumns = 1;
inline constexpr uint32_t kAfterColumns = 2;
inline constexpr uint32_t kProps = 3;
}  // namespace row_data

namespace row_change {
inline constexpr uint32_t kTableId = 1;
inline constexpr uint32_t kEventType = 2;
inline constexpr uint32_t kIsDdl = 10;
inline constexpr uint32_t kSql = 11;
inline constexpr uint32_t kRowDatas = 12;
inline constexpr uint32_t kProps = 13;
inline constexpr uint32_t kDdlSchemaName = 14;
}  // namespace row_change

namespace transaction_begin {
inline constexpr uint32_t kExecuteTime = 1;
inline constexpr uint32_t kTransactionId = 2;
inline constexpr uint32_t kProps = 3;
inline constexpr uint32_t kThreadId = 4;
}  // namespace transaction_begin

namespace transaction_end {
inline constexpr uint32_t kExecuteTime = 1;
inline constexpr uint32_t kTransactionId = 2;
inline constexpr uint32_t kProps = 3;
}  // namespace transaction_end

namespace pair {
inline constexpr uint32_t kKey = 1;
inline constexpr uint32_t kValue = 2;
}  // namespace pair

// ---- canal.protocol (packet.proto) ------------------------------------------

namespace packet {
inline constexpr uint32_t kMagicNumber = 1;
inline constexpr uint32_t kVersion = 2;
inline constexpr uint32_t kType = 3;
inline constexpr uint32_t kCompression = 4;
inline constexpr uint32_t kBody = 5;
}  // namespace packet

namespace messages {
inline constexpr uint32_t kBatchId = 1;
inline constexpr uint32_t kMessages = 2;
inline constexpr uint32_t kServerWarning = 100;
}  // namespace messages

namespace ack {
inline constexpr uint32_t kErrorCode = 1;
inline constexpr uint32_t kErrorMessage = 2;
}  // namespace ack

}  // namespace canal::proto::fields

// Enum values the hand-written paths write or compare (the generated enums
// need protobuf's headers, which canal_wire's users need not have).
namespace canal::proto::values {

// Packet.version: every packet a server sends carries it (Canal's proto2
// default); Canal's Java client refuses a handshake with any other.
inline constexpr int32_t kPacketVersion = 1;

namespace entry_type {  // canal.entry.EntryType
inline constexpr int32_t kTransactionBegin = 1;
inline constexpr int32_t kRowData = 2;
inline constexpr int32_t kTransactionEnd = 3;
inline constexpr int32_t kHeartbeat = 4;
inline constexpr int32_t kGtidLog = 5;
}  // namespace entry_type

namespace event_type {  // canal.entry.EventType (the row events)
inline constexpr int32_t kInsert = 1;
inline constexpr int32_t kUpdate = 2;
inline constexpr int32_t kDelete = 3;
}  // namespace event_type

namespace source_type {  // canal.entry.Type
inline constexpr int32_t kOracle = 1;
inline constexpr int32_t kMysql = 2;
inline constexpr int32_t kPgsql = 3;
}  // namespace source_type

namespace packet_type {  // canal.protocol.PacketType
inline constexpr int32_t kHandshake = 1;
inline constexpr int32_t kClientAuthentication = 2;
inline constexpr int32_t kAck = 3;
inline constexpr int32_t kSubscription = 4;
inline constexpr int32_t kUnsubscription = 5;
inline constexpr int32_t kGet = 6;
inline constexpr int32_t kMessages = 7;
inline constexpr int32_t kClientAck = 8;
inline constexpr int32_t kShutdown = 9;
inline constexpr int32_t kDump = 10;
inline constexpr int32_t kHeartbeat = 11;
inline constexpr int32_t kClientRollback = 12;
}  // namespace packet_type

}  // namespace canal::proto::values
