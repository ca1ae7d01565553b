// canal/proto/field_numbers.h against the descriptors protoc generates from
// proto/canal/entry.proto and packet.proto: a constant that names the wrong
// number (or a field renumbered in the .proto) fails here, not on the wire.
#include "canal/proto/field_numbers.h"

#include <set>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/packet.pb.h"
#include "canal/proto/wire.h"

namespace canal::proto {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;

struct NamedField {
  const Descriptor* message;
  const char* name;  // as spelt in the .proto
  uint32_t number;   // the constant
};

std::vector<NamedField> AllFields() {
  namespace f = fields;
  const Descriptor* entry = canal::entry::Entry::descriptor();
  const Descriptor* header = canal::entry::Header::descriptor();
  const Descriptor* column = canal::entry::Column::descriptor();
  const Descriptor* row_data = canal::entry::RowData::descriptor();
  const Descriptor* row_change = canal::entry::RowChange::descriptor();
  const Descriptor* begin = canal::entry::TransactionBegin::descriptor();
  const Descriptor* end = canal::entry::TransactionEnd::descriptor();
  const Descriptor* pair = canal::entry::Pair::descriptor();
  const Descriptor* packet = canal::protocol::Packet::descriptor();
  const Descriptor* messages = canal::protocol::Messages::descriptor();
  const Descriptor* ack = canal::protocol::Ack::descriptor();
  return {
      {entry, "header", f::entry::kHeader},
      {entry, "entryType", f::entry::kEntryType},
      {entry, "storeValue", f::entry::kStoreValue},
      {header, "version", f::header::kVersion},
      {header, "logfileName", f::header::kLogfileName},
      {header, "logfileOffset", f::header::kLogfileOffset},
      {header, "serverId", f::header::kServerId},
      {header, "serverenCode", f::header::kServerenCode},
      {header, "executeTime", f::header::kExecuteTime},
      {header, "sourceType", f::header::kSourceType},
      {header, "schemaName", f::header::kSchemaName},
      {header, "tableName", f::header::kTableName},
      {header, "eventLength", f::header::kEventLength},
      {header, "eventType", f::header::kEventType},
      {header, "props", f::header::kProps},
      {header, "gtid", f::header::kGtid},
      {column, "index", f::column::kIndex},
      {column, "sqlType", f::column::kSqlType},
      {column, "name", f::column::kName},
      {column, "isKey", f::column::kIsKey},
      {column, "updated", f::column::kUpdated},
      {column, "isNull", f::column::kIsNull},
      {column, "props", f::column::kProps},
      {column, "value", f::column::kValue},
      {column, "length", f::column::kLength},
      {column, "mysqlType", f::column::kMysqlType},
      {row_data, "beforeColumns", f::row_data::kBeforeColumns},
      {row_data, "afterColumns", f::row_data::kAfterColumns},
      {row_data, "props", f::row_data::kProps},
      {row_change, "tableId", f::row_change::kTableId},
      {row_change, "eventType", f::row_change::kEventType},
      {row_change, "isDdl", f::row_change::kIsDdl},
      {row_change, "sql", f::row_change::kSql},
      {row_change, "rowDatas", f::row_change::kRowDatas},
      {row_change, "props", f::row_change::kProps},
      {row_change, "ddlSchemaName", f::row_change::kDdlSchemaName},
      {begin, "executeTime", f::transaction_begin::kExecuteTime},
      {begin, "transactionId", f::transaction_begin::kTransactionId},
      {begin, "props", f::transaction_begin::kProps},
      {begin, "threadId", f::transaction_begin::kThreadId},
      {end, "executeTime", f::transaction_end::kExecuteTime},
      {end, "transactionId", f::transaction_end::kTransactionId},
      {end, "props", f::transaction_end::kProps},
      {pair, "key", f::pair::kKey},
      {pair, "value", f::pair::kValue},
      {packet, "magic_number", f::packet::kMagicNumber},
      {packet, "version", f::packet::kVersion},
      {packet, "type", f::packet::kType},
      {packet, "compression", f::packet::kCompression},
      {packet, "body", f::packet::kBody},
      {messages, "batch_id", f::messages::kBatchId},
      {messages, "messages", f::messages::kMessages},
      {messages, "server_warning", f::messages::kServerWarning},
      {ack, "error_code", f::ack::kErrorCode},
      {ack, "error_message", f::ack::kErrorMessage},
  };
}

TEST(FieldNumbers, EveryConstantIsTheDescriptorsNumber) {
  for (const NamedField& c : AllFields()) {
    const auto* field = c.message->FindFieldByName(c.name);
    ASSERT_NE(field, nullptr) << c.message->full_name() << " has no field " << c.name;
    EXPECT_EQ(static_cast<uint32_t>(field->number()), c.number) << c.message->full_name() << "." << c.name;
  }
}

// Every field of a message named here has its constant: a field added to the
// .proto is named in field_numbers.h before a hand-written path can miss it.
TEST(FieldNumbers, EveryFieldOfTheNamedMessagesHasAConstant) {
  std::set<std::string> named;
  std::set<const Descriptor*> messages;
  for (const NamedField& c : AllFields()) {
    named.insert(c.message->full_name() + "." + c.name);
    messages.insert(c.message);
  }
  for (const Descriptor* m : messages) {
    for (int i = 0; i < m->field_count(); ++i) {
      EXPECT_TRUE(named.count(m->field(i)->full_name())) << m->field(i)->full_name() << " has no constant";
    }
  }
}

// The one-byte tags the hand-written paths write (wire::Tag) need numbers 1 to 15.
TEST(FieldNumbers, TaggedFieldsFitOneByte) {
  for (const NamedField& c : AllFields()) {
    if (c.number > 15) continue;  // only ever compared with a decoded number
    const auto tag = static_cast<uint8_t>(wire::Tag(c.number, wire::kLengthDelimited));
    EXPECT_EQ(tag >> 3, c.number) << c.message->full_name() << "." << c.name;
  }
  EXPECT_GT(fields::messages::kServerWarning, 15u);
}

struct NamedValue {
  const EnumDescriptor* type;
  const char* name;
  int32_t value;
};

TEST(FieldNumbers, EveryEnumConstantIsTheDescriptorsValue) {
  namespace v = values;
  const EnumDescriptor* entry_type = canal::entry::EntryType_descriptor();
  const EnumDescriptor* event_type = canal::entry::EventType_descriptor();
  const EnumDescriptor* source_type = canal::entry::Type_descriptor();
  const EnumDescriptor* packet_type = canal::protocol::PacketType_descriptor();
  const std::vector<NamedValue> all = {
      {entry_type, "TRANSACTIONBEGIN", v::entry_type::kTransactionBegin},
      {entry_type, "ROWDATA", v::entry_type::kRowData},
      {entry_type, "TRANSACTIONEND", v::entry_type::kTransactionEnd},
      {entry_type, "HEARTBEAT", v::entry_type::kHeartbeat},
      {entry_type, "GTIDLOG", v::entry_type::kGtidLog},
      {event_type, "INSERT", v::event_type::kInsert},
      {event_type, "UPDATE", v::event_type::kUpdate},
      {event_type, "DELETE", v::event_type::kDelete},
      {source_type, "ORACLE", v::source_type::kOracle},
      {source_type, "MYSQL", v::source_type::kMysql},
      {source_type, "PGSQL", v::source_type::kPgsql},
      {packet_type, "HANDSHAKE", v::packet_type::kHandshake},
      {packet_type, "CLIENTAUTHENTICATION", v::packet_type::kClientAuthentication},
      {packet_type, "ACK", v::packet_type::kAck},
      {packet_type, "SUBSCRIPTION", v::packet_type::kSubscription},
      {packet_type, "UNSUBSCRIPTION", v::packet_type::kUnsubscription},
      {packet_type, "GET", v::packet_type::kGet},
      {packet_type, "MESSAGES", v::packet_type::kMessages},
      {packet_type, "CLIENTACK", v::packet_type::kClientAck},
      {packet_type, "SHUTDOWN", v::packet_type::kShutdown},
      {packet_type, "DUMP", v::packet_type::kDump},
      {packet_type, "HEARTBEAT", v::packet_type::kHeartbeat},
      {packet_type, "CLIENTROLLBACK", v::packet_type::kClientRollback},
  };
  for (const NamedValue& c : all) {
    const auto* value = c.type->FindValueByName(c.name);
    ASSERT_NE(value, nullptr) << c.type->full_name() << " has no value " << c.name;
    EXPECT_EQ(value->number(), c.value) << c.type->full_name() << "." << c.name;
  }
}

}  // namespace
}  // namespace canal::proto
