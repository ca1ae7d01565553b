// FlatMessage: one table change as Canal's MQ mode publishes it in JSON
// (canal.mq.flatMessage = true), built from one serialised canal.entry.Entry.
//
// Canal's rules (MQMessageUtils.messageConverter), which consumers rely on:
//   - one FlatMessage per ROWDATA entry; TRANSACTIONBEGIN/END, heartbeats
//     and GTID log entries make none;
//   - `type` is the RowChange's event type name (INSERT, UPDATE, DELETE,
//     CREATE, ALTER, QUERY, TRUNCATE, ...), `isDdl` its isDdl, `sql` its sql;
//   - `es` is the header's execute time, `ts` the time of publishing, both ms;
//   - for a non-DDL INSERT/UPDATE/DELETE: `data` holds one map per row (the
//     after image, the before image for DELETE), column name -> value as a
//     string, SQL NULL as null; `old` (UPDATE only) holds, per row, the before
//     values of the columns marked updated; `pkNames` the key columns of the
//     first row; `sqlType` (java.sql.Types ints) and `mysqlType` (strings such
//     as "int(11)") map every column name seen;
//   - members that stay empty are null: `data`, `old`, `pkNames`, `sqlType`,
//     `mysqlType` of a DDL, `old` of an INSERT.
// JSON members are written in the order Canal's serializer writes them
// (alphabetical): data, database, es, gtid, id, isDdl, mysqlType, old,
// pkNames, sql, sqlType, table, ts, type.
//
// One member of our own: `"isSnapshot":true` (after isDdl, in that order)
// on a message made from a snapshot entry (header prop snapshot=true,
// canal/proto/snapshot_marker.h), named in FlatMessage's style (isDdl). It is
// absent otherwise, so a stream-only destination publishes Canal's JSON
// byte for byte.
//
// Memory: a FlatMessage holds views into the entry's bytes, not copies; keep
// the bytes alive while it is used. Reuse one FlatMessage across entries: its
// vectors keep their capacity, so steady traffic allocates nothing per row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::mq {

struct FlatValue {
  std::string_view name;
  std::string_view value;
  bool is_null = false;
};

struct FlatColumnType {
  std::string_view name;
  int32_t sql_type = 0;
  std::string_view mysql_type;
};

// One row: [data_begin, data_end) and [old_begin, old_end) index values.
struct FlatRow {
  uint32_t data_begin = 0, data_end = 0;
  uint32_t old_begin = 0, old_end = 0;
};

struct FlatMessage {
  int64_t id = 0;  // the batch id (Canal: the Message id)
  std::string_view database, table, sql, gtid;
  std::string_view type;  // the event type name
  bool is_ddl = false;
  bool is_snapshot = false;  // a snapshot chunk's rows: "isSnapshot":true
  int64_t es = 0, ts = 0;
  std::vector<std::string_view> pk_names;
  std::vector<FlatColumnType> types;  // sqlType / mysqlType, first-seen order, names unique
  std::vector<FlatValue> values;      // the rows' cells, referenced by FlatRow
  std::vector<FlatRow> rows;
  // Where the entry came from, for error messages.
  std::string_view logfile;
  int64_t logfile_offset = 0;
  // Scratch of BuildFlatMessage: the columns an UPDATE marks updated.
  std::vector<std::string_view> updated_columns;

  void Clear();
  // `db.table` at `file:offset`, for messages.
  std::string Describe() const;
};

// Builds `out` from `entry_bytes`. *is_change = false (and `out` unspecified)
// for entries that make no FlatMessage (transaction boundaries, heartbeats).
// Corruption naming the problem for malformed bytes.
Status BuildFlatMessage(std::string_view entry_bytes, int64_t id, int64_t ts_ms, FlatMessage* out, bool* is_change);

// Appends the message's JSON to `out`. With `row_subset` (indexes into
// message.rows, in order), only those rows are written: the part of a
// message one partition receives.
void AppendFlatMessageJson(const FlatMessage& message, const std::vector<uint32_t>* row_subset, std::string* out);

}  // namespace canal::mq
