// RowsReader: row images of a rows event into ColumnValues.
//
// Two paths over the same value fills (row_values.h). The fast loop follows a
// per-table plan (one Step per column: op, width, kind, built once per table
// layout) and handles the everyday types with one bounds check and one
// unaligned load per value. Anything else -- JSON, odd metadata, and every
// value whose bytes do not fit -- goes to ReadValue, which decodes by column
// type with a check per field and writes the error message naming the byte.
#include <algorithm>
#include <cstring>
#include <string>

#include "canal/parser/binlog/byte_reader.h"
#include "binlog/json_row_cache.h"
#include "binlog/row_values.h"
#include "canal/parser/binlog/json_binary.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {

namespace {

using rows::FracBytes;
using rows::LoadBE;
using rows::LoadLE;

constexpr size_t kNoColumn = static_cast<size_t>(-1);

inline bool Bit(std::string_view bitmap, size_t i) {
  return (static_cast<uint8_t>(bitmap[i >> 3]) >> (i & 7)) & 1;
}

// `bitmap` holds at least n bits (Reset checks).
size_t CountBits(std::string_view bitmap, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += Bit(bitmap, i);
  return count;
}

// Counts the JSON columns set in a bitmap, in table order: the partial-update
// bits of PARTIAL_UPDATE_ROWS are numbered over the table's JSON columns.
size_t JsonOrdinal(const TableMap& t, size_t col) {
  size_t k = 0;
  for (size_t i = 0; i < col; ++i) {
    if (t.columns[i].type == ColumnType::kJson) ++k;
  }
  return k;
}

size_t JsonColumnCount(const TableMap& t) { return JsonOrdinal(t, t.columns.size()); }

// The fast loop's operations. kChecked: ReadValue decodes the column (JSON,
// the NULL type, unsupported types, metadata out of range).
enum Op : uint8_t {
  kChecked,
  kSigned,     // little-endian integer of `width` bytes, sign-extended
  kUnsigned,   // ... zero-extended (unsigned ints, ENUM, SET)
  kFloat,
  kDouble,
  kYear,
  kTimestamp,
  kTimestamp2,
  kDate,
  kTime,
  kDateTime,
  kDateTime2,
  kTime2,
  kRaw,        // `width` bytes as they are (DECIMAL)
  kBit,        // big-endian unsigned of `width` bytes
  kPrefixed,   // `width`-byte little-endian length, then the bytes
  kBounded,    // kPrefixed whose length is at most `max_len` (CHAR, VARCHAR)
};

ColumnValue::Kind TextOrBytes(const ColumnInfo& col) {
  return IsBinaryCharset(col.charset) ? ColumnValue::Kind::kBytes : ColumnValue::Kind::kString;
}

}  // namespace

