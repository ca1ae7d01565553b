#include "canal/sink/entry_wire.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "canal/parser/binlog/column_text.h"
#include "canal/render/canal_value.h"

namespace canal::sink::wire {

namespace {

// canal.entry numbers (proto/canal/entry.proto), as the one-byte tags they make.
namespace entry_field {
constexpr char kHeader = Tag(1, kLengthDelimited);
constexpr char kEntryType = Tag(2, kVarint);
constexpr char kStoreValue = Tag(3, kLengthDelimited);
}  // namespace entry_field
namespace header_field {
constexpr char kVersion = Tag(1, kVarint);
constexpr char kLogfileName = Tag(2, kLengthDelimited);
constexpr char kLogfileOffset = Tag(3, kVarint);
constexpr char kServerId = Tag(4, kVarint);
constexpr char kServerenCode = Tag(5, kLengthDelimited);
constexpr char kExecuteTime = Tag(6, kVarint);
constexpr char kSourceType = Tag(7, kVarint);
constexpr char kSchemaName = Tag(8, kLengthDelimited);
constexpr char kTableName = Tag(9, kLengthDelimited);
constexpr char kEventLength = Tag(10, kVarint);
constexpr char kEventType = Tag(11, kVarint);
constexpr char kProps = Tag(12, kLengthDelimited);
constexpr char kGtid = Tag(13, kLengthDelimited);
}  // namespace header_field
namespace transaction_field {  // TransactionBegin and TransactionEnd
constexpr char kExecuteTime = Tag(1, kVarint);
constexpr char kTransactionId = Tag(2, kLengthDelimited);
constexpr char kThreadId = Tag(4, kVarint);
}  // namespace transaction_field
namespace pair_field {
constexpr char kKey = Tag(1, kLengthDelimited);
constexpr char kValue = Tag(2, kLengthDelimited);
}  // namespace pair_field
namespace change_field {
constexpr char kTableId = Tag(1, kVarint);
constexpr char kEventType = Tag(2, kVarint);
constexpr char kIsDdl = Tag(10, kVarint);
constexpr char kRowDatas = Tag(12, kLengthDelimited);
}  // namespace change_field
namespace row_field {
constexpr char kBeforeColumns = Tag(1, kLengthDelimited);
constexpr char kAfterColumns = Tag(2, kLengthDelimited);
}  // namespace row_field
namespace column_field {
constexpr int kIndex = 1;
constexpr int kSqlType = 2;
constexpr int kName = 3;
constexpr int kIsKey = 4;
constexpr char kUpdated = Tag(5, kVarint);
constexpr char kIsNull = Tag(6, kVarint);
constexpr char kValue = Tag(8, kLengthDelimited);
constexpr int kMysqlType = 10;
}  // namespace column_field

// canal.entry enum values the rows entry uses.
constexpr uint64_t kEntryTypeRowData = 2;
constexpr uint64_t kSourceTypeMysql = 2;
constexpr int32_t kEventInsert = 1, kEventUpdate = 2, kEventDelete = 3;

constexpr std::string_view kServerEncoding = "UTF-8";
constexpr std::string_view kRowsCountKey = "rowsCount";

// Tables whose plans are kept; a server streams from far fewer hot tables.
constexpr size_t kMaxCachedTables = 64;
// Buffers that one huge event grew past this are given back afterwards.
constexpr size_t kRetainedBufferBytes = size_t{8} << 20;
// Values of at least this many binlog bytes are not kept rendered through the
// event: pass 1 learns their rendered size, pass 2 renders them again straight
// into the entry. So a 64 MiB BLOB is held as the binlog's bytes and the entry's,
// not a third time as text in values_. Below this, rendering once and copying
// is cheaper than rendering twice (and a rows event holds ~8 KiB of small rows).
constexpr size_t kDeferredValueBytes = size_t{64} << 10;

// Whether `part` lies inside `whole` (a value's bytes inside the rows event,
// which outlives the entry's writing; values the row decoder built in its own
// scratch buffer do not, and are never deferred).
bool Within(std::string_view part, std::string_view whole) {
  const auto b = reinterpret_cast<uintptr_t>(whole.data());
  const auto p = reinterpret_cast<uintptr_t>(part.data());
  return p >= b && p - b <= whole.size() && part.size() <= whole.size() - (p - b);
}

void ReleaseIfHuge(std::string* s) {
  if (s->capacity() > kRetainedBufferBytes) std::string().swap(*s);
}

// Every fact of a column the plan is made from (the whole ColumnInfo).
bool SameColumn(const binlog::ColumnInfo& a, const binlog::ColumnInfo& b) {
  return a.type == b.type && a.real_type == b.real_type && a.meta == b.meta && a.nullable == b.nullable &&
         a.is_unsigned == b.is_unsigned && a.signedness_known == b.signedness_known && a.charset == b.charset &&
         a.is_key == b.is_key && a.visible == b.visible && a.geometry_type == b.geometry_type &&
         a.vector_dimensions == b.vector_dimensions && a.max_length == b.max_length &&
         a.precision == b.precision && a.decimals == b.decimals && a.name == b.name &&
         a.enum_or_set_labels == b.enum_or_set_labels && a.column_type == b.column_type;
}

bool SameColumns(const std::vector<binlog::ColumnInfo>& a, const std::vector<binlog::ColumnInfo>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameColumn(a[i], b[i])) return false;
  }
  return true;
}

