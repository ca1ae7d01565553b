#include "canal/sink/entry_wire.h"

#include <algorithm>
#include <cstring>

#include "canal/common/utf8.h"
#include "canal/parser/binlog/column_text.h"
#include "canal/render/canal_sql_type.h"
#include "canal/render/canal_value.h"
#include "entry_wire_fields.h"

namespace canal::sink::wire {

namespace {

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
// A snapshot row whose values hold this much is written in the caller's rows buffer.
constexpr size_t kInPlaceRowBytes = size_t{1} << 20;
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
  insert_version_ = 0;
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

Status RowsEntryWriter::WriteImage(const TablePlan& plan, const binlog::TableMap& t,
                                   std::span<const binlog::ColumnValue> values, const ImageSpec& spec, size_t* at_io) {
  size_t at = *at_io;
  const size_t n = std::min(values.size(), plan.plans.size());
  for (size_t i = 0; i < n; ++i) {
    const binlog::ColumnValue& v = values[i];
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

// The RowData's length goes in the room the last row's took, and the body is
// moved when it needs more or less.
Status RowsEntryWriter::WriteRowData(const TablePlan& plan, const binlog::TableMap& t, const RowImages& row,
                                     size_t* at_io) {
  ++row_serial_;
  const size_t row_at = *at_io;
  const size_t body_at = row_at + 1 + row_length_guess_;
  Room(body_at);
  size_t at = body_at;
  if (row.has_before) {
    CANAL_RETURN_IF_ERROR(WriteImage(plan, t, row.before, {row_field::kBeforeColumns, false, row.update}, &at));
  }
  if (row.has_after) {
    // An update without a before image marks every after column updated.
    const ImageSpec spec{row_field::kAfterColumns, true, row.update && row.has_before};
    CANAL_RETURN_IF_ERROR(WriteImage(plan, t, row.after, spec, &at));
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
  HeaderFields header{ctx, t.db, t.table, type, {}, {}};
  const RowsPrefix prefix{header, Int64Bits(static_cast<int64_t>(rows.table_id)), type};
  // Everything before the first RowData, for `n` rows taking `rows_size` bytes.
  char count_buf[24];
  const auto prefix_of = [&](uint64_t n, size_t rows_size) {
    header.rows_count = CountText(n, count_buf);
    return prefix.Size(rows_size);
  };

  // The rows are written once, straight into building_, after room for the
  // prefix as long as the last entry's was (the same row count and size
  // class, most often); each RowData after room for a length as long as the
  // last one's. A wrong guess moves the bytes after it.
  const size_t rows_begin = prefix_of(last_rows_, last_rows_size_);
  size_t at = rows_begin;
  uint64_t n = 0;
  const bool update = rows.info.kind == binlog::RowsKind::kUpdate;
  reader_.Reset(rows);
  while (true) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(reader_.Next(&change_, &done));
    if (done) break;
    const RowImages images{change_.before.values, change_.after.values, change_.has_before, change_.has_after,
                           update};
    if (Status s = WriteRowData(plan, t, images, &at); !s.ok()) {
      return s.WithContext(ctx.position.journal_name + ": offset " + std::to_string(ctx.position.position) + ": `" +
                           t.db + "`.`" + t.table + "` row " + std::to_string(n + 1));
    }
    ++n;
  }
  // A big value's text is not held while the entry is.
  if (scratch_.capacity() > kRetainedBufferBytes) std::string().swap(scratch_);

  const size_t rows_size = at - rows_begin;
  const size_t prefix_size = prefix_of(n, rows_size);
  char* const data = Room(std::max(prefix_size, rows_begin) + rows_size);
  if (prefix_size != rows_begin) [[unlikely]] {
    std::memmove(data + prefix_size, data + rows_begin, rows_size);
  }
  last_rows_ = n;
  last_rows_size_ = rows_size;
  CANAL_RETURN_IF_ERROR(prefix.Write(t, rows_size, data));
  const size_t total = prefix_size + rows_size;
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

Status RowsEntryWriter::InsertPlan(const binlog::TableMap& t, size_t value_count, uint64_t table_version,
                                   const TablePlan** plan) {
  if (value_count != t.columns.size()) {
    return Status::InvalidArgument("snapshot row of `" + t.db + "`.`" + t.table + "`: " +
                                   std::to_string(value_count) + " values for " + std::to_string(t.columns.size()) +
                                   " columns");
  }
  // Comparing the table with its plan's copy, column by column, was ~4% of a snapshot's CPU
  // when done for every row.
  if (table_version == 0 || table_version != insert_version_) {
    const TablePlan& found = PlanFor(t);
    insert_version_ = table_version;
    insert_plan_ = static_cast<size_t>(&found - tables_.data());
  }
  *plan = &tables_[insert_plan_];
  return Status::OK();
}

Status RowsEntryWriter::WriteInsertRowIn(const TablePlan& plan, const binlog::TableMap& t,
                                         std::span<const binlog::ColumnValue> values, std::string* buffer,
                                         size_t* at) {
  // The image writer writes into building_: lent the caller's buffer for the row, it writes
  // there directly (Room grows it, zero-filling only what it adds). Neither side of the swap
  // may be a short string held inline, or each swap copies it (~2% of a snapshot's CPU).
  if (building_.capacity() < 64) building_.reserve(64);
  if (buffer->capacity() < 64) buffer->reserve(64);
  building_.swap(*buffer);
  size_t end = *at;
  Status s = WriteRowData(plan, t, RowImages{{}, values, false, true, false}, &end);
  building_.swap(*buffer);
  if (scratch_.capacity() > kRetainedBufferBytes) std::string().swap(scratch_);
  if (!s.ok()) return s.WithContext("snapshot row of `" + t.db + "`.`" + t.table + "`");
  *at = end;
  return Status::OK();
}

// Written at the start of building_, which is warm (Room zero-fills only what
// it grows), then appended: one copy of the row's bytes. Writing in *rows
// itself would zero-fill its growth row by row.
Status RowsEntryWriter::AppendInsertRow(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values,
                                        std::string* rows, uint64_t table_version) {
  const TablePlan* plan = nullptr;
  CANAL_RETURN_IF_ERROR(InsertPlan(t, values.size(), table_version, &plan));
  size_t value_bytes = 0;
  for (const binlog::ColumnValue& v : values) value_bytes += v.raw.size();
  if (value_bytes >= kInPlaceRowBytes) [[unlikely]] {
    // A huge row is written straight after *rows' bytes: through building_ it would be held
    // twice (built there, appended there), beside the fetched value it is made from. Not for
    // smaller rows: growing *rows zero-fills an eighth of it past the row each time.
    const size_t start = rows->size();
    size_t at = start;
    Status s = WriteInsertRowIn(*plan, t, values, rows, &at);
    rows->resize(s.ok() ? at : start);  // the zero-filled room past the row, or the partial row
    return s;
  }
  size_t at = 0;
  if (Status s = WriteRowData(*plan, t, RowImages{{}, values, false, true, false}, &at); !s.ok()) {
    return s.WithContext("snapshot row of `" + t.db + "`.`" + t.table + "`");
  }
  rows->append(building_.data(), at);
  if (scratch_.capacity() > kRetainedBufferBytes) std::string().swap(scratch_);
  ReleaseIfHuge(&building_);  // a huge row's buffer is not kept beside the rows
  return Status::OK();
}

Status RowsEntryWriter::AppendInsertRowAt(const binlog::TableMap& t, std::span<const binlog::ColumnValue> values,
                                          std::string* buffer, size_t* at, uint64_t table_version) {
  const TablePlan* plan = nullptr;
  CANAL_RETURN_IF_ERROR(InsertPlan(t, values.size(), table_version, &plan));
  if (*at > buffer->size()) {
    return Status::InvalidArgument("snapshot row of `" + t.db + "`.`" + t.table + "` written at " +
                                   std::to_string(*at) + ", past its buffer's " + std::to_string(buffer->size()) +
                                   " bytes");
  }
  return WriteInsertRowIn(*plan, t, values, buffer, at);
}

}  // namespace canal::sink::wire
