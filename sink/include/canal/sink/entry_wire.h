// The sink's wire writer (EntryBuilder uses it; public for its tests): the
// ROWDATA entry of a rows event written straight in protobuf wire format (tags, varints, lengths), with no protobuf objects on
// the row path. The bytes are the ones protobuf's own serialiser writes for the
// same canal.entry.Entry (fields in number order, proto3 defaults left out,
// one-field oneofs written whenever set), so Canal clients read them unchanged;
// tests/sink/entry_wire_test.cc proves it against the protobuf-object path kept
// in tests/support/entry_wire_reference.h.
//
// What a column carries that does not change from row to row (index, sqlType,
// name, isKey, mysqlType, whether the field filters keep it) is encoded once per
// table map and reused while the table's definition stays the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/proto/wire.h"
#include "canal/parser/binlog/table_map.h"
#include "canal/sink/entry_builder.h"

namespace canal::sink::wire {

// The protobuf wire primitives (canal_wire).
using proto::wire::AppendBytesField;
using proto::wire::AppendVarintField;
using proto::wire::DelimitedSize;
using proto::wire::Int32Bits;
using proto::wire::Int64Bits;
using proto::wire::kLengthDelimited;
using proto::wire::kVarint;
using proto::wire::Tag;
using proto::wire::VarintSize;
using proto::wire::WriteBytes;
using proto::wire::WriteDelimited;
using proto::wire::WriteVarint;

// ---- transaction boundaries --------------------------------------------------

// Replaces *out with a TRANSACTIONBEGIN or TRANSACTIONEND entry (entry_type,
// canal.entry.EntryType) whose header has event_type (canal.entry.EventType)
// and no table, and whose store value is a TransactionBegin (thread_id) or a
// TransactionEnd (transaction_id): the bytes protobuf writes for the same
// objects, with no objects and, once *out has grown, no allocation.
void WriteTransactionEntry(const EntryContext& ctx, int32_t event_type, uint64_t entry_type, int64_t thread_id,
                           std::string_view transaction_id, std::string* out);

// ---- the rows entry ---------------------------------------------------------

// Writes the ROWDATA entry of rows events. Not thread-safe; reuses its buffers,
// so once they have grown to an event's size it allocates nothing per row.
class RowsEntryWriter {
 public:
  explicit RowsEntryWriter(const EntryBuilderOptions& options) : options_(options) {}

  // Same contract as EntryBuilder::RowsEntry: *out is replaced by the entry,
  // *row_count gets the number of rows; on error *out is left as it was.
  Status Write(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out, uint64_t* row_count);

  // Tables whose column encodings are cached (for tests).
  size_t cached_tables() const { return tables_.size(); }

 private:
  // The constant parts of one column's Column message.
  struct ColumnPlan {
    bool keep = false;  // the field filters keep it
    std::string head;   // fields 1-4: index, sqlType, name, isKey
    std::string tail;   // field 10: mysqlType
  };
  // One table's plan, and the definition it was made from: a TableMap pointer
  // can be freed and reused for another table, so a hit compares the definition.
  struct TablePlan {
    uint64_t table_id = 0;
    std::string db, table;
    std::vector<binlog::ColumnInfo> columns;
    bool integer_display_widths = false;  // TableMap::integer_display_widths the plan was made with
    std::vector<ColumnPlan> plans;
    uint64_t last_used = 0;
  };
  // One Column of one row, rendered, before it is written.
  struct Cell {
    uint32_t column = 0;
    bool is_null = false;
    bool updated = false;
    // A big value is not kept rendered: only its size is, and it is rendered
    // again straight into the entry (see kDeferredValueBytes in entry_wire.cc).
    bool deferred = false;
    size_t value_offset = 0;  // into values_, or into deferred_ when deferred
    size_t value_size = 0;
    size_t body_size = 0;  // the Column message without its tag and length
  };
  struct Row {
    size_t first_cell = 0;
    size_t before_cells = 0, after_cells = 0;
    size_t body_size = 0;  // the RowData message without its tag and length
  };

  std::string_view ValueOf(const Cell& c) const {
    return std::string_view(values_.data() + c.value_offset, c.value_size);
  }
  const TablePlan& PlanFor(const binlog::TableMap& t);
  void BuildPlan(const binlog::TableMap& t, TablePlan* plan) const;
  Status AddImage(const TablePlan& plan, const binlog::TableMap& t, const binlog::RowsEvent& rows,
                  const binlog::RowImage& img, const binlog::RowImage* before, bool after, bool insert, Row* row);
  [[gnu::noinline]] Status RenderBigCell(const binlog::TableMap& t, const binlog::RowsEvent& rows,
                                         const binlog::ColumnValue& v, Cell* c);
  [[gnu::noinline]] Status DeferredDiffers(const binlog::TableMap& t, const Cell& before, const Cell& after, bool* differs);
  void PlaceDeferred(const TablePlan& plan, size_t rows_begin);
  char* WriteCells(const TablePlan& plan, const binlog::TableMap& t, const Row& row, char* p, std::string* out);
  [[gnu::noinline]] char* WriteDeferred(const binlog::TableMap& t, const Cell& c, char* p, std::string* out);

  EntryBuilderOptions options_;
  std::vector<TablePlan> tables_;
  uint64_t use_clock_ = 0;
  binlog::RowsReader reader_;
  binlog::RowChange change_;
  std::vector<Cell> cells_;
  std::vector<Row> rows_;
  std::string values_;  // every rendered value of the event but the deferred ones, back to back
  // The deferred (big) values of the event, in the order they are written, each
  // a view into the rows event; and where each one starts in the entry.
  std::vector<binlog::ColumnValue> deferred_;
  std::vector<size_t> deferred_at_;
  size_t next_deferred_ = 0;  // in the write pass
  size_t entry_size_ = 0;     // in the write pass
  bool deferred_mismatch_ = false;
  std::string scratch_, scratch2_;  // one big value rendered, while only its size is wanted
  std::string count_text_;
};

}  // namespace canal::sink::wire