// proto3 leaves a scalar out when it holds its default (0, "").
size_t OptionalVarintSize(uint64_t v) { return v == 0 ? 0 : 1 + VarintSize(v); }
size_t OptionalBytesSize(std::string_view s) { return s.empty() ? 0 : DelimitedSize(s.size()); }

char* WriteOptionalVarint(char tag, uint64_t v, char* p) {
  if (v == 0) return p;
  *p++ = tag;
  return WriteVarint(v, p);
}

char* WriteOptionalBytes(char tag, std::string_view s, char* p) {
  return s.empty() ? p : WriteDelimited(tag, s, p);
}

// An entry's Header: from the context, the table (empty for transaction
// boundaries), the event type and, when `rows_count` is not empty, the
// rowsCount prop. Size first, then the bytes, as protobuf writes them.
struct HeaderFields {
  const EntryContext& ctx;
  std::string_view db, table;
  int32_t event_type = 0;
  std::string_view rows_count;

  uint64_t offset() const { return Int64Bits(static_cast<int64_t>(ctx.position.position)); }
  uint64_t server_id() const { return Int64Bits(ctx.position.server_id); }
  uint64_t time() const { return Int64Bits(ctx.position.timestamp_ms); }
  uint64_t event_length() const { return Int64Bits(static_cast<int64_t>(ctx.event_length)); }
  size_t PairSize() const { return DelimitedSize(kRowsCountKey.size()) + OptionalBytesSize(rows_count); }

  size_t Size() const {
    return 2 + OptionalBytesSize(ctx.position.journal_name) + OptionalVarintSize(offset()) +
           OptionalVarintSize(server_id()) + DelimitedSize(kServerEncoding.size()) + OptionalVarintSize(time()) + 2 +
           OptionalBytesSize(db) + OptionalBytesSize(table) + OptionalVarintSize(event_length()) + 1 +
           VarintSize(Int32Bits(event_type)) + (rows_count.empty() ? 0 : DelimitedSize(PairSize())) +
           OptionalBytesSize(ctx.position.gtid);
  }

  // Writes the Header message's fields (not its own tag and length).
  char* Write(char* p) const {
    *p++ = header_field::kVersion;
    *p++ = 1;
    p = WriteOptionalBytes(header_field::kLogfileName, ctx.position.journal_name, p);
    p = WriteOptionalVarint(header_field::kLogfileOffset, offset(), p);
    p = WriteOptionalVarint(header_field::kServerId, server_id(), p);
    p = WriteDelimited(header_field::kServerenCode, kServerEncoding, p);
    p = WriteOptionalVarint(header_field::kExecuteTime, time(), p);
    *p++ = header_field::kSourceType;
    p = WriteVarint(kSourceTypeMysql, p);
    p = WriteOptionalBytes(header_field::kSchemaName, db, p);
    p = WriteOptionalBytes(header_field::kTableName, table, p);
    p = WriteOptionalVarint(header_field::kEventLength, event_length(), p);
    *p++ = header_field::kEventType;
    p = WriteVarint(Int32Bits(event_type), p);
    if (!rows_count.empty()) {
      *p++ = header_field::kProps;
      p = WriteVarint(PairSize(), p);
      p = WriteDelimited(pair_field::kKey, kRowsCountKey, p);
      p = WriteOptionalBytes(pair_field::kValue, rows_count, p);
    }
    return WriteOptionalBytes(header_field::kGtid, ctx.position.gtid, p);
  }
};

}  // namespace

