#include "result_binding.h"

#include <string>

namespace canal::snapshot {
namespace {

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
  fields_.assign(n, FieldValue{});
  for (unsigned int i = 0; i < n; ++i) {
    Column& c = columns_[i];
    c.type = f[i].type;
    c.kind = BinaryFieldKind(static_cast<uint8_t>(f[i].type), (f[i].flags & UNSIGNED_FLAG) != 0);
    c.binary = c.kind == FieldKind::kBytes && f[i].charsetnr == 63;
    c.fixed_bytes = BinaryFixedBytes(c.kind, static_cast<uint8_t>(c.type));
    fields_[i].field_type = static_cast<uint8_t>(c.type);
    fields_[i].binary = c.binary;
  }
  return Status::OK();
}

Status ResultBinding::Bind(MYSQL_STMT* stmt) {
  // No result buffers are bound: with none, Connector/C hands each column to the callback.
  if (mysql_stmt_attr_set(stmt, STMT_ATTR_CB_USER_DATA, this) != 0 ||
      mysql_stmt_attr_set(stmt, STMT_ATTR_CB_RESULT, reinterpret_cast<const void*>(&ResultBinding::OnColumn)) != 0) {
    return Status::IOError(std::string("setting up the reading of the result columns failed: ") +
                           mysql_stmt_error(stmt));
  }
  stmt_ = stmt;
  return Status::OK();
}

void ResultBinding::OnColumn(void* self, unsigned int column, unsigned char** row) {
  auto* binding = static_cast<ResultBinding*>(self);
  // The row lies in the connection's packet buffer, which ends at buff_end.
  const unsigned char* end = binding->stmt_->mysql->net.buff_end;
  if (row == nullptr) {
    binding->Decode(column, nullptr, end);
    return;
  }
  const unsigned char* at = *row;
  binding->Decode(column, &at, end);
  *row += at - *row;
}

void ResultBinding::Fail(unsigned int column, const char* why) {
  if (error_.empty()) error_ = "column " + std::to_string(column + 1) + " of a row " + why;
}

void ResultBinding::Decode(unsigned int column, const unsigned char** at, const unsigned char* end) {
  if (column == 0) {
    row_bytes_ = 0;
    error_.clear();
  }
  if (column >= columns_.size()) {
    if (at != nullptr) *at = end;  // nothing after it can be placed
    return Fail(column, "is past the result's columns");
  }
  FieldValue& f = fields_[column];
  if (at == nullptr) {
    f.kind = FieldKind::kNull;
    return;
  }
  const Column& c = columns_[column];
  if (ReadCommonBinaryValue(c.kind, c.fixed_bytes, at, end, &f, &row_bytes_)) return;
  if (const char* why = ReadBinaryValue(c.kind, static_cast<uint8_t>(c.type), at, end, &f, &row_bytes_)) {
    Fail(column, why);
  }
}

Status ResultBinding::CompleteRow() const {
  if (!error_.empty()) return Status::Corruption(error_);
  return Status::OK();
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
        if (v.field_type == MYSQL_TYPE_TIME) {
          // The protocol sends a TIME's hours in one byte beside its days: '838:59:59' goes as
          // 34 days and 22 hours, not as 838 hours cut to a byte.
          const uint64_t hours = uint64_t{v.time.day} * 24 + v.time.hour;
          t.day = static_cast<unsigned int>(hours / 24);
          t.hour = static_cast<unsigned int>(hours % 24);
        }
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
