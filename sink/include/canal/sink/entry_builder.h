// EntryBuilder: Canal entries (canal.entry.Entry, serialised) from decoded
// binlog events — the ROWDATA entry of a rows event, a DDL/QUERY entry, and the
// TRANSACTIONBEGIN/END pair — filled the way Canal's own parser fills them, so
// that Canal clients read them unchanged.
//
// Each entry is serialised once, here; the store keeps the bytes. Not
// thread-safe (it reuses its buffers); one builder per instance thread.
#pragma once

#include "canal/schema/statement.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"
#include "canal/parser/binlog/column_value.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/render/canal_value.h"
#include "canal/sink/table_filter.h"

namespace canal::sink {

// What every entry of one event shares.
struct EntryContext {
  LogPosition position;     // file, offset of the event, server id, GTID, time (ms)
  uint64_t event_length = 0;
};

// One entry header prop (canal.entry.Pair): written after the entry's own
// (rowsCount), in the order given. The views must outlive the call.
struct HeaderProp {
  std::string_view key, value;
};

struct EntryBuilderOptions {
  render::ValueFormatOptions values;  // Canal (default) or readable value strings
  const FieldFilter* fields = nullptr;        // keep only these columns (canal.instance.filter.field)
  const FieldFilter* black_fields = nullptr;  // drop these columns (canal.instance.filter.black.field)
};

class EntryBuilder {
 public:
  explicit EntryBuilder(EntryBuilderOptions options = {});
  ~EntryBuilder();

  // The ROWDATA entry of every row change in `rows` (its table is rows.table).
  // *row_count receives the number of rows. Decode errors name the event, and
  // leave *out as it was. The hot path: written straight in protobuf wire
  // format, with each table's constant column fields encoded once and reused
  // while its definition is unchanged; no allocation per row once warm.
  Status RowsEntry(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out, uint64_t* row_count);

  // A statement entry: DDL (CREATE/ALTER/ERASE/TRUNCATE/RENAME/CINDEX/DINDEX, isDdl
  // set) or any other statement as QUERY, with `sql`.
  // `table` fills the header's tableName (Canal names a DDL's table there).
  Status QueryEntry(const EntryContext& ctx, std::string_view schema, std::string_view sql, std::string* out,
                    std::string_view table = {});

  // TRANSACTIONBEGIN (thread id from the BEGIN statement, 0 when unknown) and
  // TRANSACTIONEND (the XID as transactionId; "" when none).
  Status BeginEntry(const EntryContext& ctx, uint64_t thread_id, std::string* out);
  Status EndEntry(const EntryContext& ctx, std::string_view transaction_id, std::string* out);
  // The same with header props (a snapshot chunk's marker).
  Status BeginEntry(const EntryContext& ctx, uint64_t thread_id, std::span<const HeaderProp> props, std::string* out);
  Status EndEntry(const EntryContext& ctx, std::string_view transaction_id, std::span<const HeaderProp> props,
                  std::string* out);

  // ---- snapshot rows (a table's existing rows, as INSERTs) ----
  // A snapshot driver renders rows on its reader threads with a builder of its
  // own made from the sink's EntryBuilderOptions (same field filters), then
  // hands them to the sink, which wraps them in entries with SnapshotRowsEntry.

  // Appends to *rows one RowData field (RowChange.rowDatas: tag, length, the
  // afterColumns of an inserted row) of `values` (one per column of `t`):
  // exactly the bytes RowsEntry writes for that row of a WRITE_ROWS event.
  // InvalidArgument when values.size() != t.columns.size(); a value that does
  // not render is its error naming the table. On error *rows is as it was. No
  // allocation per row once warm (beyond *rows' own growth). A nonzero
  // `table_version` promises that `t` is unchanged since the last call with the
  // same version (a new version for every change of t): the table's plan is
  // then not compared column by column again for each row.
  Status SnapshotRow(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values, std::string* rows,
                     uint64_t table_version = 0);

  // SnapshotRow's RowData field written at *at in *buffer instead of appended:
  // no copy of the row. *buffer's bytes past *at may be overwritten and its
  // size grows as needed, never shrinking (a reused buffer is not zero-filled
  // again); *at moves past the row, and is unchanged on error.
  Status SnapshotRowAt(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values, std::string* buffer,
                       size_t* at, uint64_t table_version = 0);

  // SnapshotRowsEntry's entry made around rows already at [rows_begin,
  // rows_end) of *buffer: its prefix is written just before rows_begin,
  // *entry_begin gets where the entry starts, *buffer is cut at rows_end.
  // NotFound, with nothing written, when the room before rows_begin is too
  // small for the prefix (copy with SnapshotRowsEntry then).
  Status SnapshotRowsEntryInPlace(const EntryContext& ctx, const binlog::TableMap& t, std::string* buffer,
                                  size_t rows_begin, size_t rows_end, uint64_t row_count,
                                  std::span<const HeaderProp> props, size_t* entry_begin);

  // Replaces *out with a ROWDATA entry, eventType INSERT, of `row_count` rows
  // whose RowData fields are `rows` (SnapshotRow's, concatenated, copied
  // verbatim): header schema/table from t, props rowsCount then `props`,
  // RowChange tableId t.table_id (left out when 0). The bytes protobuf writes.
  Status SnapshotRowsEntry(const EntryContext& ctx, const binlog::TableMap& t, std::string_view rows,
                           uint64_t row_count, std::span<const HeaderProp> props, std::string* out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Canal's event type for a statement: CREATE, ALTER, ERASE (DROP TABLE),
// TRUNCATE, RENAME, CINDEX (CREATE INDEX), DINDEX (DROP INDEX) or QUERY; *is_ddl
// is false only for QUERY. Values are canal.entry.EventType numbers. Both ask
// the project's one classifier (canal/schema/statement.h).
int ClassifyStatement(std::string_view sql, bool* is_ddl);
int CanalEventType(const canal::schema::StatementClass& c, bool* is_ddl);

}  // namespace canal::sink
