// Transaction: the events of one binlog transaction (or one piece of a large
// one), grouped by TransactionBuffer and handed to a TransactionSink.
//
// Everything a Transaction holds (statement text, row bytes) lives in the
// buffer that built it and is valid only during TransactionSink::OnTransaction;
// table maps are shared, so they stay right even after the decoder has seen a
// newer TABLE_MAP for the same id. Rows are kept undecoded: the sink reads them
// with binlog::RowsReader, so nothing is decoded twice or for a filtered table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"

namespace canal::parser {

enum class TxEventKind : uint8_t {
  kBegin,   // BEGIN statement, or the MariaDB GTID event that opens a transaction
  kRows,    // one WRITE/UPDATE/DELETE rows event
  kQuery,   // any other statement: DDL, or a statement logged inside a transaction
  kCommit,  // XID, COMMIT statement, or XA PREPARE
};

struct TxEvent {
  TxEventKind kind = TxEventKind::kQuery;
  uint64_t offset = 0;      // where the event starts in the transaction's file
  uint64_t end_offset = 0;  // where the next event starts
  uint32_t timestamp = 0;   // event header time, seconds
  uint32_t server_id = 0;
  uint64_t thread_id = 0;   // kBegin / kQuery: the statement's thread id
  std::string_view db;      // kQuery: default database
  std::string_view sql;     // kBegin / kQuery / kCommit (statement commits): the text
  bool has_xid = false;     // kCommit from an XID event
  uint64_t xid = 0;
  binlog::RowsEvent rows;   // kRows: views into the owning buffer
  std::shared_ptr<const binlog::TableMap> table;  // kRows
};

struct Transaction {
  std::string file;           // binlog file holding the whole transaction
  uint64_t begin_offset = 0;  // first event of the transaction (its GTID event when there is one)
  uint64_t end_offset = 0;    // end of the last event in this piece
  std::string gtid;           // "uuid:n" (MySQL) or "domain-server-seq" (MariaDB); "" when none
  // The stream's GTID state as LogPosition::gtid_set has it (gtid_state.h): the state after
  // this transaction is this set with `gtid` applied; for a transaction in pieces, the exact
  // state before it. Null when unknown.
  std::shared_ptr<const std::string> gtid_base;
  uint32_t server_id = 0;
  uint32_t timestamp = 0;     // time of the first event, seconds
  // A large transaction arrives in pieces: piece 0 is first, the one with
  // last_piece set ends it. Pieces end at event boundaries.
  uint32_t piece_index = 0;
  bool last_piece = true;
  std::vector<TxEvent> events;

  bool first_piece() const { return piece_index == 0; }
  bool complete() const { return first_piece() && last_piece; }
  uint64_t rows_events() const {
    uint64_t n = 0;
    for (const TxEvent& e : events) n += e.kind == TxEventKind::kRows;
    return n;
  }
};

// Where to restart the binlog stream so that nothing handed over is repeated:
// dump from `file`:`position` (a transaction boundary); when `skip_until` is
// non-zero the stream resumes inside the transaction that begins there, whose
// events ending at or before `skip_until` were already handed over.
struct ResumePoint {
  std::string file;
  uint64_t position = 4;
  uint64_t skip_until = 0;
  std::string gtid;       // GTID of the last complete transaction handed over ("" unknown)
  uint32_t timestamp = 0; // its time

  bool empty() const { return file.empty(); }
  std::string ToString() const {
    std::string s = file + ":" + std::to_string(position);
    if (skip_until != 0) s += " (skipping to " + std::to_string(skip_until) + ")";
    return s;
  }
};

// Receives whole transactions (or pieces) in binlog order. A non-OK return
// stops the parser; that transaction counts as not delivered.
class TransactionSink {
 public:
  virtual ~TransactionSink() = default;
  virtual Status OnTransaction(const Transaction& txn) = 0;
  // The stream is idle at `position` (heartbeat, or an event outside any
  // transaction): lets a sink advance cursors and report lag. Optional.
  virtual void OnIdle(const LogPosition& position) { (void)position; }
};

}  // namespace canal::parser