void RowsReader::BuildPlan(const TableMap& table) {
  static_assert(sizeof(Step) == 8, "a plan step stays 8 bytes: it is read per column per row");
  plan_.resize(table.columns.size());
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const ColumnInfo& col = table.columns[i];
    Step s;
    s.type = col.real_type;
    auto fixed = [&s](Op op, size_t width, ColumnValue::Kind kind) {
      s.op = op;
      s.width = static_cast<uint8_t>(width);
      s.drop = static_cast<uint8_t>(width <= 8 ? 64 - 8 * width : 0);
      s.kind = kind;
    };
    auto integer = [&](size_t width) {
      if (col.is_unsigned) {
        fixed(kUnsigned, width, ColumnValue::Kind::kUnsigned);
      } else {
        fixed(kSigned, width, ColumnValue::Kind::kSigned);
      }
    };
    // Fractional precision beyond 6 is refused by ReadValue.
    auto temporal = [&](Op op, size_t int_bytes, ColumnValue::Kind kind) {
      const auto fsp = static_cast<uint8_t>(col.meta);
      if (col.meta > 6) return;
      fixed(op, int_bytes + FracBytes(fsp), kind);
      s.fsp = fsp;
    };
    switch (col.real_type) {
      case ColumnType::kTiny: integer(1); break;
      case ColumnType::kShort: integer(2); break;
      case ColumnType::kInt24: integer(3); break;
      case ColumnType::kLong: integer(4); break;
      case ColumnType::kLongLong: integer(8); break;
      case ColumnType::kFloat: fixed(kFloat, 4, ColumnValue::Kind::kFloat); break;
      case ColumnType::kDouble: fixed(kDouble, 8, ColumnValue::Kind::kDouble); break;
      case ColumnType::kYear: fixed(kYear, 1, ColumnValue::Kind::kSigned); break;
      // MariaDB's TIMESTAMP(N) etc. under the old codes (meta = N > 0, or
      // unknown) are rare: ReadValue decodes them.
      case ColumnType::kTimestamp:
        if (col.meta == 0) fixed(kTimestamp, 4, ColumnValue::Kind::kTimestamp);
        break;
      case ColumnType::kDate: fixed(kDate, 3, ColumnValue::Kind::kDate); break;
      case ColumnType::kTime:
        if (col.meta == 0) fixed(kTime, 3, ColumnValue::Kind::kTime);
        break;
      case ColumnType::kDateTime:
        if (col.meta == 0) fixed(kDateTime, 8, ColumnValue::Kind::kDateTime);
        break;
      case ColumnType::kTimestamp2: temporal(kTimestamp2, 4, ColumnValue::Kind::kTimestamp); break;
      case ColumnType::kDateTime2: temporal(kDateTime2, 5, ColumnValue::Kind::kDateTime); break;
      case ColumnType::kTime2: temporal(kTime2, 3, ColumnValue::Kind::kTime); break;
      case ColumnType::kNewDecimal: {
        const size_t n = DecimalBinarySize(col.precision, col.decimals);
        if (n > 0) fixed(kRaw, n, ColumnValue::Kind::kDecimal);
        break;
      }
      case ColumnType::kBit: {
        const size_t n = (col.max_length + 7) / 8;
        if (n >= 1 && n <= 8) fixed(kBit, n, ColumnValue::Kind::kUnsigned);
        break;
      }
      case ColumnType::kEnum:
      case ColumnType::kSet:
        if (col.max_length >= 1 && col.max_length <= 8) fixed(kUnsigned, col.max_length, ColumnValue::Kind::kUnsigned);
        break;
      case ColumnType::kVarchar:
      case ColumnType::kVarString:
      case ColumnType::kString:
        fixed(kPrefixed, col.max_length > 255 ? 2 : 1, TextOrBytes(col));
        if (col.max_length <= UINT16_MAX) {
          s.op = kBounded;
          s.max_len = static_cast<uint16_t>(col.max_length);
        }
        break;
      case ColumnType::kTinyBlob:
      case ColumnType::kMediumBlob:
      case ColumnType::kLongBlob:
      case ColumnType::kBlob:
        if (col.meta >= 1 && col.meta <= 4) fixed(kPrefixed, col.meta, TextOrBytes(col));
        break;
      case ColumnType::kGeometry:
      case ColumnType::kVector:
        if (col.meta >= 1 && col.meta <= 4) fixed(kPrefixed, col.meta, ColumnValue::Kind::kBytes);
        break;
      default: break;  // kChecked
    }
    plan_[i] = s;
  }
}

void RowsReader::Reset(const RowsEvent& event) {
  event_ = &event;
  p_ = reinterpret_cast<const uint8_t*>(event.rows.data());
  end_ = p_ + event.rows.size();
  row_index_ = 0;
  returned_ = 0;
  held_ = next_held_ = 0;
  resume_ = end_;
  checked_ = false;
  if (event.table == nullptr) {
    plan_.clear();  // Next reports it
    plan_table_ = nullptr;
    return;
  }
  const TableMap& table = *event.table;
  const uint64_t layout = table.layout_id.value();
  if (layout == 0 || &table != plan_table_ || layout != plan_layout_) {
    BuildPlan(table);
    plan_table_ = &table;
    plan_layout_ = layout;
  }
  // The after-image bitmap is only read for updates (a write or delete event
  // may leave it empty). A bitmap too short for the columns (a hand-built
  // event; the decoder reads them at their full size) is refused by Next.
  const size_t n = event.column_count;
  const size_t bitmap_bytes = (n + 7) / 8;
  const bool update = event.info.kind == RowsKind::kUpdate;
  bitmaps_fit_ = event.columns_before.size() >= bitmap_bytes && (!update || event.columns_after.size() >= bitmap_bytes);
  if (!bitmaps_fit_) return;
  present_before_ = CountBits(event.columns_before, n);
  present_after_ = update ? CountBits(event.columns_after, n) : present_before_;
}