const RowsEntryWriter::TablePlan& RowsEntryWriter::PlanFor(const binlog::TableMap& t) {
  ++use_clock_;
  TablePlan* victim = nullptr;
  for (TablePlan& p : tables_) {
    if (p.table_id == t.table_id && p.db == t.db && p.table == t.table) {
      if (!SameColumns(p.columns, t.columns) || p.integer_display_widths != t.integer_display_widths) {
        BuildPlan(t, &p);
      }
      p.last_used = use_clock_;
      return p;
    }
    if (victim == nullptr || p.last_used < victim->last_used) victim = &p;
  }
  if (tables_.size() < kMaxCachedTables) victim = &tables_.emplace_back();
  BuildPlan(t, victim);
  victim->last_used = use_clock_;
  return *victim;
}

void RowsEntryWriter::BuildPlan(const binlog::TableMap& t, TablePlan* plan) const {
  plan->table_id = t.table_id;
  plan->db = t.db;
  plan->table = t.table;
  plan->columns = t.columns;
  plan->integer_display_widths = t.integer_display_widths;
  plan->plans.assign(t.columns.size(), ColumnPlan{});
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const binlog::ColumnInfo& info = t.columns[i];
    ColumnPlan& c = plan->plans[i];
    c.keep = !(options_.fields && options_.fields->ColumnsFor(t.db, t.table) &&
               !options_.fields->Lists(t.db, t.table, info.name)) &&
             !(options_.black_fields && options_.black_fields->Lists(t.db, t.table, info.name));
    if (i != 0) AppendVarintField(column_field::kIndex, Int32Bits(static_cast<int32_t>(i)), &c.head);
    const int sql_type = render::CanalSqlType(info);
    if (sql_type != 0) AppendVarintField(column_field::kSqlType, Int32Bits(sql_type), &c.head);
    if (!info.name.empty()) AppendBytesField(column_field::kName, info.name, &c.head);
    if (info.is_key) AppendVarintField(column_field::kIsKey, 1, &c.head);
    const std::string mysql_type = render::CanalMysqlType(info, options_.values, t.integer_display_widths);
    if (!mysql_type.empty()) AppendBytesField(column_field::kMysqlType, mysql_type, &c.tail);
  }
}

// A value of kDeferredValueBytes or more (kept off AddImage's inlined path).
Status RowsEntryWriter::RenderBigCell(const binlog::TableMap& t, const binlog::RowsEvent& rows,
                                      const binlog::ColumnValue& v, Cell* c) {
  const binlog::ColumnInfo& column = t.columns[c->column];
  if (Within(v.raw, rows.rows)) {
    // Its size, counted where render/ can (binary, copied-through and
    // single-byte text), else rendered into scratch_ and dropped.
    if (!render::CanalValueSize(v, column, options_.values, &c->value_size)) {
      scratch_.clear();
      CANAL_RETURN_IF_ERROR(render::AppendCanalValue(v, column, options_.values, &scratch_));
      c->value_size = scratch_.size();
    }
    if (c->value_size != 0) {
      c->deferred = true;
      c->value_offset = deferred_.size();
      deferred_.push_back(v);
    }
    return Status::OK();
  }
  c->value_offset = values_.size();
  CANAL_RETURN_IF_ERROR(render::AppendCanalValue(v, column, options_.values, &values_));
  c->value_size = values_.size() - c->value_offset;
  return Status::OK();
}

