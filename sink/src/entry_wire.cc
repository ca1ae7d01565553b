#include "canal/sink/entry_wire.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "canal/common/utf8.h"
#include "canal/parser/binlog/column_text.h"
#include "canal/proto/field_numbers.h"
#include "canal/render/canal_sql_type.h"
#include "canal/render/canal_value.h"

namespace canal::sink::wire {

namespace {

// canal.entry's field numbers (canal/proto/field_numbers.h), as the one-byte
// tags they make.
namespace fields = proto::fields;
namespace values = proto::values;
namespace entry_field {
constexpr char kHeader = Tag(fields::entry::kHeader, kLengthDelimited);
constexpr char kEntryType = Tag(fields::entry::kEntryType, kVarint);
constexpr char kStoreValue = Tag(fields::entry::kStoreValue, kLengthDelimited);
}  // namespace entry_field
namespace header_field {
constexpr char kVersion = Tag(fields::header::kVersion, kVarint);
constexpr char kLogfileName = Tag(fields::header::kLogfileName, kLengthDelimited);
constexpr char kLogfileOffset = Tag(fields::header::kLogfileOffset, kVarint);
constexpr char kServerId = Tag(fields::header::kServerId, kVarint);
constexpr char kServerenCode = Tag(fields::header::kServerenCode, kLengthDelimited);
constexpr char kExecuteTime = Tag(fields::header::kExecuteTime, kVarint);
constexpr char kSourceType = Tag(fields::header::kSourceType, kVarint);
constexpr char kSchemaName = Tag(fields::header::kSchemaName, kLengthDelimited);
constexpr char kTableName = Tag(fields::header::kTableName, kLengthDelimited);
constexpr char kEventLength = Tag(fields::header::kEventLength, kVarint);
constexpr char kEventType = Tag(fields::header::kEventType, kVarint);
constexpr char kProps = Tag(fields::header::kProps, kLengthDelimited);
constexpr char kGtid = Tag(fields::header::kGtid, kLengthDelimited);
}  // namespace header_field
namespace transaction_field {  // TransactionBegin and TransactionEnd share these numbers
static_assert(fields::transaction_begin::kExecuteTime == fields::transaction_end::kExecuteTime &&
              fields::transaction_begin::kTransactionId == fields::transaction_end::kTransactionId);
constexpr char kExecuteTime = Tag(fields::transaction_begin::kExecuteTime, kVarint);
constexpr char kTransactionId = Tag(fields::transaction_begin::kTransactionId, kLengthDelimited);
constexpr char kThreadId = Tag(fields::transaction_begin::kThreadId, kVarint);
}  // namespace transaction_field
namespace pair_field {
constexpr char kKey = Tag(fields::pair::kKey, kLengthDelimited);
constexpr char kValue = Tag(fields::pair::kValue, kLengthDelimited);
}  // namespace pair_field
namespace change_field {
constexpr char kTableId = Tag(fields::row_change::kTableId, kVarint);
constexpr char kEventType = Tag(fields::row_change::kEventType, kVarint);
constexpr char kIsDdl = Tag(fields::row_change::kIsDdl, kVarint);
constexpr char kRowDatas = Tag(fields::row_change::kRowDatas, kLengthDelimited);
}  // namespace change_field
namespace row_field {
constexpr char kBeforeColumns = Tag(fields::row_data::kBeforeColumns, kLengthDelimited);
constexpr char kAfterColumns = Tag(fields::row_data::kAfterColumns, kLengthDelimited);
}  // namespace row_field
namespace column_field {  // numbers for the Append*Field calls, tags for the bytes written directly
constexpr uint32_t kIndex = fields::column::kIndex;
constexpr uint32_t kSqlType = fields::column::kSqlType;
constexpr uint32_t kName = fields::column::kName;
constexpr uint32_t kIsKey = fields::column::kIsKey;
constexpr char kUpdated = Tag(fields::column::kUpdated, kVarint);
constexpr char kIsNull = Tag(fields::column::kIsNull, kVarint);
constexpr char kValue = Tag(fields::column::kValue, kLengthDelimited);
constexpr uint32_t kMysqlType = fields::column::kMysqlType;
}  // namespace column_field

// canal.entry enum values the rows entry uses.
constexpr uint64_t kEntryTypeRowData = values::entry_type::kRowData;
constexpr uint64_t kSourceTypeMysql = values::source_type::kMysql;
constexpr int32_t kEventInsert = values::event_type::kInsert, kEventUpdate = values::event_type::kUpdate,
                  kEventDelete = values::event_type::kDelete;

constexpr std::string_view kServerEncoding = "UTF-8";
constexpr std::string_view kRowsCountKey = "rowsCount";

// Tables whose plans are kept; a server streams from far fewer hot tables.
constexpr size_t kMaxCachedTables = 64;
// Entries up to this size are written in the writer's own buffer and copied
// out; bigger ones are handed over (a big entry is never held twice).
constexpr size_t kCopiedEntryBytes = size_t{256} << 10;
// Buffers that one huge event grew past this are given back afterwards.
constexpr size_t kRetainedBufferBytes = size_t{8} << 20;
// A value of at least this many binlog bytes whose text is neither fixed nor
// its own bytes is rendered straight into the entry, never held beside it as
// text: a 64 MiB BLOB is held as the binlog's bytes and the entry's only.
// Smaller ones are rendered into a scratch string and copied, which is cheaper.
constexpr size_t kBigValueBytes = size_t{64} << 10;
// The most bytes a Column's fields before its value take besides the head:
// the image tag, the body's length, updated, isNull, the value's tag and length.
constexpr size_t kMaxColumnFraming = 1 + 10 + 2 + 2 + 1 + 10;
// Room taken beyond a big value for the rest of its row and a longer entry
// prefix than guessed: growing an entry of many MiB by a few bytes would
// briefly hold it twice. (A rows event ends soon after its first big row.)
constexpr size_t kBigValueSlack = size_t{64} << 10;

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
  int32_t event_type = 0;  // kNoEventType: left out (transaction boundaries, as Canal's)
  std::string_view rows_count;

