// Event: one decoded binlog event — its header, where it was, and its body.
//
// Bodies hold views into the bytes given to EventDecoder::Decode (or into buffers
// the decoder owns); an Event is valid until the next Decode/NextInner call.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "canal/parser/binlog/events.h"
#include "canal/parser/binlog/rows_event.h"

namespace canal::binlog {

struct TableMapEventRef {
  const struct TableMap* table = nullptr;  // owned by the decoder
};

// An event the decoder recognised but keeps no body for (STOP, LOAD family,
// TRANSACTION_CONTEXT, VIEW_CHANGE, ignorable unknown types, ...).
struct OpaqueEvent {
  std::string_view body;
};

using EventBody = std::variant<OpaqueEvent, const FormatDescription*, QueryEvent, RotateEvent,
                               XidEvent, IntvarEvent, RandEvent, UserVarEvent, GtidEvent,
                               PreviousGtidsEvent, MariaGtidEvent, MariaGtidListEvent,
                               BinlogCheckpointEvent, RowsQueryEvent, XaPrepareEvent,
                               HeartbeatEvent, IncidentEvent, TransactionPayloadEvent,
                               TableMapEventRef, RowsEvent>;

struct Event {
  EventHeader header;
  uint64_t offset = 0;          // where the event starts in its file/stream
  bool in_payload = false;      // decoded from inside a TRANSACTION_PAYLOAD
  bool checksum_verified = false;
  std::string_view raw;         // the whole event as given, checksum included
  EventBody body;

  EventType type() const { return header.type(); }
  template <typename T>
  const T* As() const { return std::get_if<T>(&body); }
};

}  // namespace canal::binlog
