// HistoryLog: what a destination stores of its schema history, a snapshot of
// the tables in scope at one binlog position and every column-changing DDL
// replayed after it, each at its own position. Rebuild() gives the column
// lists as of any position at or after the snapshot; Compact() folds DDL up
// to a position into a new snapshot.
//
// Stored as one JSON document (format "canal-schema-history/1"), in a local
// file written atomically (SaveHistoryFile) or in ZooKeeper.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/schema/schema_history.h"

namespace canal::schema {

struct BinlogPoint {
  std::string file;  // empty: unknown (before any position is known)
  uint64_t position = 0;
  bool empty() const { return file.empty(); }
  std::string ToString() const { return file + ":" + std::to_string(position); }
  bool operator==(const BinlogPoint&) const = default;
};
// Orders binlog positions: by the file's sequence number (the digits after
// its last '.'), then by offset.
bool PointBefore(const BinlogPoint& a, const BinlogPoint& b);

struct HistoryRecord {
  BinlogPoint at;  // the QUERY event's start
  std::string db;  // its default database
  std::string sql;
  uint32_t ts = 0;  // the event's timestamp (seconds since the epoch)
  bool operator==(const HistoryRecord&) const = default;
};

struct HistoryLog {
  BinlogPoint snapshot_at;
  std::map<std::string, std::string> databases;  // default charsets
  std::vector<TableSchema> tables;
  std::vector<HistoryRecord> records;  // in binlog order, all after snapshot_at
  int64_t compacted_at_ms = 0;          // wall clock of the last Compact (0: never)

  // The history as of `at` (every record before it applied); `at` empty = all.
  // Records that fail to apply are reported, naming the record's position.
  Status Rebuild(const BinlogPoint& at, SchemaHistory* out, const LexerOptions& options = {}) const;
  // Appends a record unless one at the same or a later position is stored
  // (a DDL read again after a restart). True when appended.
  bool Append(HistoryRecord record);
  // Folds the records before `at` whose timestamp is before `older_than`
  // (seconds; the oldest records first, stopping at the first that is not)
  // into the snapshot, which then stands just after the last one folded.
  // Returns the number folded in *folded (optional).
  Status Compact(const BinlogPoint& at, uint32_t older_than, const SchemaHistory::Scope& scope,
                 const LexerOptions& options = {}, size_t* folded = nullptr);
  void SetSnapshot(const BinlogPoint& at, const SchemaHistory& history);

  std::string ToJson() const;
  static Status FromJson(std::string_view json, HistoryLog* out);
};

// Atomic replace: a temporary file, fsync, rename, fsync of the folder.
Status SaveHistoryFile(const std::string& path, const HistoryLog& log);
// NotFound when the file does not exist (a first start).
Status LoadHistoryFile(const std::string& path, HistoryLog* log);

}  // namespace canal::schema