Status RowsReader::Error(std::string_view what, size_t col_index) const {
  std::string m(event_->source.empty() ? std::string_view("binlog") : event_->source);
  m += ": offset ";
  m += std::to_string(event_->offset);
  m += ": ";
  m += "rows event for `";
  m += event_->table->db;
  m += "`.`";
  m += event_->table->table;
  m += "`, row ";
  m += std::to_string(row_index_ + 1);
  if (col_index != kNoColumn) {
    m += ", column ";
    m += std::to_string(col_index + 1);
    const std::string& name = event_->table->columns[col_index].name;
    if (!name.empty()) {
      m += " (";
      m += name;
      m += ")";
    }
  }
  m += ", byte ";
  m += std::to_string(p_ - reinterpret_cast<const uint8_t*>(event_->rows.data()));
  m += " of the row data: ";
  m += what;
  return Status::Corruption(m);
}

Status RowsReader::Next(RowChange* change, bool* done) {
  *done = false;
  if (!checked_) {
    checked_ = true;
    check_status_ = CheckEvent();
  }
  if (!check_status_.ok()) [[unlikely]] return check_status_;
  if (next_held_ < held_) {
    // Only the images' storage moves: a change is two vectors and flags.
    RowChange& held = batch_[next_held_++];
    change->kind = held.kind;
    change->has_before = held.has_before;
    change->has_after = held.has_after;
    if (held.has_before) change->before.values.swap(held.before.values);
    if (held.has_after) change->after.values.swap(held.after.values);
    ++returned_;
    return Status::OK();
  }
  if (p_ >= end_) {
    *done = true;
    return Status::OK();
  }
  // Past the held changes: checked already, decoded again now.
  CANAL_RETURN_IF_ERROR(DecodeRow(change, held_));
  ++returned_;
  return Status::OK();
}

// Decodes the event's changes into batch_ (up to kHeldValues values), and
// checks the rest, if any, by decoding them into scratch_; p_ is left at the
// first change not held. An event with the JSON row cache is held whole:
// decoding its rows changes the cache (a rebuilt document extends its row's
// diff chain), so none of them may be decoded twice.
Status RowsReader::CheckEvent() {
  if (event_ == nullptr || p_ >= end_) return Status::OK();
  if (event_->table == nullptr) {
    return Status::Corruption(std::string(event_->source.empty() ? std::string_view("binlog") : event_->source) +
                              ": offset " + std::to_string(event_->offset) + ": rows event without a table map");
  }
  if (!bitmaps_fit_) {
    return Error("column bitmap shorter than the event's " + std::to_string(event_->column_count) + " columns",
                 kNoColumn);
  }
  if (event_->column_count > plan_.size()) {
    return Error("rows event has " + std::to_string(event_->column_count) + " columns but its table map has " +
                     std::to_string(plan_.size()),
                 kNoColumn);
  }
  const size_t per_row = event_->column_count > 0 ? event_->column_count : 1;
  const bool hold_all = event_->json_rows != nullptr;
  while (p_ < end_ && (held_ == 0 || hold_all || (held_ + 1) * per_row <= kHeldValues)) {
    if (held_ == batch_.size()) batch_.emplace_back();
    CANAL_RETURN_IF_ERROR(DecodeRow(&batch_[held_], held_));
    ++held_;
  }
  if (p_ >= end_) return Status::OK();
  resume_ = p_;
  resume_row_ = row_index_;
  while (p_ < end_) CANAL_RETURN_IF_ERROR(DecodeRow(&scratch_, held_));
  p_ = resume_;
  row_index_ = resume_row_;
  return Status::OK();
}

