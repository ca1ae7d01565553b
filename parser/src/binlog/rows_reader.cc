#include <cstring>
#include <string>

#include "binlog/byte_reader.h"
#include "binlog/json_row_cache.h"
#include "canal/parser/binlog/json_binary.h"
#include "canal/parser/binlog/rows_event.h"
#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {

namespace {

inline bool Bit(std::string_view bitmap, size_t i) {
  return (static_cast<uint8_t>(bitmap[i >> 3]) >> (i & 7)) & 1;
}

inline uint64_t LoadBE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

inline uint64_t LoadLE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// Fractional-second bytes of TIME2/DATETIME2/TIMESTAMP2 for a precision.
inline size_t FracBytes(uint8_t fsp) { return (fsp + 1) / 2; }

// Scales the stored fraction to microseconds.
inline uint32_t FracToMicros(uint64_t frac, uint8_t fsp) {
  switch (FracBytes(fsp)) {
    case 1: return static_cast<uint32_t>(frac * 10000);
    case 2: return static_cast<uint32_t>(frac * 100);
    default: return static_cast<uint32_t>(frac);
  }
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

}  // namespace

void RowsReader::Reset(const RowsEvent& event) {
  event_ = &event;
  p_ = reinterpret_cast<const uint8_t*>(event.rows.data());
  end_ = p_ + event.rows.size();
  row_index_ = 0;
  if (built_.size() < event.column_count) built_.resize(event.column_count);
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
  if (col_index != static_cast<size_t>(-1)) {
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
  if (event_ == nullptr || p_ >= end_) {
    *done = true;
    return Status::OK();
  }
  const RowsEventInfo& info = event_->info;
  const uint8_t* row_start = p_;
  change->kind = info.kind;
  change->has_before = info.kind != RowsKind::kWrite;
  change->has_after = info.kind != RowsKind::kDelete;
  if (info.kind == RowsKind::kWrite) {
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_before, false, &change->after));
  } else if (info.kind == RowsKind::kDelete) {
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_before, false, &change->before));
  } else {
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_before, false, &change->before));
    partial_json_bits_ = {};
    if (info.partial) {
      // value_options, then (with PARTIAL_JSON_UPDATES) one bit per JSON column.
      ByteReader r(p_, static_cast<size_t>(end_ - p_));
      uint64_t options = 0;
      if (!r.ReadPackedInt(&options)) return Error("value options truncated", static_cast<size_t>(-1));
      if (options & 1) {
        size_t nbytes = (JsonColumnCount(*event_->table) + 7) / 8;
        if (!r.ReadBytes(nbytes, &partial_json_bits_)) {
          return Error("partial-update bitmap truncated", static_cast<size_t>(-1));
        }
      }
      p_ = r.current();
    }
    before_for_partial_ = &change->before;
    rebuilt_.assign(event_->column_count, 0);
    CANAL_RETURN_IF_ERROR(ReadImage(event_->columns_after, true, &change->after));
  }
  // A row that takes no bytes (no column present) would repeat forever.
  if (p_ == row_start) return Error("row image has no columns (empty column bitmap)", static_cast<size_t>(-1));
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