// Whether an update's after value differs from its before value when one of
// them is deferred (not in values_).
Status RowsEntryWriter::DeferredDiffers(const binlog::TableMap& t, const Cell& before, const Cell& after,
                                        bool* differs) {
  if (before.value_size != after.value_size) {
    *differs = true;
    return Status::OK();
  }
  const binlog::ColumnInfo& column = t.columns[after.column];
  if (before.deferred && after.deferred) {
    const binlog::ColumnValue& bv = deferred_[before.value_offset];
    const binlog::ColumnValue& av = deferred_[after.value_offset];
    // Rendering is a function of the bytes: the same bytes give the same text;
    // binary (ISO-8859-1 or base64) and copied-through strings give different
    // text for different bytes.
    if (av.kind == bv.kind && av.json_is_text == bv.json_is_text &&
        (av.raw == bv.raw || av.kind == binlog::ColumnValue::Kind::kBytes ||
         (av.kind == binlog::ColumnValue::Kind::kString && binlog::CopiesThroughAsUtf8(column.charset)))) {
      *differs = av.raw != bv.raw;
      return Status::OK();
    }
  }
  // Rare (a converted charset, JSON, or a value either side of the threshold,
  // with texts of the same size): render the deferred ones again to compare.
  std::string_view texts[2];
  std::string* scratch[2] = {&scratch_, &scratch2_};
  const Cell* cells[2] = {&before, &after};
  for (int i = 0; i < 2; ++i) {
    if (!cells[i]->deferred) {
      texts[i] = ValueOf(*cells[i]);
      continue;
    }
    scratch[i]->clear();
    CANAL_RETURN_IF_ERROR(
        render::AppendCanalValue(deferred_[cells[i]->value_offset], column, options_.values, scratch[i]));
    texts[i] = *scratch[i];
  }
  *differs = texts[0] != texts[1];
  return Status::OK();
}

Status RowsEntryWriter::AddImage(const TablePlan& plan, const binlog::TableMap& t, const binlog::RowsEvent& rows,
                                 const binlog::RowImage& img, const binlog::RowImage* before, bool after,
                                 bool insert, Row* row) {
  // An update's before cells of this row, in column order like the after ones.
  const size_t before_begin = row->first_cell;
  const size_t before_end = row->first_cell + row->before_cells;
  size_t b = before_begin;
  const size_t n = std::min(img.values.size(), plan.plans.size());
  for (size_t i = 0; i < n; ++i) {
    const binlog::ColumnValue& v = img.values[i];
    const ColumnPlan& cp = plan.plans[i];
    if (!v.is_present() || !cp.keep) continue;
    Cell c;
    c.column = static_cast<uint32_t>(i);
    c.is_null = v.is_null();
    if (!c.is_null) {
      if (v.raw.size() >= kDeferredValueBytes) [[unlikely]] {
        CANAL_RETURN_IF_ERROR(RenderBigCell(t, rows, v, &c));
      } else {
        c.value_offset = values_.size();
        CANAL_RETURN_IF_ERROR(render::AppendCanalValue(v, t.columns[i], options_.values, &values_));
        c.value_size = values_.size() - c.value_offset;
      }
    }
    // Canal marks every column of an insert as updated, and an update's after
    // column when it differs from the before image (or had none there).
    if (after) {
      if (insert || before == nullptr) {
        c.updated = true;
      } else {
        while (b < before_end && cells_[b].column < i) ++b;
        if (b == before_end || cells_[b].column != i) {
          c.updated = true;  // absent from the before image (kept columns are kept in both)
        } else {
          const Cell& bc = cells_[b];
          if (bc.is_null != c.is_null) {
            c.updated = true;
          } else if (c.is_null) {
            c.updated = false;
          } else if (!bc.deferred && !c.deferred) [[likely]] {
            c.updated = ValueOf(bc) != ValueOf(c);
          } else {
            CANAL_RETURN_IF_ERROR(DeferredDiffers(t, bc, c, &c.updated));
          }
        }
      }
    }
    c.body_size = cp.head.size() + (c.updated ? 2 : 0) + 2 + (c.value_size ? DelimitedSize(c.value_size) : 0) +
                  cp.tail.size();
    row->body_size += DelimitedSize(c.body_size);
    cells_.push_back(c);
    if (after) {
      ++row->after_cells;
    } else {
      ++row->before_cells;
    }
  }
  return Status::OK();
}

// Where each deferred value starts in the entry, from `at`, where the first
// RowData starts: the same layout WriteCells writes (Write checks they agree).
void RowsEntryWriter::PlaceDeferred(const TablePlan& plan, size_t at) {
  deferred_at_.clear();
  for (const Row& r : rows_) {
    at += 1 + VarintSize(r.body_size);
    const size_t end = r.first_cell + r.before_cells + r.after_cells;
    for (size_t k = r.first_cell; k < end; ++k) {
      const Cell& c = cells_[k];
      if (c.deferred) {
        deferred_at_.push_back(at + 1 + VarintSize(c.body_size) + plan.plans[c.column].head.size() +
                               (c.updated ? 2 : 0) + 2 + 1 + VarintSize(c.value_size));
      }
      at += DelimitedSize(c.body_size);
    }
  }
}

