// LogPosition: where a change sits in one upstream's binlog stream.
//
// The same value travels from the parser (each entry's position), through the
// store (batch ranges) to the meta manager (a client's cursor, persisted in
// Canal's JSON shape). Positions of one stream are totally ordered by
// (journal file name, offset); file names of one server sort in order
// (mysql-bin.000009 < mysql-bin.000010), so name order is binlog order.
// A plain value type; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>

namespace canal {

struct LogPosition {
  std::string journal_name;  // binlog file, e.g. "mysql-bin.000004"
  uint64_t position = 0;     // offset of the event in that file
  uint32_t server_id = 0;
  std::string gtid;          // GTID of the transaction ("" when none)
  int64_t timestamp_ms = 0;  // event time, milliseconds since the epoch (Canal's unit)
  // Canal's "included": whether the event at `position` itself has been
  // consumed (true) or consumption resumes at it (false).
  bool included = false;
  // For a cursor inside a large transaction: the offset where that
  // transaction began (its events up to `position` were consumed); 0 when
  // the position is a transaction boundary. Binlog events start at 4 or
  // later, so 0 never names a real transaction.
  uint64_t transaction_begin = 0;
  // A snapshot's progress as of this position (snapshot/snapshot_progress.h: a JSON object's
  // text), null when no snapshot is under way. It rides with the position so that the ack
  // that moves a cursor here makes it durable in the same write (meta.dat, ZooKeeper): a
  // restart resumes the snapshot after the last acked chunk. Shared, so an entry's copy costs
  // a reference count, not the text.
  std::shared_ptr<const std::string> snapshot;
  // The stream's GTID state here, for a resume on another server (MariaDB's
  // "domain-server-seq,..."; parser/gtid_state.h): at a transaction boundary the state
  // after the transaction is this set with `gtid` applied; inside a transaction
  // (transaction_begin != 0) it is the state before it. Shared: it changes rarely (a
  // single-domain stream keeps one). Null when unknown (MySQL streams for now).
  std::shared_ptr<const std::string> gtid_set;

  bool empty() const { return journal_name.empty(); }

  // Stream order; GTID, timestamp, server id, transaction_begin, snapshot and gtid_set do not take
  // part (two cursors at one offset never differ in transaction_begin).
  friend bool operator<(const LogPosition& a, const LogPosition& b) {
    return std::tie(a.journal_name, a.position, a.included) < std::tie(b.journal_name, b.position, b.included);
  }
  friend bool operator==(const LogPosition& a, const LogPosition& b) {
    return a.journal_name == b.journal_name && a.position == b.position && a.included == b.included &&
           a.server_id == b.server_id && a.gtid == b.gtid && a.timestamp_ms == b.timestamp_ms &&
           a.transaction_begin == b.transaction_begin && SameText(a.snapshot, b.snapshot) &&
           SameText(a.gtid_set, b.gtid_set);
  }
  static bool SameSnapshot(const LogPosition& a, const LogPosition& b) { return SameText(a.snapshot, b.snapshot); }
  static bool SameText(const std::shared_ptr<const std::string>& a, const std::shared_ptr<const std::string>& b) {
    if (a == b) return true;
    return a != nullptr && b != nullptr && *a == *b;
  }
  friend bool operator!=(const LogPosition& a, const LogPosition& b) { return !(a == b); }
  friend bool operator<=(const LogPosition& a, const LogPosition& b) { return !(b < a); }

  // "mysql-bin.000004:13885" (plus "@gtid" when set), for logs and messages.
  std::string ToString() const {
    std::string s = journal_name + ":" + std::to_string(position);
    if (!gtid.empty()) s += "@" + gtid;
    if (transaction_begin != 0) s += " (in the transaction at " + std::to_string(transaction_begin) + ")";
    return s;
  }
};

}  // namespace canal