Status RowsReader::ReadImage(std::string_view present, bool after, RowImage* image) {
  const TableMap& t = *event_->table;
  const size_t n = event_->column_count;
  if (image->values.size() != n) image->values.resize(n);
  size_t present_count = 0;
  for (size_t i = 0; i < n; ++i) present_count += Bit(present, i);
  // Pre-GA (v0) images copied the engine's record null bytes, whose first bit is
  // reserved (MyISAM's delete marker); column null bits start at bit 1.
  const size_t null_base = event_->info.version == 0 ? 1 : 0;
  const size_t null_bytes = (present_count + null_base + 7) / 8;
  if (static_cast<size_t>(end_ - p_) < null_bytes) {
    return Error("null bitmap runs past the end of the event", static_cast<size_t>(-1));
  }
  const uint8_t* nulls = p_;
  p_ += null_bytes;
  size_t k = null_base;  // null-bit index of the next present column
  after_partial_ = after && !partial_json_bits_.empty();
  for (size_t i = 0; i < n; ++i) {
    ColumnValue& v = image->values[i];
    const ColumnInfo& col = t.columns[i];
    v.type = col.real_type;
    if (!Bit(present, i)) {
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
    CANAL_RETURN_IF_ERROR(ReadValue(col, i, &v));
  }
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
  auto prefixed = [&](size_t lb, ColumnValue::Kind kind) -> Status {
    if (!need(lb)) return past_end(lb);
    uint64_t len = LoadLE(p_, lb);
    if (len > avail - lb) {
      return Error("length " + std::to_string(len) + " points outside the event (" + std::to_string(avail - lb) +
                       " byte(s) left)",
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
    case ColumnType::kTimestamp2: {
      const uint8_t fsp = static_cast<uint8_t>(col.meta);
      const size_t n = 4 + FracBytes(fsp);
      if (!need(n)) return past_end(n);
      v->kind = ColumnValue::Kind::kTimestamp;
      v->u64 = LoadBE(p_, 4);
      v->timestamp_micros = FracToMicros(LoadBE(p_ + 4, n - 4), fsp);
      v->fsp = fsp;
      p_ += n;
      if (v->timestamp_micros > 999999) return Error("fractional seconds out of range", ci);
      return Status::OK();
    }
    case ColumnType::kDate: {
      if (!need(3)) return past_end(3);
      uint32_t d = static_cast<uint32_t>(LoadLE(p_, 3));
      p_ += 3;
      v->kind = ColumnValue::Kind::kDate;
      v->temporal = TemporalValue{};
      v->temporal.day = d & 31;
      v->temporal.month = (d >> 5) & 15;
      v->temporal.year = static_cast<uint16_t>(d >> 9);
      v->fsp = 0;
      return Status::OK();
    }
    case ColumnType::kTime: {
      if (!need(3)) return past_end(3);
      int32_t t = static_cast<int32_t>(LoadLE(p_, 3) << 8) >> 8;  // signed HHMMSS
      p_ += 3;
      v->kind = ColumnValue::Kind::kTime;
      v->temporal = TemporalValue{};
      v->temporal.negative = t < 0;
      uint32_t a = static_cast<uint32_t>(t < 0 ? -static_cast<int64_t>(t) : t);
      v->temporal.hour = a / 10000;
      v->temporal.minute = static_cast<uint8_t>(a / 100 % 100);
      v->temporal.second = static_cast<uint8_t>(a % 100);
      v->fsp = 0;
      return Status::OK();
    }
    case ColumnType::kDateTime: {
      if (!need(8)) return past_end(8);
      uint64_t dt = LoadLE(p_, 8);  // YYYYMMDDhhmmss
      p_ += 8;
      uint64_t date = dt / 1000000, time = dt % 1000000;
      v->kind = ColumnValue::Kind::kDateTime;
      v->temporal = TemporalValue{};
      v->temporal.year = static_cast<uint16_t>(date / 10000 % 10000);
      v->temporal.month = static_cast<uint8_t>(date / 100 % 100);
      v->temporal.day = static_cast<uint8_t>(date % 100);
      v->temporal.hour = static_cast<uint32_t>(time / 10000);
      v->temporal.minute = static_cast<uint8_t>(time / 100 % 100);
      v->temporal.second = static_cast<uint8_t>(time % 100);
      v->fsp = 0;
      return Status::OK();
    }
    case ColumnType::kDateTime2: {
      const uint8_t fsp = static_cast<uint8_t>(col.meta);
      const size_t n = 5 + FracBytes(fsp);
      if (!need(n)) return past_end(n);
      // 1 sign bit, 17 bits year*13+month, 5 day, 5 hour, 6 minute, 6 second.
      int64_t packed = static_cast<int64_t>(LoadBE(p_, 5)) - 0x8000000000LL;
      uint64_t frac = LoadBE(p_ + 5, n - 5);
      p_ += n;
      if (packed < 0) return Error("negative DATETIME", ci);
      uint64_t ymd = static_cast<uint64_t>(packed) >> 17, hms = static_cast<uint64_t>(packed) & 0x1FFFF;
      uint64_t ym = ymd >> 5;
      v->kind = ColumnValue::Kind::kDateTime;
      v->temporal = TemporalValue{};
      v->temporal.year = static_cast<uint16_t>(ym / 13);
      v->temporal.month = static_cast<uint8_t>(ym % 13);
      v->temporal.day = static_cast<uint8_t>(ymd & 31);
      v->temporal.hour = static_cast<uint32_t>(hms >> 12);
      v->temporal.minute = static_cast<uint8_t>((hms >> 6) & 63);
      v->temporal.second = static_cast<uint8_t>(hms & 63);
      v->temporal.micros = FracToMicros(frac, fsp);
      v->fsp = fsp;
      if (v->temporal.micros > 999999) return Error("fractional seconds out of range", ci);
      return Status::OK();
    }
    case ColumnType::kTime2: {
      const uint8_t fsp = static_cast<uint8_t>(col.meta);
      const size_t fb = FracBytes(fsp);
      const size_t n = 3 + fb;
      if (!need(n)) return past_end(n);
      // Packed value = (hms << 24) + fraction-in-micros, offset so it sorts as unsigned.
      int64_t packed;
      if (fb == 3) {
        packed = static_cast<int64_t>(LoadBE(p_, 6)) - 0x800000000000LL;
      } else {
        int64_t intpart = static_cast<int64_t>(LoadBE(p_, 3)) - 0x800000LL;
        int64_t frac = static_cast<int64_t>(LoadBE(p_ + 3, fb));
        if (fb == 1) {
          if (intpart < 0 && frac) {
            ++intpart;
            frac -= 0x100;
          }
          packed = intpart * (int64_t{1} << 24) + frac * 10000;
        } else if (fb == 2) {
          if (intpart < 0 && frac) {
            ++intpart;
            frac -= 0x10000;
          }
          packed = intpart * (int64_t{1} << 24) + frac * 100;
        } else {
          packed = intpart * (int64_t{1} << 24);
        }
      }
      p_ += n;
      v->kind = ColumnValue::Kind::kTime;
      v->temporal = TemporalValue{};
      v->temporal.negative = packed < 0;
      uint64_t a = static_cast<uint64_t>(packed < 0 ? -packed : packed);
      uint64_t hms = a >> 24;
      v->temporal.micros = static_cast<uint32_t>(a & 0xFFFFFF);
      v->temporal.hour = static_cast<uint32_t>((hms >> 12) & 0x3FF);
      v->temporal.minute = static_cast<uint8_t>((hms >> 6) & 63);
      v->temporal.second = static_cast<uint8_t>(hms & 63);
      v->fsp = fsp;
      if (v->temporal.micros > 999999) return Error("fractional seconds out of range", ci);
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
      return prefixed(col.max_length > 255 ? 2 : 1, text_or_bytes());
    case ColumnType::kString:
      return prefixed(col.max_length > 255 ? 2 : 1, text_or_bytes());
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
          std::string& doc = built_[ci];
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
