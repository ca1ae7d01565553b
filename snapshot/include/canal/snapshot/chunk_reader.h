// ChunkReader: reads one table's snapshot from the primary, one chunk at a time, each chunk
// exactly as the binlog left the table at a position P the server names.
//
// Each ReadChunk is one transaction on the reader's own connection:
//   START TRANSACTION WITH CONSISTENT SNAPSHOT
//   SHOW STATUS LIKE 'binlog_snapshot_%'   -- MariaDB: P, the binlog position of that snapshot
//   <the chunk statement>                  -- prepared; the previous chunk's last key bound as values
//   COMMIT
// so every row handed out is as the transactions up to P left it, and no later one touched it
// (chunk_window.h merges that with the stream). MariaDB (and Percona Server) report in
// binlog_snapshot_file/_position the binlog position that corresponds to the snapshot, whatever
// commits after it; Oracle MySQL has no such variables and is refused (NotSupported) until it gets
// a position source of its own. Only InnoDB takes part in the snapshot: Open refuses a table of
// another engine (TableShape::engine), whose rows would be read as they are at that moment.
//
// A keyed table (chunk_key.h) is paged: a chunk stops at chunk_rows rows or once its rows hold
// chunk_bytes bytes, whichever comes first; the row that crosses the byte bound is still in the
// chunk, so a single row larger than the bound is a chunk of its own. The statement's LIMIT is
// fitted to the row width (the widest row the columns allow at first, then the last chunk's
// rows), so the server does not send rows past the byte bound. A keyless
// table is one statement in one transaction, streamed to the callback row by row (never held
// whole) and exhausted after it.
//
// Rows come in the binary protocol (prepared statements for keyed and keyless tables alike, so one
// value form reaches the callback), fetched unbuffered into buffers the reader keeps and grows to
// the longest value seen: no allocation per row. Values are typed, never rendered: integers as
// 64-bit, FLOAT/DOUBLE as double, temporal types as their fields, everything else (strings, DECIMAL
// as its text, BLOB, BIT, JSON, ...) as the bytes the server sent, in the connection's charset for
// text (binary columns: charset 63).
//
// The session is set up by Open: REPEATABLE READ (a consistent snapshot means nothing in any other
// isolation level), time_zone '+00:00' (TIMESTAMP values, and the keys bound from them, never
// meet a daylight-saving fold) and no PAD_CHAR_TO_FULL_LENGTH in sql_mode (CHAR values as the binlog
// carries them).
//
// Errors are Status values naming the table, the step ("first chunk", "next chunk", "whole-table
// read", "starting the consistent snapshot", ...) and the server's error, whose number is
// Status::subcode(); a missing privilege names the GRANT it needs. After an error the transaction
// is rolled back; after the connection was lost, Connect it again and Open the reader again (its
// prepared statements belonged to the old session).
// Not thread-safe: one reader per connection, one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/mysql/query_connection.h"
#include "canal/snapshot/chunk_key.h"
#include "canal/snapshot/field_value.h"
#include "canal/snapshot/snapshot_options.h"

namespace canal::snapshot {

struct ChunkRow {
  std::span<const FieldValue> fields;  // one per TableShape column, in table order
  uint64_t bytes = 0;                  // what the row counts against chunk_bytes
};

struct ChunkResult {
  LogPosition snapshot;            // P: journal_name and position (binlog_snapshot_file/_position)
  std::vector<KeyValue> last_key;  // the last row's key values, in key order (empty when no row)
  uint64_t rows = 0, bytes = 0;
  bool exhausted = false;          // no row after this chunk (a keyless table: always)
};

class ChunkReader {
 public:
  // The callback's error stops the read (the transaction is rolled back) and is returned.
  using RowCallback = std::function<Status(const ChunkRow&)>;

  // `conn`: the reader's own connection, connected, outliving the reader.
  explicit ChunkReader(mysql::QueryConnection* conn);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Validates `options` (InvalidArgument naming the setting), chooses the chunk key, plans and
  // prepares the statements (`where`: the operator's filter, "" for none), sets the session.
  Status Open(const TableShape& shape, std::string_view where, const SnapshotOptions& options);

  // Reads the chunk after `after` (the previous result's last_key; empty: the first chunk) and
  // hands each row to `on_row` in key order.
  Status ReadChunk(const std::vector<KeyValue>& after, const RowCallback& on_row, ChunkResult* result);

  const ChunkKey& key() const;
  const std::string& first_statement() const;
  const std::string& next_statement() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace canal::snapshot