// Renders a deferred value at p, the end of *out: the entry is grown one
// stretch at a time (up to the next deferred value), so the value is appended
// in place, within the capacity reserved for the whole entry.
char* RowsEntryWriter::WriteDeferred(const binlog::TableMap& t, const Cell& c, char* p, std::string* out) {
  const size_t at = static_cast<size_t>(p - out->data());
  if (at != out->size()) deferred_mismatch_ = true;
  out->resize(at);
  if (!render::AppendCanalValue(deferred_[c.value_offset], t.columns[c.column], options_.values, out).ok() ||
      out->size() != at + c.value_size) {
    deferred_mismatch_ = true;  // pass 1 rendered the same value without error, to this size
    out->resize(at + c.value_size);
  }
  ++next_deferred_;
  out->resize(next_deferred_ < deferred_at_.size() ? deferred_at_[next_deferred_] : entry_size_);
  return out->data() + at + c.value_size;
}

char* RowsEntryWriter::WriteCells(const TablePlan& plan, const binlog::TableMap& t, const Row& row, char* p,
                                  std::string* out) {
  const size_t end = row.first_cell + row.before_cells + row.after_cells;
  for (size_t k = row.first_cell; k < end; ++k) {
    const Cell& c = cells_[k];
    const ColumnPlan& cp = plan.plans[c.column];
    *p++ = k < row.first_cell + row.before_cells ? row_field::kBeforeColumns : row_field::kAfterColumns;
    p = WriteVarint(c.body_size, p);
    p = WriteBytes(cp.head, p);
    if (c.updated) {
      *p++ = column_field::kUpdated;
      *p++ = 1;
    }
    *p++ = column_field::kIsNull;  // a one-field oneof: written even when false
    *p++ = c.is_null ? 1 : 0;
    if (c.value_size != 0) {
      *p++ = column_field::kValue;
      p = WriteVarint(c.value_size, p);
      if (c.deferred) [[unlikely]] {
        p = WriteDeferred(t, c, p, out);
      } else {
        p = WriteBytes(ValueOf(c), p);
      }
    }
    p = WriteBytes(cp.tail, p);
  }
  return p;
}

