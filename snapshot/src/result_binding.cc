#include "result_binding.h"

#include <string>

namespace canal::snapshot {
namespace {

constexpr size_t kInitialValueBuffer = 64;

FieldKind FetchKind(const MYSQL_FIELD& f) {
  switch (f.type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR:
      return (f.flags & UNSIGNED_FLAG) ? FieldKind::kUnsigned : FieldKind::kSigned;
    case MYSQL_TYPE_FLOAT:
    case MYSQL_TYPE_DOUBLE:
      return FieldKind::kDouble;
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP:
    case MYSQL_TYPE_TIME:
      return FieldKind::kTime;
    default:
      return FieldKind::kBytes;
  }
}

enum_mysql_timestamp_type TimeType(uint8_t field_type) {
  if (field_type == MYSQL_TYPE_DATE || field_type == MYSQL_TYPE_NEWDATE) return MYSQL_TIMESTAMP_DATE;
  if (field_type == MYSQL_TYPE_TIME) return MYSQL_TIMESTAMP_TIME;
  return MYSQL_TIMESTAMP_DATETIME;
}

// The parameter type a temporal key value is sent as: its column's.
enum_field_types TimeParamType(uint8_t field_type) {
  if (field_type == MYSQL_TYPE_NEWDATE) return MYSQL_TYPE_DATE;
  return static_cast<enum_field_types>(field_type);
}

}  // namespace

Status ResultBinding::Setup(MYSQL_RES* meta, size_t columns) {
  const unsigned int n = mysql_num_fields(meta);
  if (n != columns) {
    return Status::Corruption("the chunk statement returns " + std::to_string(n) + " columns, the table has " +
                              std::to_string(columns));
  }
  const MYSQL_FIELD* f = mysql_fetch_fields(meta);
  columns_.assign(n, Column{});
  binds_.assign(n, MYSQL_BIND{});
  fields_.assign(n, FieldValue{});
  for (unsigned int i = 0; i < n; ++i) {
    Column& c = columns_[i];
    c.type = f[i].type;
    c.kind = FetchKind(f[i]);
    if (c.kind == FieldKind::kBytes) {
      c.binary = f[i].charsetnr == 63;
      c.bytes.resize(kInitialValueBuffer);
    }
  }
  return Status::OK();
}

Status ResultBinding::Bind(MYSQL_STMT* stmt) {
  for (size_t i = 0; i < columns_.size(); ++i) {
    Column& c = columns_[i];
    MYSQL_BIND& b = binds_[i];
    b = MYSQL_BIND{};
    b.length = &c.length;
    b.is_null = &c.is_null;
    b.error = &c.error;
    switch (c.kind) {
      case FieldKind::kSigned:
      case FieldKind::kUnsigned:
        b.buffer_type = MYSQL_TYPE_LONGLONG;
        b.buffer = &c.i64;
        b.is_unsigned = c.kind == FieldKind::kUnsigned;
        break;
      case FieldKind::kDouble:
        b.buffer_type = MYSQL_TYPE_DOUBLE;
        b.buffer = &c.f64;
        break;
      case FieldKind::kTime:
        b.buffer_type = c.type;
        b.buffer = &c.time;
        b.buffer_length = sizeof(c.time);
        break;
      default:
        b.buffer_type = MYSQL_TYPE_STRING;
        b.buffer = c.bytes.data();
        b.buffer_length = static_cast<unsigned long>(c.bytes.size());
        break;
    }
  }
  if (mysql_stmt_bind_result(stmt, binds_.data()) != 0) {
    return Status::IOError(std::string("binding the result columns failed: ") + mysql_stmt_error(stmt));
  }
  return Status::OK();
}

Status ResultBinding::CompleteRow(MYSQL_STMT* stmt) {
  row_bytes_ = 0;
  bool grew = false;
  for (size_t i = 0; i < columns_.size(); ++i) {
    Column& c = columns_[i];
    FieldValue& f = fields_[i];
    f.field_type = static_cast<uint8_t>(c.type);
    f.binary = c.binary;
    if (c.is_null) {
      f.kind = FieldKind::kNull;
      continue;
    }
    f.kind = c.kind;
    switch (c.kind) {
      case FieldKind::kSigned:
        f.i64 = c.i64;
        row_bytes_ += 8;
        break;
      case FieldKind::kUnsigned:
        f.u64 = static_cast<uint64_t>(c.i64);
        row_bytes_ += 8;
        break;
      case FieldKind::kDouble:
        f.f64 = c.f64;
        row_bytes_ += 8;
        break;
      case FieldKind::kTime:
        f.time = {c.time.year, c.time.month, c.time.day, c.time.hour, c.time.minute, c.time.second,
                  static_cast<uint32_t>(c.time.second_part), c.time.neg != 0};
        row_bytes_ += 8;
        break;
      default: {
        if (c.length > c.bytes.size()) {
          // Longer than its buffer: grow it (kept for later rows) and read the value again.
          c.bytes.resize(c.length);
          MYSQL_BIND b = binds_[i];
          b.buffer = c.bytes.data();
          b.buffer_length = static_cast<unsigned long>(c.bytes.size());
          if (mysql_stmt_fetch_column(stmt, &b, static_cast<unsigned int>(i), 0) != 0) {
            return Status::IOError("reading column " + std::to_string(i + 1) + " (" + std::to_string(c.length) +
                                   " bytes) failed: " + mysql_stmt_error(stmt));
          }
          grew = true;
          holds_large_ = holds_large_ || c.bytes.size() > kKeepValueBytes;
        }
        f.bytes = std::string_view(c.bytes.data(), c.length);
        row_bytes_ += c.length;
        break;
      }
    }
  }
  // The grown buffers replace the old ones in the binding before the next fetch writes to them.
  return grew ? Bind(stmt) : Status::OK();
}

Status ResultBinding::ReleaseLargeBuffers(MYSQL_STMT* stmt) {
  if (!holds_large_) return Status::OK();
  holds_large_ = false;
  bool released = false;
  for (Column& c : columns_) {
    if (c.kind != FieldKind::kBytes || c.bytes.capacity() <= kKeepValueBytes) continue;
    std::vector<char>(kInitialValueBuffer).swap(c.bytes);
    released = true;
  }
  for (FieldValue& f : fields_) f.bytes = {};  // they may point into a released buffer
  return released ? Bind(stmt) : Status::OK();
}

Status ResultBinding::CopyKey(const std::vector<size_t>& columns, std::vector<KeyValue>* key) const {
  key->resize(columns.size());
  for (size_t k = 0; k < columns.size(); ++k) {
    const FieldValue& f = fields_[columns[k]];
    if (f.kind == FieldKind::kNull) {
      return Status::Corruption("key column " + std::to_string(columns[k] + 1) +
                                " is NULL in a row, though the chunk key's columns are NOT NULL");
    }
    KeyValue& v = (*key)[k];
    static_cast<TypedValue&>(v) = f;
    v.bytes.assign(f.bytes);  // reuses the string's capacity
  }
  return Status::OK();
}

Status ParamBinding::Bind(MYSQL_STMT* stmt, const std::vector<KeyValue>& key,
                          const std::vector<size_t>& placeholders, uint64_t limit) {
  const size_t n = placeholders.size();
  binds_.assign(n + 1, MYSQL_BIND{});
  times_.assign(n, MYSQL_TIME{});
  lengths_.assign(n, 0);
  limit_ = limit;
  binds_[n].buffer_type = MYSQL_TYPE_LONGLONG;
  binds_[n].buffer = &limit_;
  binds_[n].is_unsigned = 1;
  for (size_t k = 0; k < n; ++k) {
    if (placeholders[k] >= key.size()) {
      return Status::InvalidArgument("placeholder " + std::to_string(k + 1) + " binds key column " +
                                     std::to_string(placeholders[k] + 1) + " of " + std::to_string(key.size()));
    }
    const KeyValue& v = key[placeholders[k]];
    MYSQL_BIND& b = binds_[k];
    switch (v.kind) {
      case FieldKind::kSigned:
        b.buffer_type = MYSQL_TYPE_LONGLONG;
        b.buffer = const_cast<int64_t*>(&v.i64);
        break;
      case FieldKind::kUnsigned:
        b.buffer_type = MYSQL_TYPE_LONGLONG;
        b.buffer = const_cast<uint64_t*>(&v.u64);
        b.is_unsigned = 1;
        break;
      case FieldKind::kDouble:
        b.buffer_type = MYSQL_TYPE_DOUBLE;
        b.buffer = const_cast<double*>(&v.f64);
        break;
      case FieldKind::kTime: {
        MYSQL_TIME& t = times_[k];
        t.year = v.time.year;
        t.month = v.time.month;
        t.day = v.time.day;
        t.hour = v.time.hour;
        t.minute = v.time.minute;
        t.second = v.time.second;
        t.second_part = v.time.microsecond;
        t.neg = v.time.negative;
        t.time_type = TimeType(v.field_type);
        b.buffer_type = TimeParamType(v.field_type);
        b.buffer = &t;
        b.buffer_length = sizeof(t);
        break;
      }
      case FieldKind::kBytes:
        // A DECIMAL compares as a decimal only when sent as one; a binary value as a BLOB
        // parameter is taken as binary, with no charset conversion.
        b.buffer_type = (v.field_type == MYSQL_TYPE_NEWDECIMAL || v.field_type == MYSQL_TYPE_DECIMAL)
                            ? MYSQL_TYPE_NEWDECIMAL
                            : v.binary ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
        b.buffer = const_cast<char*>(v.bytes.data());
        b.buffer_length = static_cast<unsigned long>(v.bytes.size());
        lengths_[k] = b.buffer_length;
        b.length = &lengths_[k];
        break;
      case FieldKind::kNull:
        return Status::InvalidArgument("key value " + std::to_string(k + 1) + " is NULL; a chunk key is NOT NULL");
    }
  }
  if (mysql_stmt_bind_param(stmt, binds_.data()) != 0) {
    return Status::IOError(std::string("binding the last key and the row limit failed: ") + mysql_stmt_error(stmt));
  }
  return Status::OK();
}

}  // namespace canal::snapshot