// Inlined into its three callers: a call per row costs ~2.5 ns/row in rows_reader_bench.
[[gnu::always_inline]] inline Status RowsReader::DecodeRow(RowChange* change, size_t slot) {
  const size_t n = event_->column_count;
  built_base_ = slot * n;
  const RowsEventInfo& info = event_->info;
  const uint8_t* row_start = p_;
  change->kind = info.kind;
  change->has_before = info.kind != RowsKind::kWrite;
  change->has_after = info.kind != RowsKind::kDelete;
  if (info.kind == RowsKind::kWrite) {
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_before, present_before_, false, &change->after));
  } else if (info.kind == RowsKind::kDelete) {
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_before, present_before_, false, &change->before));
  } else {
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_before, present_before_, false, &change->before));
    partial_json_bits_ = {};
    if (info.partial) {
      // value_options, then (with PARTIAL_JSON_UPDATES) one bit per JSON column.
      ByteReader r(p_, static_cast<size_t>(end_ - p_));
      uint64_t options = 0;
      if (!r.ReadPackedInt(&options)) return Error("value options truncated", kNoColumn);
      if (options & 1) {
        size_t nbytes = (JsonColumnCount(*event_->table) + 7) / 8;
        if (!r.ReadBytes(nbytes, &partial_json_bits_)) {
          return Error("partial-update bitmap truncated", kNoColumn);
        }
      }
      p_ = r.current();
    }
    before_for_partial_ = &change->before;
    rebuilt_.assign(event_->column_count, 0);
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_after, present_after_, true, &change->after));
  }
  // A row that takes no bytes (no column present) would repeat forever.
  if (p_ == row_start) return Error("row image has no columns (empty column bitmap)", kNoColumn);
  if (event_->json_rows != nullptr) {
    if (info.kind == RowsKind::kWrite) {
      event_->json_rows->Remember(*event_->table, change->after, nullptr, nullptr);
    } else if (info.kind == RowsKind::kUpdate) {
      event_->json_rows->Remember(*event_->table, change->after, &change->before, &rebuilt_);
    } else {
      event_->json_rows->Forget(*event_->table, change->before);
    }
  }
  ++row_index_;
  return Status::OK();
}