Status RowsEntryWriter::Write(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out,
                              uint64_t* row_count) {
  const binlog::TableMap& t = *rows.table;
  const int32_t type = rows.info.kind == binlog::RowsKind::kWrite    ? kEventInsert
                       : rows.info.kind == binlog::RowsKind::kUpdate ? kEventUpdate
                                                                     : kEventDelete;
  const TablePlan& plan = PlanFor(t);

  // Pass 1: decode and render every row, so that every length is known before
  // a byte is written and the entry is written once, in place.
  cells_.clear();
  rows_.clear();
  values_.clear();
  deferred_.clear();
  reader_.Reset(rows);
  while (true) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader_.Next(&change_, &done));
    if (done) break;
    Row row;
    row.first_cell = cells_.size();
    Status s;
    if (change_.has_before) s = AddImage(plan, t, rows, change_.before, nullptr, false, false, &row);
    if (s.ok() && change_.has_after) {
      s = AddImage(plan, t, rows, change_.after, change_.has_before ? &change_.before : nullptr, true,
                   !change_.has_before, &row);
    }
    if (!s.ok()) {
      return s.WithContext(ctx.position.journal_name + ": offset " + std::to_string(ctx.position.position) + ": `" +
                           t.db + "`.`" + t.table + "` row " + std::to_string(rows_.size() + 1));
    }
    rows_.push_back(row);
  }
  const uint64_t n = rows_.size();
  // A big value's text is not held while the entry is.
  ReleaseIfHuge(&scratch_);
  ReleaseIfHuge(&scratch2_);

  // Pass 2: sizes, outermost last.
  size_t change_size = OptionalVarintSize(Int64Bits(static_cast<int64_t>(rows.table_id))) + 1 +
                       VarintSize(Int32Bits(type)) + 2;  // eventType and isDdl are oneofs: always there
  size_t rows_size = 0;
  for (const Row& r : rows_) rows_size += DelimitedSize(r.body_size);
  change_size += rows_size;

  char count_buf[24];
  const char* count_end = std::to_chars(count_buf, count_buf + sizeof count_buf, n).ptr;
  const HeaderFields header{ctx, t.db, t.table, type,
                            std::string_view(count_buf, static_cast<size_t>(count_end - count_buf))};
  const size_t header_size = header.Size();
  const size_t total = DelimitedSize(header_size) + 2 + DelimitedSize(change_size);

  if (deferred_.empty()) {
    out->resize(total);
  } else {
    // Grown a stretch at a time, each deferred value rendered at its end.
    PlaceDeferred(plan, total - rows_size);
    next_deferred_ = 0;
    entry_size_ = total;
    deferred_mismatch_ = false;
    out->clear();
    out->reserve(total);
    out->resize(deferred_at_.front());
  }
  char* const begin = out->data();
  char* p = begin;
  *p++ = entry_field::kHeader;
  p = WriteVarint(header_size, p);
  p = header.Write(p);

  *p++ = entry_field::kEntryType;
  p = WriteVarint(kEntryTypeRowData, p);
  *p++ = entry_field::kStoreValue;
  p = WriteVarint(change_size, p);
  p = WriteOptionalVarint(change_field::kTableId, Int64Bits(static_cast<int64_t>(rows.table_id)), p);
  *p++ = change_field::kEventType;
  p = WriteVarint(Int32Bits(type), p);
  *p++ = change_field::kIsDdl;
  *p++ = 0;
  for (const Row& r : rows_) {
    *p++ = change_field::kRowDatas;
    p = WriteVarint(r.body_size, p);
    p = WriteCells(plan, t, r, p, out);
  }

  const size_t written = static_cast<size_t>(p - out->data());
  const bool mismatch = !deferred_.empty() && deferred_mismatch_;
  ReleaseIfHuge(&values_);
  if (cells_.capacity() * sizeof(Cell) > kRetainedBufferBytes) std::vector<Cell>().swap(cells_);
  if (rows_.capacity() * sizeof(Row) > kRetainedBufferBytes) std::vector<Row>().swap(rows_);
  if (written != total || mismatch) {
    // The size pass and the write pass disagree: a bug in this file, never bad
    // input (the tests compare every byte with protobuf's). Refuse the entry.
    out->clear();
    return Status::Aborted("internal error building the rows entry of `" + t.db + "`.`" + t.table + "` at " +
                           ctx.position.journal_name + ":" + std::to_string(ctx.position.position) + ": wrote " +
                           std::to_string(written) + " bytes, sized " + std::to_string(total));
  }
  *row_count = n;
  return Status::OK();
}

void WriteTransactionEntry(const EntryContext& ctx, int32_t event_type, uint64_t entry_type, int64_t thread_id,
                           std::string_view transaction_id, std::string* out) {
  const HeaderFields header{ctx, {}, {}, event_type, {}};
  const size_t header_size = header.Size();
  // TransactionBegin / TransactionEnd: executeTime (1), transactionId (2),
  // threadId (4, begin only).
  const uint64_t time = Int64Bits(ctx.position.timestamp_ms);
  const uint64_t thread = Int64Bits(thread_id);
  const size_t value_size = OptionalVarintSize(time) + OptionalBytesSize(transaction_id) + OptionalVarintSize(thread);
  // storeValue is left out when empty, as protobuf leaves out empty bytes.
  const size_t total =
      DelimitedSize(header_size) + 1 + VarintSize(entry_type) + (value_size != 0 ? DelimitedSize(value_size) : 0);
  out->resize(total);
  char* p = out->data();
  *p++ = entry_field::kHeader;
  p = WriteVarint(header_size, p);
  p = header.Write(p);
  *p++ = entry_field::kEntryType;
  p = WriteVarint(entry_type, p);
  if (value_size != 0) {
    *p++ = entry_field::kStoreValue;
    p = WriteVarint(value_size, p);
    p = WriteOptionalVarint(transaction_field::kExecuteTime, time, p);
    p = WriteOptionalBytes(transaction_field::kTransactionId, transaction_id, p);
    p = WriteOptionalVarint(transaction_field::kThreadId, thread, p);
  }
  // The size pass and the write pass must agree (the rows entry checks the same way).
  if (static_cast<size_t>(p - out->data()) != total) out->resize(static_cast<size_t>(p - out->data()));
}

}  // namespace canal::sink::wire