  uint64_t offset() const { return Int64Bits(static_cast<int64_t>(ctx.position.position)); }
  uint64_t server_id() const { return Int64Bits(ctx.position.server_id); }
  uint64_t time() const { return Int64Bits(ctx.position.timestamp_ms); }
  uint64_t event_length() const { return Int64Bits(static_cast<int64_t>(ctx.event_length)); }
  size_t PairSize() const { return DelimitedSize(kRowsCountKey.size()) + OptionalBytesSize(rows_count); }

  size_t Size() const {
    return 2 + OptionalBytesSize(ctx.position.journal_name) + OptionalVarintSize(offset()) +
           OptionalVarintSize(server_id()) + DelimitedSize(kServerEncoding.size()) + OptionalVarintSize(time()) + 2 +
           OptionalBytesSize(db) + OptionalBytesSize(table) + OptionalVarintSize(event_length()) +
           (event_type == kNoEventType ? 0 : 1 + VarintSize(Int32Bits(event_type))) + (rows_count.empty() ? 0 : DelimitedSize(PairSize())) +
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
    if (event_type != kNoEventType) {
      *p++ = header_field::kEventType;
      p = WriteVarint(Int32Bits(event_type), p);
    }
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

namespace {
// Writes a Piece at p (which has Piece::kInline bytes of room); returns its end.
template <typename Piece>
[[gnu::always_inline]] inline char* Put(const Piece& piece, char* p) {
  if (piece.size <= Piece::kInline) [[likely]] {
    std::memcpy(p, piece.bytes.data(), Piece::kInline);
    return p + piece.size;
  }
  return WriteBytes(piece.long_bytes, p);
}
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
  plan->promoted.assign(t.columns.size(), ColumnPlan{});
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const binlog::ColumnInfo& info = t.columns[i];
    BuildColumnPlan(t, i, render::CanalSqlType(info), &plan->plans[i]);
    const render::SqlTypePromotion promotion = render::CanalSqlTypePromotion(info);
    if (promotion.keep_up_to != UINT64_MAX) {
      plan->plans[i].keep_up_to = promotion.keep_up_to;
      BuildColumnPlan(t, i, promotion.promoted, &plan->promoted[i]);
    }
  }
}

void RowsEntryWriter::BuildColumnPlan(const binlog::TableMap& t, size_t i, int sql_type, ColumnPlan* plan) const {
  const binlog::ColumnInfo& info = t.columns[i];
  ColumnPlan& c = *plan;
  c.copies_through = binlog::CopiesThroughAsUtf8(info.charset);
  c.keep = !(options_.fields && options_.fields->ColumnsFor(t.db, t.table) &&
             !options_.fields->Lists(t.db, t.table, info.name)) &&
           !(options_.black_fields && options_.black_fields->Lists(t.db, t.table, info.name));
  // head = index, sqlType, name, isKey; null_head the same with a NULL's sqlType.
  auto make_head = [&](int type, std::string* head) {
    if (i != 0) AppendVarintField(column_field::kIndex, Int32Bits(static_cast<int32_t>(i)), head);
    if (type != 0) AppendVarintField(column_field::kSqlType, Int32Bits(type), head);
    if (!info.name.empty()) AppendBytesField(column_field::kName, info.name, head);
    if (info.is_key) AppendVarintField(column_field::kIsKey, 1, head);
  };
  make_head(sql_type, &c.head);
  make_head(render::CanalNullSqlType(info), &c.null_head);
  const std::string mysql_type = render::CanalMysqlType(info, options_.values, t.integer_display_widths);
  std::string tail;  // mysqlType
  if (!mysql_type.empty()) AppendBytesField(column_field::kMysqlType, mysql_type, &tail);
  for (int updated = 0; updated < 2; ++updated) {
    std::string s = c.head;
    if (updated) s += {column_field::kUpdated, 1};
    s += {column_field::kIsNull, 0, column_field::kValue};
    c.before_value[updated].Set(s);
  }
  c.tail_piece.Set(tail);
}

void RowsEntryWriter::Piece::Set(std::string_view s) {
  size = s.size();
  bytes.fill(0);
  if (size <= kInline) {
    std::memcpy(bytes.data(), s.data(), size);
    long_bytes.clear();
  } else {
    long_bytes = s;
  }
}

void RowsEntryWriter::Grow(size_t end) {
  // Geometric while small; past a few MiB (an entry with big values) by a
  // quarter, into an exactly sized buffer: std::string's own growth would
  // double, and a big entry would briefly be held three times.
  if (end <= building_.capacity()) {
    // Zero-filled (std::string's resize), so only a little past what is asked.
    building_.resize(std::min(building_.capacity(), std::max(end, building_.size() + (building_.size() >> 3) + 4096)));
    return;
  }
  const size_t size = building_.size();
  const size_t target = size < (size_t{4} << 20) ? std::max({end, 2 * size, size_t{4096}}) : std::max(end, size + size / 4);
  std::string bigger;
  bigger.reserve(target);
  bigger.append(building_);
  bigger.resize(target);
  building_.swap(bigger);
}

bool RowsEntryWriter::Updated(const BeforeValue* before, bool is_null, std::string_view text) const {
  if (before == nullptr) return true;  // absent from the before image (kept columns are kept in both)
  if (before->is_null != is_null) return true;
  if (is_null) return false;
  return before->size != text.size() || std::memcmp(building_.data() + before->at, text.data(), text.size()) != 0;
}

// A big value whose text size is unknown or whose text is not its bytes:
// rendered at `*at` plus the most its framing can take, then framed, and moved
// down to close the gap (the fields before a value depend on its size).
Status RowsEntryWriter::WriteRenderedInPlace(const ColumnPlan& cp, const binlog::TableMap& t,
                                             const binlog::ColumnValue& v, uint32_t column, const ImageSpec& spec,
                                             size_t* at) {
  const size_t start = *at;
  const size_t value_at = start + kMaxColumnFraming + cp.head.size();
  size_t known = 0;
  if (render::CanalValueSize(v, t.columns[column], options_.values, &known)) {
    Room(value_at + known + cp.tail_piece.size + kBigValueSlack);  // the render below appends in place
  }
  building_.resize(value_at);
  const Status s = render::AppendCanalValue(v, t.columns[column], options_.values, &building_);
  if (!s.ok()) return s;
  const size_t vsize = building_.size() - value_at;
  char* const data = Room(value_at + vsize + cp.tail_piece.size + Piece::kInline);
  const std::string_view text(data + value_at, vsize);
  const bool updated = spec.after && (!spec.update || Updated(BeforeOf(column), false, text));
  const size_t body = cp.head.size() + (updated ? 2 : 0) + 2 + (vsize != 0 ? 1 + VarintSize(vsize) + vsize : 0) +
                      cp.tail_piece.size;
  // The framing byte by byte, not with before_value's 64-byte piece: that copy
  // would overwrite the start of the value rendered just past it.
  char* p = data + start;
  *p++ = spec.tag;
  p = WriteVarint(body, p);
  p = WriteBytes(cp.head, p);
  if (updated) {
    *p++ = column_field::kUpdated;
    *p++ = 1;
  }
  *p++ = column_field::kIsNull;
  *p++ = 0;
  if (vsize != 0) {
    *p++ = column_field::kValue;
    p = WriteVarint(vsize, p);
    std::memmove(p, data + value_at, vsize);
    RecordBefore(spec, column, false, static_cast<size_t>(p - data), vsize);
    p += vsize;
  } else {
    RecordBefore(spec, column, false, 0, 0);
  }
  // The value has been moved down: the piece's blind copy past the tail is free room.
  *at = static_cast<size_t>(Put(cp.tail_piece, p) - data);
  return Status::OK();
}

// Writes one Column whose text is known (not in building_, which Room may move).
size_t RowsEntryWriter::WriteColumn(const ColumnPlan& cp, uint32_t column, const ImageSpec& spec, bool is_null,
                                    std::string_view text, size_t at) {
  // Canal marks every column of an insert as updated, and an update's after
  // column when it differs from the before image (or had none there).
  const bool updated = spec.after && (!spec.update || Updated(BeforeOf(column), is_null, text));
  const size_t vsize = text.size();
  const std::string& head = is_null ? cp.null_head : cp.head;
  const size_t body = head.size() + (updated ? 2 : 0) + 2 + (vsize != 0 ? 1 + VarintSize(vsize) + vsize : 0) +
                      cp.tail_piece.size;
  char* const data =
      Room(at + 11 + body + Piece::kInline + (vsize >= kBigValueBytes ? kBigValueSlack : 0));
  char* p = data + at;
  *p++ = spec.tag;
  p = WriteVarint(body, p);
  if (vsize != 0) {
    p = Put(cp.before_value[updated], p);  // is_null is false: a NULL has no text
    p = WriteVarint(vsize, p);
    RecordBefore(spec, column, false, static_cast<size_t>(p - data), vsize);
    p = WriteBytes(text, p);
  } else {
    RecordBefore(spec, column, is_null, 0, 0);
    p = WriteBytes(head, p);
    if (updated) {
      *p++ = column_field::kUpdated;
      *p++ = 1;
    }
    *p++ = column_field::kIsNull;  // a one-field oneof: written even when false
    *p++ = is_null ? 1 : 0;
  }
  return static_cast<size_t>(Put(cp.tail_piece, p) - data);
}

// Numbers, dates and decimals: the text is made where it goes if the
// Column's lengths take a byte each and `updated` is what an insert or a
// before image says (an update's after column guesses unchanged); a miss
// writes the column again from a copy of the text. Not made on the stack and
// copied: that costs a store-to-load stall per value. False (nothing kept)
// when the value has no fixed text.
bool RowsEntryWriter::WriteFixedColumn(const ColumnPlan& cp, const binlog::TableMap& t, const binlog::ColumnValue& v,
                                       uint32_t column, const ImageSpec& spec, size_t* at) {
  const bool guess = spec.after && !spec.update;
  const Piece& framing = cp.before_value[guess];
  char* const data = Room(*at + 2 + framing.size + 1 + render::kCanalFixedTextMax + cp.tail_piece.size +
                          Piece::kInline);
  char* const cell = data + *at;
  char* const value = Put(framing, cell + 2) + 1;
  const char* const end = render::WriteCanalFixedText(v, t.columns[column], options_.values, value);
  if (end == nullptr) return false;
  const size_t vsize = static_cast<size_t>(end - value);
  const std::string_view text(value, vsize);
  const bool updated = spec.after && (!spec.update || Updated(BeforeOf(column), false, text));
  const size_t body = framing.size + 1 + vsize + cp.tail_piece.size;
  if (updated != guess || body >= 0x80 || vsize >= 0x80) [[unlikely]] {
    char copy[render::kCanalFixedTextMax];
    std::memcpy(copy, value, vsize);
    *at = WriteColumn(cp, column, spec, false, std::string_view(copy, vsize), *at);
    return true;
  }
  cell[0] = spec.tag;
  cell[1] = static_cast<char>(body);
  value[-1] = static_cast<char>(vsize);
  RecordBefore(spec, column, false, static_cast<size_t>(value - data), vsize);
  *at = static_cast<size_t>(Put(cp.tail_piece, value + vsize) - data);
  return true;
}

Status RowsEntryWriter::WriteImage(const TablePlan& plan, const binlog::TableMap& t, const binlog::RowImage& img,
                                   const ImageSpec& spec, size_t* at_io) {
  size_t at = *at_io;
  const size_t n = std::min(img.values.size(), plan.plans.size());
  for (size_t i = 0; i < n; ++i) {
    const binlog::ColumnValue& v = img.values[i];
    const ColumnPlan* plan_of_value = &plan.plans[i];
    if (v.kind == binlog::ColumnValue::Kind::kUnsigned && v.u64 > plan_of_value->keep_up_to) [[unlikely]] {
      plan_of_value = &plan.promoted[i];
    }
    const ColumnPlan& cp = *plan_of_value;
    if (!v.is_present() || !cp.keep) continue;
    const auto column = static_cast<uint32_t>(i);
    // The value's text: none, its own bytes, fixed text made in place, or rendered.
    if (v.is_null()) {
      at = WriteColumn(cp, column, spec, true, {}, at);
    } else if (v.kind == binlog::ColumnValue::Kind::kString && cp.copies_through && IsValidUtf8(v.raw)) {
      at = WriteColumn(cp, column, spec, false, v.raw, at);
    } else if (WriteFixedColumn(cp, t, v, column, spec, &at)) {
    } else if (v.raw.size() >= kBigValueBytes) [[unlikely]] {
      CANAL_RETURN_IF_ERROR(WriteRenderedInPlace(cp, t, v, column, spec, &at));
    } else {
      scratch_.clear();
      CANAL_RETURN_IF_ERROR(render::AppendCanalValue(v, t.columns[i], options_.values, &scratch_));
      at = WriteColumn(cp, column, spec, false, scratch_, at);
    }
  }
  *at_io = at;
  return Status::OK();
}

Status RowsEntryWriter::Write(const EntryContext& ctx, const binlog::RowsEvent& rows, std::string* out,
                              uint64_t* row_count) {
  const binlog::TableMap& t = *rows.table;
  const int32_t type = rows.info.kind == binlog::RowsKind::kWrite    ? kEventInsert
                       : rows.info.kind == binlog::RowsKind::kUpdate ? kEventUpdate
                                                                     : kEventDelete;
  const TablePlan& plan = PlanFor(t);
  if (before_.size() < plan.plans.size()) before_.resize(plan.plans.size());
  const uint64_t table_id_bits = Int64Bits(static_cast<int64_t>(rows.table_id));
  // RowChange's fields before the rows: tableId, eventType, isDdl (oneofs: always there).
  const size_t change_fields = OptionalVarintSize(table_id_bits) + 1 + VarintSize(Int32Bits(type)) + 2;
  // Everything before the first RowData, for `n` rows taking `rows_size` bytes.
  char count_buf[24];
  const auto prefix_of = [&](uint64_t n, size_t rows_size, HeaderFields* header) {
    const char* count_end = std::to_chars(count_buf, count_buf + sizeof count_buf, n).ptr;
    header->rows_count = std::string_view(count_buf, static_cast<size_t>(count_end - count_buf));
    return DelimitedSize(header->Size()) + 2 + 1 + VarintSize(change_fields + rows_size) + change_fields;
  };
  HeaderFields header{ctx, t.db, t.table, type, {}};

  // The rows are written once, straight into building_, after room for the
  // prefix as long as the last entry's was (the same row count and size
  // class, most often); each RowData after room for a length as long as the
  // last one's. A wrong guess moves the bytes after it.
  const size_t rows_begin = prefix_of(last_rows_, last_rows_size_, &header);
  size_t at = rows_begin;
  uint64_t n = 0;
  const ImageSpec before_spec{row_field::kBeforeColumns, false, rows.info.kind == binlog::RowsKind::kUpdate};
  const ImageSpec after_spec{row_field::kAfterColumns, true, rows.info.kind == binlog::RowsKind::kUpdate};
  reader_.Reset(rows);
  while (true) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader_.Next(&change_, &done));
    if (done) break;
    ++row_serial_;
    const size_t row_at = at;
    const size_t body_at = row_at + 1 + row_length_guess_;
    Room(body_at);
    at = body_at;
    Status s;
    if (change_.has_before) s = WriteImage(plan, t, change_.before, before_spec, &at);
    if (s.ok() && change_.has_after) {
      // An update without a before image marks every after column updated.
      ImageSpec spec = after_spec;
      spec.update = spec.update && change_.has_before;
      s = WriteImage(plan, t, change_.after, spec, &at);
    }
    if (!s.ok()) {
      return s.WithContext(ctx.position.journal_name + ": offset " + std::to_string(ctx.position.position) + ": `" +
                           t.db + "`.`" + t.table + "` row " + std::to_string(n + 1));
    }
    const size_t body = at - body_at;
    char* data = building_.data();
    if (const size_t length_size = VarintSize(body); length_size != row_length_guess_) [[unlikely]] {
      data = Room(at + length_size);
      std::memmove(data + row_at + 1 + length_size, data + body_at, body);
      at = row_at + 1 + length_size + body;
      row_length_guess_ = length_size;
    }
    data[row_at] = change_field::kRowDatas;
    WriteVarint(body, data + row_at + 1);
    ++n;
  }
  // A big value's text is not held while the entry is.
  if (scratch_.capacity() > kRetainedBufferBytes) std::string().swap(scratch_);