Status RowsReader::ReadImage(std::string_view present, size_t present_count, bool after, RowImage* image) {
  const size_t n = event_->column_count;
  if (image->values.size() != n) image->values.resize(n);
  // Pre-GA (v0) images copied the engine's record null bytes, whose first bit is
  // reserved (MyISAM's delete marker); column null bits start at bit 1.
  const size_t null_base = event_->info.version == 0 ? 1 : 0;
  const size_t null_bytes = (present_count + null_base + 7) / 8;
  if (static_cast<size_t>(end_ - p_) < null_bytes) {
    return Error("null bitmap runs past the end of the event", kNoColumn);
  }
  const uint8_t* const nulls = p_;
  const bool all_present = present_count == n;
  const Step* const plan = plan_.data();
  ColumnValue* const values = image->values.data();
  const uint8_t* const end = end_;
  const uint8_t* p = p_ + null_bytes;
  size_t k = null_base;  // null-bit index of the next present column
  after_partial_ = after && !partial_json_bits_.empty();
  for (size_t i = 0; i < n; ++i) {
    ColumnValue& v = values[i];
    const Step s = plan[i];
    v.type = s.type;
    if (!all_present && !Bit(present, i)) {
      v.kind = ColumnValue::Kind::kAbsent;
      v.raw = {};
      continue;
    }
    const bool is_null = (nulls[k >> 3] >> (k & 7)) & 1;
    ++k;
    if (is_null) {
      v.kind = ColumnValue::Kind::kNull;
      v.raw = {};
      continue;
    }
    // A value whose bytes are not all there, or that does not fit its type,
    // leaves the fast path for ReadValue, which names what is wrong.
    const size_t avail = static_cast<size_t>(end - p);
    if (s.op == kChecked || avail < s.width) goto checked;
    {
      const uint64_t word = rows::Word(p, avail);
      switch (s.op) {
        case kSigned:
          v.i64 = rows::SignExtend(word, s.drop);
          v.kind = ColumnValue::Kind::kSigned;
          break;
        case kUnsigned:
          v.u64 = rows::ZeroExtend(word, s.drop);
          v.kind = ColumnValue::Kind::kUnsigned;
          break;
        case kFloat: {
          const auto bits = static_cast<uint32_t>(word);
          std::memcpy(&v.f32, &bits, 4);
          v.kind = ColumnValue::Kind::kFloat;
          break;
        }
        case kDouble:
          std::memcpy(&v.f64, &word, 8);
          v.kind = ColumnValue::Kind::kDouble;
          break;
        case kYear: {
          const auto y = static_cast<uint8_t>(word);
          v.i64 = y ? 1900 + y : 0;
          v.kind = ColumnValue::Kind::kSigned;
          break;
        }
        case kTimestamp:
          v.kind = ColumnValue::Kind::kTimestamp;
          v.u64 = static_cast<uint32_t>(word);
          v.timestamp_micros = 0;
          v.fsp = 0;
          break;
        case kDate: rows::FillDate(static_cast<uint32_t>(word & 0xFFFFFF), &v); break;
        case kTime: rows::FillTime(static_cast<uint32_t>(word & 0xFFFFFF), &v); break;
        case kDateTime: rows::FillDateTime(word, &v); break;
        case kTimestamp2:
          if (rows::FillTimestamp2(rows::BigEndian(word, s.drop), s.width - 4, s.fsp, &v) != rows::Fill::kOk) {
            goto checked;
          }
          break;
        case kDateTime2:
          if (rows::FillDateTime2(rows::BigEndian(word, s.drop), s.width - 5, s.fsp, &v) != rows::Fill::kOk) {
            goto checked;
          }
          break;
        case kTime2:
          if (rows::FillTime2(rows::BigEndian(word, s.drop), s.width - 3, s.fsp, &v) != rows::Fill::kOk) {
            goto checked;
          }
          break;
        case kRaw:
          v.kind = s.kind;
          v.raw = std::string_view(reinterpret_cast<const char*>(p), s.width);
          break;
        case kBit:
          v.u64 = rows::BigEndian(word, s.drop);
          v.kind = ColumnValue::Kind::kUnsigned;
          break;
        case kPrefixed:
        case kBounded: {
          const uint64_t len = rows::ZeroExtend(word, s.drop);
          if (len > avail - s.width || (s.op == kBounded && len > s.max_len)) goto checked;
          v.kind = s.kind;
          v.raw = std::string_view(reinterpret_cast<const char*>(p + s.width), len);
          p += len;
          break;
        }
        default: goto checked;
      }
      p += s.width;
      continue;
    }
  checked:
    p_ = p;
    CANAL_RETURN_IF_ERROR(ReadValue(event_->table->columns[i], i, &v));
    p = p_;
  }
  p_ = p;
  after_partial_ = false;
  return Status::OK();
}

