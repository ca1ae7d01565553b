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
// table map and reused while the table's definition stays the same. A
// snapshot's rows (AppendInsertRow) go through the same plan and image writer,
// and WriteRowsEntry wraps them in the entry Write would have made.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <span>
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
// canal.entry.EntryType) whose header has no table and no event type (Canal
// leaves the oneof unset there: a Java client reads its default, UPDATE), the
// header props `props` (none for a binlog transaction), and whose store value
// is a TransactionBegin (thread_id) or a TransactionEnd (transaction_id): the
// bytes protobuf writes for the same objects, with no objects and, once *out
// has grown, no allocation.
void WriteTransactionEntry(const EntryContext& ctx, uint64_t entry_type, int64_t thread_id,
                           std::string_view transaction_id, std::span<const HeaderProp> props, std::string* out);

// HeaderFields' event type meaning "leave the field out".
inline constexpr int32_t kNoEventType = -1;

// ---- the rows entry ---------------------------------------------------------

// Writes the ROWDATA entry of rows events. Not thread-safe; reuses its buffers,
// so once they have grown to an event's size it allocates nothing per row.
class RowsEntryWriter {
 public:
  explicit RowsEntryWriter(const EntryBuilderOptions& options) : options_(options) {}

  // Same contract as EntryBuilder::RowsEntry: *out is replaced by the entry,
  // *row_count gets the number of rows; on error *out is left as it was.
  Status Write(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out, uint64_t* row_count);

  // A snapshot row (EntryBuilder::SnapshotRow): appends to *rows the RowData
  // field Write writes for the same row of a WRITE_ROWS event of `t` (the same
  // plan and image writer). The row is written in the writer's warm buffer
  // and appended, one copy of its bytes; *rows is untouched on error.
  // `table_version`: as EntryBuilder::SnapshotRow's.
  Status AppendInsertRow(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values, std::string* rows,
                         uint64_t table_version = 0);

  // AppendInsertRow's RowData field written at *at in *buffer, in place: its
  // bytes past *at may be overwritten, its size grows as the row needs (never
  // shrinks, so a reused buffer is not zero-filled again), and *at moves past
  // the row. No copy of the row. On error *at is unchanged (bytes past it
  // unspecified).
  Status AppendInsertRowAt(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values,
                           std::string* buffer, size_t* at, uint64_t table_version = 0);

  // WriteRowsEntry's entry made around rows already in *buffer at
  // [rows_begin, rows_end), without copying them: the prefix is written just
  // before rows_begin, *entry_begin gets where the entry starts, and *buffer
  // is cut at rows_end. NotFound (nothing written) when the prefix is longer
  // than rows_begin; the caller then copies with WriteRowsEntry.
  Status WriteRowsEntryInPlace(const EntryContext& ctx, const binlog::TableMap& t, std::string* buffer,
                               size_t rows_begin, size_t rows_end, uint64_t row_count,
                               std::span<const HeaderProp> extra_props, size_t* entry_begin);

  // The ROWDATA INSERT entry around rows AppendInsertRow wrote
  // (EntryBuilder::SnapshotRowsEntry). *out is replaced (its capacity
  // reused); `rows` is copied verbatim after the prefix. Uses no plan: any
  // writer may wrap rows another one rendered with the same options.
  Status WriteRowsEntry(const EntryContext& ctx, const binlog::TableMap& t, std::string_view rows, uint64_t row_count,
                        std::span<const HeaderProp> extra_props, std::string* out);

  // Tables whose column encodings are cached (for tests).
  size_t cached_tables() const { return tables_.size(); }

 private:
  // Constant bytes copied 64 at a time whatever their size (no branches on
  // it), into room the writer keeps past where it writes; longer ones are
  // copied as they are.
  struct Piece {
    static constexpr size_t kInline = 64;
    std::array<char, kInline> bytes{};
    std::string long_bytes;  // when longer than kInline
    size_t size = 0;
    void Set(std::string_view s);
  };
  // The constant parts of one column's Column message.
  struct ColumnPlan {
    bool keep = false;           // the field filters keep it
    bool copies_through = false;  // a string's text is its bytes (binlog::CopiesThroughAsUtf8)
    std::string head;            // fields 1-4: index, sqlType, name, isKey
    std::string null_head;       // head with the sqlType Canal gives a NULL (render/canal_sql_type.h)
    // Unsigned integers: a value above this is written with the table's
    // promoted plan of the column (its sqlType one type up).
    uint64_t keep_up_to = UINT64_MAX;
    // head, updated (when [1]), isNull false and the value's tag: all that
    // precedes a value's length, by `updated`.
    Piece before_value[2];
    Piece tail_piece;  // field 10: mysqlType
  };
  // One table's plan, and the definition it was made from: a TableMap pointer
  // can be freed and reused for another table, so a hit compares the definition.
  struct TablePlan {
    uint64_t table_id = 0;
    std::string db, table;
    std::vector<binlog::ColumnInfo> columns;
    bool integer_display_widths = false;  // TableMap::integer_display_widths the plan was made with
    std::vector<ColumnPlan> plans;
    std::vector<ColumnPlan> promoted;  // by column; set where plans[i].keep_up_to is not UINT64_MAX
    uint64_t last_used = 0;
  };
  // Where an update's before value of a column went in the entry, for the
  // after image's `updated` flags (valid when `row` is the current row).
  struct BeforeValue {
    uint64_t row = 0;
    bool is_null = false;
    size_t at = 0, size = 0;  // its text in building_
  };
  // What one image is written as.
  struct ImageSpec {
    char tag = 0;              // beforeColumns or afterColumns
    bool after = false;        // compared with the before image when `update`
    bool update = false;
  };
  // One row's images: before (delete, update) and after (insert, update).
  struct RowImages {
    std::span<const binlog::ColumnValue> before, after;
    bool has_before = false, has_after = false;
    bool update = false;  // an UPDATE_ROWS event's row
  };