  const size_t rows_size = at - rows_begin;
  const size_t prefix = prefix_of(n, rows_size, &header);
  char* const data = Room(std::max(prefix, rows_begin) + rows_size);
  if (prefix != rows_begin) [[unlikely]] {
    std::memmove(data + prefix, data + rows_begin, rows_size);
  }
  last_rows_ = n;
  last_rows_size_ = rows_size;
  char* p = data;
  *p++ = entry_field::kHeader;
  p = WriteVarint(header.Size(), p);
  p = header.Write(p);
  *p++ = entry_field::kEntryType;
  p = WriteVarint(kEntryTypeRowData, p);
  *p++ = entry_field::kStoreValue;
  p = WriteVarint(change_fields + rows_size, p);
  p = WriteOptionalVarint(change_field::kTableId, table_id_bits, p);
  *p++ = change_field::kEventType;
  p = WriteVarint(Int32Bits(type), p);
  *p++ = change_field::kIsDdl;
  *p++ = 0;
  if (static_cast<size_t>(p - data) != prefix) {
    // The size pass and the write pass disagree: a bug in this file, never bad
    // input (the tests compare every byte with protobuf's). Refuse the entry.
    return Status::Aborted("internal error building the rows entry of `" + t.db + "`.`" + t.table + "` at " +
                           ctx.position.journal_name + ":" + std::to_string(ctx.position.position) + ": wrote " +
                           std::to_string(p - data) + " bytes of its prefix, sized " + std::to_string(prefix));
  }
  const size_t total = prefix + rows_size;
  if (total <= kCopiedEntryBytes) {
    // Copied: building_ stays in cache for the next entry, and one memcpy
    // fills the caller's buffer (a ring slot's, not touched for a lap).
    out->assign(building_.data(), total);
  } else {
    building_.resize(total);
    out->swap(building_);
    // building_ now has the caller's old buffer: kept unless one huge entry grew it.
    ReleaseIfHuge(&building_);
  }
  *row_count = n;
  return Status::OK();
}

void WriteTransactionEntry(const EntryContext& ctx, uint64_t entry_type, int64_t thread_id,
                           std::string_view transaction_id, std::string* out) {
  const HeaderFields header{ctx, {}, {}, kNoEventType, {}};
  const size_t header_size = header.Size();
  // TransactionBegin / TransactionEnd: executeTime, transactionId, threadId
  // (begin only).
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