Status RowsReader::ReadValue(const ColumnInfo& col, size_t ci, ColumnValue* v) {
  const size_t avail = static_cast<size_t>(end_ - p_);
  auto need = [&](size_t n) { return n <= avail; };
  auto past_end = [&](size_t n) {
    return Error("value of " + std::to_string(n) + " byte(s) runs past the end of the event (" +
                     std::to_string(avail) + " left)",
                 ci);
  };
  auto fixed_int = [&](size_t n) -> Status {
    if (!need(n)) return past_end(n);
    uint64_t u = LoadLE(p_, n);
    p_ += n;
    if (col.is_unsigned) {
      v->kind = ColumnValue::Kind::kUnsigned;
      v->u64 = u;
    } else {
      v->kind = ColumnValue::Kind::kSigned;
      const unsigned shift = static_cast<unsigned>(64 - 8 * n);
      v->i64 = shift ? static_cast<int64_t>(u << shift) >> shift : static_cast<int64_t>(u);
    }
    return Status::OK();
  };
  // Length-prefixed value with an `lb`-byte little-endian length.
  auto prefixed = [&](size_t lb, ColumnValue::Kind kind, uint64_t max_len = UINT64_MAX) -> Status {
    if (!need(lb)) return past_end(lb);
    uint64_t len = LoadLE(p_, lb);
    if (len > avail - lb) {
      return Error("length " + std::to_string(len) + " points outside the event (" + std::to_string(avail - lb) +
                       " byte(s) left)",
                   ci);
    }
    if (len > max_len) {
      // Without this a corrupt length inside the event reads the next values (rows) as this one's.
      return Error("length " + std::to_string(len) + " is past the column's declared maximum of " +
                       std::to_string(max_len) + " byte(s)",
                   ci);
    }
    v->kind = kind;
    v->raw = std::string_view(reinterpret_cast<const char*>(p_ + lb), len);
    p_ += lb + len;
    return Status::OK();
  };
  auto text_or_bytes = [&]() {
    return IsBinaryCharset(col.charset) ? ColumnValue::Kind::kBytes : ColumnValue::Kind::kString;
  };

  if (IsOldTemporalColumn(col) && col.meta != 0) return ReadMariaHiresTemporal(col, ci, v);
  switch (col.real_type) {
    case ColumnType::kTiny: return fixed_int(1);
    case ColumnType::kShort: return fixed_int(2);
    case ColumnType::kInt24: return fixed_int(3);
    case ColumnType::kLong: return fixed_int(4);
    case ColumnType::kLongLong: return fixed_int(8);
    case ColumnType::kFloat: {
      if (!need(4)) return past_end(4);
      uint32_t bits = static_cast<uint32_t>(LoadLE(p_, 4));
      std::memcpy(&v->f32, &bits, 4);
      p_ += 4;
      v->kind = ColumnValue::Kind::kFloat;
      return Status::OK();
    }
    case ColumnType::kDouble: {
      if (!need(8)) return past_end(8);
      uint64_t bits = LoadLE(p_, 8);
      std::memcpy(&v->f64, &bits, 8);
      p_ += 8;
      v->kind = ColumnValue::Kind::kDouble;
      return Status::OK();
    }
    case ColumnType::kNull:
      v->kind = ColumnValue::Kind::kNull;
      return Status::OK();
    case ColumnType::kYear: {
      if (!need(1)) return past_end(1);
      v->kind = ColumnValue::Kind::kSigned;
      v->i64 = *p_ ? 1900 + *p_ : 0;
      ++p_;
      return Status::OK();
    }
    case ColumnType::kTimestamp: {
      if (!need(4)) return past_end(4);
      v->kind = ColumnValue::Kind::kTimestamp;
      v->u64 = LoadLE(p_, 4);
      v->timestamp_micros = 0;
      v->fsp = 0;
      p_ += 4;
      return Status::OK();
    }
    case ColumnType::kTimestamp2:
    case ColumnType::kDateTime2:
    case ColumnType::kTime2: {
      const uint8_t fsp = static_cast<uint8_t>(col.meta);
      if (col.meta > 6) return Error("fractional precision " + std::to_string(col.meta) + " (at most 6)", ci);
      const size_t fb = FracBytes(fsp);
      const size_t int_bytes = col.real_type == ColumnType::kTimestamp2 ? 4
                               : col.real_type == ColumnType::kDateTime2 ? 5
                                                                         : 3;
      const size_t n = int_bytes + fb;
      if (!need(n)) return past_end(n);
      const uint64_t be = LoadBE(p_, n);
      p_ += n;
      const rows::Fill fill = col.real_type == ColumnType::kTimestamp2 ? rows::FillTimestamp2(be, fb, fsp, v)
                              : col.real_type == ColumnType::kDateTime2 ? rows::FillDateTime2(be, fb, fsp, v)
                                                                        : rows::FillTime2(be, fb, fsp, v);
      if (fill == rows::Fill::kNegative) return Error("negative DATETIME", ci);
      if (fill == rows::Fill::kFraction) return Error("fractional seconds out of range", ci);
      return Status::OK();
    }
    case ColumnType::kDate: {
      if (!need(3)) return past_end(3);
      rows::FillDate(static_cast<uint32_t>(LoadLE(p_, 3)), v);
      p_ += 3;
      return Status::OK();
    }
    case ColumnType::kTime: {
      if (!need(3)) return past_end(3);
      rows::FillTime(static_cast<uint32_t>(LoadLE(p_, 3)), v);
      p_ += 3;
      return Status::OK();
    }
    case ColumnType::kDateTime: {
      if (!need(8)) return past_end(8);
      rows::FillDateTime(LoadLE(p_, 8), v);
      p_ += 8;
      return Status::OK();
    }
    case ColumnType::kNewDecimal: {
      const size_t n = DecimalBinarySize(col.precision, col.decimals);
      if (!need(n)) return past_end(n);
      v->kind = ColumnValue::Kind::kDecimal;
      v->raw = std::string_view(reinterpret_cast<const char*>(p_), n);
      p_ += n;
      return Status::OK();
    }
    case ColumnType::kBit: {
      const size_t n = (col.max_length + 7) / 8;
      if (n == 0 || n > 8) return Error("BIT column of " + std::to_string(col.max_length) + " bits", ci);
      if (!need(n)) return past_end(n);
      v->kind = ColumnValue::Kind::kUnsigned;
      v->u64 = LoadBE(p_, n);
      p_ += n;
      return Status::OK();
    }
    case ColumnType::kEnum:
    case ColumnType::kSet: {
      const size_t n = col.max_length;
      if (n == 0 || n > 8) return Error("ENUM/SET value of " + std::to_string(n) + " bytes", ci);
      if (!need(n)) return past_end(n);
      v->kind = ColumnValue::Kind::kUnsigned;
      v->u64 = LoadLE(p_, n);
      p_ += n;
      return Status::OK();
    }
    case ColumnType::kVarchar:
    case ColumnType::kVarString:
    case ColumnType::kString:
      return prefixed(col.max_length > 255 ? 2 : 1, text_or_bytes(), col.max_length);
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob:
      if (col.meta < 1 || col.meta > 4) return Error("BLOB length size " + std::to_string(col.meta), ci);
      return prefixed(col.meta, text_or_bytes());
    case ColumnType::kGeometry:
    case ColumnType::kVector:
      if (col.meta < 1 || col.meta > 4) return Error("length size " + std::to_string(col.meta), ci);
      return prefixed(col.meta, ColumnValue::Kind::kBytes);
    case ColumnType::kJson: {
      if (col.meta < 1 || col.meta > 4) return Error("JSON length size " + std::to_string(col.meta), ci);
      CANAL_RETURN_IF_ERROR(prefixed(col.meta, ColumnValue::Kind::kJson));
      v->json_is_text = false;
      if (after_partial_) {
        const size_t ord = JsonOrdinal(*event_->table, ci);
        const bool is_diff = (static_cast<uint8_t>(partial_json_bits_[ord >> 3]) >> (ord & 7)) & 1;
        if (is_diff) {
          const ColumnValue& before = before_for_partial_->values[ci];
          if (built_.size() < built_base_ + event_->column_count) built_.resize(built_base_ + event_->column_count);
          std::string& doc = built_[built_base_ + ci];
          doc.clear();
          if (before.kind == ColumnValue::Kind::kJson && !before.json_is_text) {
            Status s = ApplyJsonDiffs(before.raw, v->raw, &doc);
            if (!s.ok()) return Error("JSON diff: " + std::string(s.message()), ci);
          } else if (before.kind == ColumnValue::Kind::kAbsent && event_->json_rows != nullptr) {
            // MINIMAL before image: start from the row's last document in the stream.
            Status s = event_->json_rows->Rebuild(*event_->table, *before_for_partial_, ci, v->raw, &doc);
            if (!s.ok()) return Error(s.message(), ci);
            rebuilt_[ci] = 1;
          } else {
            return Error("partial JSON update of a column whose before image holds no JSON document", ci);
          }
          v->raw = doc;
          v->json_is_text = true;
        }
      }
      return Status::OK();
    }
    default:
      return Error("column type " + std::string(ColumnTypeName(col.real_type)) + " (" +
                       std::to_string(static_cast<int>(col.real_type)) + ") is not supported in row images",
                   ci);
  }
}

}  // namespace canal::binlog