  const TablePlan& PlanFor(const binlog::TableMap& t);
  // A snapshot row's plan, kept while `table_version` holds; InvalidArgument when `value_count`
  // is not the table's column count.
  Status InsertPlan(const binlog::TableMap& t, size_t value_count, uint64_t table_version, const TablePlan** plan);
  // A snapshot row's RowData written at *at in *buffer (lent to the image writer as building_);
  // *at moves past it, and is unchanged on error.
  Status WriteInsertRowIn(const TablePlan& plan, const binlog::TableMap& t, std::span<const binlog::ColumnValue> values,
                          std::string* buffer, size_t* at);
  void BuildPlan(const binlog::TableMap& t, TablePlan* plan) const;
  void BuildColumnPlan(const binlog::TableMap& t, size_t i, int sql_type, ColumnPlan* c) const;
  // building_ holds at least `end` bytes (never shrinks while an entry is written).
  char* Room(size_t end) {
    if (building_.size() < end) [[unlikely]] Grow(end);
    return building_.data();
  }
  [[gnu::noinline]] void Grow(size_t end);
  size_t WriteColumn(const ColumnPlan& cp, uint32_t column, const ImageSpec& spec, bool is_null, std::string_view text,
                     size_t at);
  bool WriteFixedColumn(const ColumnPlan& cp, const binlog::TableMap& t, const binlog::ColumnValue& v, uint32_t column,
                        const ImageSpec& spec, size_t* at);
  Status WriteImage(const TablePlan& plan, const binlog::TableMap& t, std::span<const binlog::ColumnValue> values,
                    const ImageSpec& spec, size_t* at);
  // One RowData field (tag, length, images) at *at in building_; *at is moved past it.
  Status WriteRowData(const TablePlan& plan, const binlog::TableMap& t, const RowImages& row, size_t* at);
  const BeforeValue* BeforeOf(size_t column) const {
    return before_[column].row == row_serial_ ? &before_[column] : nullptr;
  }
  // An update's before image notes where each value's text went (`at` in
  // building_; none for an empty or NULL one).
  void RecordBefore(const ImageSpec& spec, uint32_t column, bool is_null, size_t at, size_t size) {
    if (spec.update && !spec.after) before_[column] = {row_serial_, is_null, at, size};
  }
  bool Updated(const BeforeValue* before, bool is_null, std::string_view text) const;
  [[gnu::noinline]] Status WriteRenderedInPlace(const ColumnPlan& cp, const binlog::TableMap& t,
                                                const binlog::ColumnValue& v, uint32_t column,
                                                const ImageSpec& spec, size_t* at);

  EntryBuilderOptions options_;
  std::vector<TablePlan> tables_;
  uint64_t use_clock_ = 0;
  // The plan of the last AppendInsertRow's table_version (0: none). Any other
  // PlanFor may rebuild or evict it, so PlanFor forgets it.
  uint64_t insert_version_ = 0;
  size_t insert_plan_ = 0;  // index into tables_
  binlog::RowsReader reader_;
  binlog::RowChange change_;
  // The entry being written; swapped into the caller's string when it is whole,
  // so an error leaves the caller's as it was and the two buffers take turns.
  std::string building_;
  std::vector<BeforeValue> before_;  // by column
  uint64_t row_serial_ = 0;
  // Guesses, from the last entry, of the room the entry's prefix (header,
  // entry type, RowChange fields before the rows) and a RowData's length take:
  // rows are written after them and moved only when a guess was wrong.
  size_t prefix_guess_ = 64;
  size_t row_length_guess_ = 2;
  uint64_t last_rows_ = 1;      // the last entry's row count
  size_t last_rows_size_ = 0;   // and its rows' bytes
  std::string scratch_;  // a value whose text is neither fixed nor its bytes
};

}  // namespace canal::sink::wire
