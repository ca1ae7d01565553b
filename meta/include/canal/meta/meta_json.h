// Canal's JSON shapes for persisted meta data.
//
// - meta.dat (FileMetaManager, `${canal.file.data.dir}/<dest>/meta.dat`): what
//   Canal's FileMixedMetaManager writes with fastjson defaults: keys sorted,
//   compact, absent values left out, no "@type", batches never stored:
//   {"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"example",
//   "filter":""},"cursor":{"identity":{"slaveId":-1,"sourceAddress":{"address":
//   "127.0.0.1","port":3306}},"postion":{"gtid":"","included":false,"journalName":
//   "mysql-bin.000004","position":13885,"serverId":1,"timestamp":1591600659000}}}],
//   "destination":"example"}
//   ("postion" is Canal's spelling, kept for compatibility.) A cursor inside a
//   large transaction also carries "transactionBegin" (LogPosition::
//   transaction_begin), our one extension; it is left out when zero, and
//   Canal's reader ignores it.
// - cursor node (ZooKeeper `/otter/canal/destinations/<dest>/<clientId>/cursor`):
//   the same cursor object with "@type" naming Canal's LogPosition class first.
//
// Decoders accept what Canal and hand edits produce: "@type" anywhere, unknown
// keys, null or missing optional fields (gtid, serverId, timestamp, included,
// filter, cursor); anything else malformed is Corruption naming the field.
// Encoders never fail: invalid UTF-8 in strings is replaced, not thrown.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/meta/meta_types.h"

namespace canal::meta {

// What meta.dat holds for one client.
struct ClientMeta {
  ClientIdentity client;
  std::optional<LogPosition> cursor;
  LogIdentity cursor_identity;  // meaningful only with a cursor

  friend bool operator==(const ClientMeta& a, const ClientMeta& b) {
    return a.client == b.client && a.cursor == b.cursor && a.cursor_identity == b.cursor_identity;
  }
};

// What meta.dat holds for one destination.
struct DestinationMeta {
  std::string destination;
  std::vector<ClientMeta> clients;  // subscription order
};

inline constexpr std::string_view kLogPositionClass = "com.alibaba.otter.canal.protocol.position.LogPosition";

std::string EncodeMetaFile(const DestinationMeta& meta);
// Rejects a client whose destination differs from the file's.
Status DecodeMetaFile(std::string_view json, DestinationMeta* meta);

// The ZooKeeper cursor node body (with "@type").
std::string EncodeCursor(const LogPosition& position, const LogIdentity& identity);
Status DecodeCursor(std::string_view json, LogPosition* position, LogIdentity* identity);

}  // namespace canal::meta
