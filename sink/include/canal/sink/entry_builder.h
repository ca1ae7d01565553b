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
#include <string>
#include <string_view>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/binlog/events.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/render/canal_value.h"
#include "canal/sink/table_filter.h"

namespace canal::sink {

// What every entry of one event shares.
struct EntryContext {
  LogPosition position;     // file, offset of the event, server id, GTID, time (ms)
  uint64_t event_length = 0;
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
