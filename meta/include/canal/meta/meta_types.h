// Value types shared by every MetaManager back end.
//
// ClientIdentity names a subscriber (destination + client id, as Canal's
// com.alibaba.otter.canal.protocol.ClientIdentity); two identities are the same
// client when destination and client id match, whatever their filters, so a
// re-subscription with a new filter replaces the old one and keeps the cursor.
// LogIdentity is the upstream a cursor was taken from (Canal writes it beside
// every cursor). PositionRange is one batch handed to a client. Plain values;
// thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "canal/common/log_position.h"

namespace canal::meta {

struct ClientIdentity {
  std::string destination;
  int16_t client_id = 0;  // Canal keeps it in a Java short
  std::string filter;     // table filter regex; "" = the instance's filter

  // Same client: destination and id; the filter does not take part (Canal's rule).
  bool SameClient(const ClientIdentity& other) const {
    return destination == other.destination && client_id == other.client_id;
  }
  friend bool operator==(const ClientIdentity& a, const ClientIdentity& b) {
    return a.SameClient(b) && a.filter == b.filter;
  }

  // "client 1001 of destination example", for error messages.
  std::string ToString() const {
    return "client " + std::to_string(client_id) + " of destination " + destination;
  }
};

// The upstream server a cursor belongs to, so that a restart against a
// different master can tell the cursor is not its own.
struct LogIdentity {
  int64_t slave_id = -1;  // Canal writes -1
  std::string address;    // host name or IP of the master
  int32_t port = 0;

  friend bool operator==(const LogIdentity& a, const LogIdentity& b) {
    return std::tie(a.slave_id, a.address, a.port) == std::tie(b.slave_id, b.address, b.port);
  }
};

// One batch handed to a client: the positions of its first and last entry,
// the position a cursor may move to when the batch is acked (the end of the
// last complete transaction in it; empty when the batch holds no such point),
// and what the server needs to release it. This record is the only one of an
// in-flight batch: the session keeps no copy, the store only its get and ack
// sequences. store_ack and rows are opaque here, kept in memory like the
// batch, and mean something only to the server run that handed the batch out
// (which is why every new run and every new subscriber clears the batches).
struct PositionRange {
  LogPosition start;
  LogPosition end;
  LogPosition ack;
  // The store's ack point (the ring's end sequence): two entries of one
  // batch can share a position, so the position cannot stand in for it.
  uint64_t store_ack = 0;
  uint64_t rows = 0;  // table rows in the batch, for the ack metrics

  friend bool operator==(const PositionRange& a, const PositionRange& b) {
    return a.start == b.start && a.end == b.end && a.ack == b.ack && a.store_ack == b.store_ack &&
           a.rows == b.rows;
  }
};

struct Batch {
  int64_t id = 0;
  PositionRange range;

  friend bool operator==(const Batch& a, const Batch& b) { return a.id == b.id && a.range == b.range; }
};

}  // namespace canal::meta
