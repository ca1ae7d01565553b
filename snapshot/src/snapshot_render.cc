#include "canal/snapshot/snapshot_render.h"

#include <arpa/inet.h>

#include <cstring>
#include <string>

#include "canal/parser/binlog/column_text.h"
#include "canal/render/canal_sql_type.h"
#include "canal/snapshot/chunk_query.h"  // QuoteIdentifier

namespace canal::snapshot {
namespace {

using binlog::ColumnInfo;
using binlog::ColumnType;
using binlog::ColumnValue;

constexpr uint32_t kBinaryCollation = 63;
constexpr uint32_t kUtf8mb4Collation = 45;  // the reader's connection charset (ConnectionOptions::charset)

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> list) {
  for (std::string_view x : list) {
    if (s == x) return true;
  }
  return false;
}

// True when `t` is exactly what the binlog's DECIMAL(precision,scale) prints as
// (binlog/column_text.h WriteDecimalText): [-]integer[.fraction], the integer part without
// leading zeros ("0" when none), exactly `scale` fraction digits, no sign on zero. Anything
// else (and any DECIMAL outside MySQL's bounds) takes the binary round trip, which refuses
// what it cannot pack.
bool CanonicalDecimalText(std::string_view t, int precision, int scale) {
  if (precision < 1 || precision > 65 || scale < 0 || scale > 30 || scale > precision) return false;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = !t.empty() && t[0] == '-' ? 1 : 0;
  const bool negative = i == 1;
  const size_t int_start = i;
  while (i < t.size() && digit(t[i])) ++i;
  const size_t int_len = i - int_start;
  if (int_len == 0) return false;
  const bool int_zero = int_len == 1 && t[int_start] == '0';
  if (int_len > 1 && t[int_start] == '0') return false;
  if (!int_zero && static_cast<int>(int_len) > precision - scale) return false;
  bool nonzero = !int_zero;
  if (scale > 0) {
    if (i >= t.size() || t[i] != '.' || t.size() - i - 1 != static_cast<size_t>(scale)) return false;
    for (++i; i < t.size(); ++i) {
      if (!digit(t[i])) return false;
      nonzero = nonzero || t[i] != '0';
    }
  } else if (i != t.size()) {
    return false;
  }
  return !negative || nonzero;
}

// The bytes a column of `count` ENUM labels or SET members takes in a row.
uint32_t EnumBytes(size_t count) { return count > 255 ? 2 : 1; }
uint32_t SetBytes(size_t count) {
  const auto bytes = static_cast<uint32_t>((count + 7) / 8);
  return bytes > 4 ? 8 : bytes;
}

// GEOMETRY's subtype as MariaDB's GEOMETRY_TYPE metadata numbers it (the server's Field_geom).
uint8_t GeometryType(std::string_view data_type) {
  static constexpr std::string_view kTypes[] = {"geometry",   "point",           "linestring",   "polygon",
                                                "multipoint", "multilinestring", "multipolygon", "geometrycollection"};
  for (uint8_t i = 0; i < std::size(kTypes); ++i) {
    if (data_type == kTypes[i]) return i;
  }
  return 0;
}

// One column as the binlog's TABLE_MAP (with FULL metadata) describes it: the type code and its
// metadata as the server writes them, and the facts the decoder derives from those.
Status DescribeColumn(const TableColumn& t, ColumnInfo* c) {
  const std::string_view d = t.data_type;
  const bool is_unsigned = t.column_type.find(" unsigned") != std::string::npos;
  auto integer = [&](ColumnType type) {
    c->type = type;
    c->is_unsigned = is_unsigned;
    c->signedness_known = true;
  };
  auto string_column = [&](ColumnType type, uint32_t collation) {
    c->type = type;
    c->charset = collation;
  };
  uint32_t collation = t.collation_id;
  if (collation == 0 && !t.charset.empty()) collation = binlog::DefaultCollationOfCharset(t.charset);
  if (IsOneOf(d, {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})) collation = kBinaryCollation;
  if (d == "tinyint") integer(ColumnType::kTiny);
  else if (d == "smallint") integer(ColumnType::kShort);
  else if (d == "mediumint") integer(ColumnType::kInt24);
  else if (d == "int") integer(ColumnType::kLong);
  else if (d == "bigint") integer(ColumnType::kLongLong);
  else if (d == "float" || d == "double") {
    integer(d == "float" ? ColumnType::kFloat : ColumnType::kDouble);
    c->meta = d == "float" ? 4 : 8;
  } else if (d == "decimal") {
    integer(ColumnType::kNewDecimal);
    if (t.numeric_precision == 0 || t.numeric_precision > 65 || t.numeric_scale > 38) {
      return Status::InvalidArgument("DECIMAL without a precision and scale in information_schema");
    }
    c->precision = static_cast<uint8_t>(t.numeric_precision);
    c->decimals = static_cast<uint8_t>(t.numeric_scale);
    c->meta = static_cast<uint16_t>(c->precision << 8 | c->decimals);
  } else if (d == "year") {
    integer(ColumnType::kYear);
    c->is_unsigned = true;  // MariaDB's SIGNEDNESS metadata marks YEAR unsigned
  } else if (d == "date") {
    c->type = ColumnType::kDate;
  } else if (d == "time" || d == "datetime" || d == "timestamp") {
    c->type = d == "time" ? ColumnType::kTime2 : d == "datetime" ? ColumnType::kDateTime2 : ColumnType::kTimestamp2;
    if (t.datetime_precision > 6) return Status::InvalidArgument("fractional precision above 6");
    c->meta = static_cast<uint16_t>(t.datetime_precision);
  } else if (d == "bit") {
    if (t.numeric_precision == 0 || t.numeric_precision > 64) return Status::InvalidArgument("BIT width out of range");
    c->type = ColumnType::kBit;
    c->max_length = t.numeric_precision;
    c->meta = static_cast<uint16_t>((t.numeric_precision / 8) << 8 | t.numeric_precision % 8);
  } else if (d == "enum" || d == "set") {
    if (!binlog::ParseEnumOrSetLabels(t.column_type, &c->enum_or_set_labels)) {
      return Status::InvalidArgument("cannot read the labels of COLUMN_TYPE " + t.column_type);
    }
    string_column(ColumnType::kString, collation);
    c->real_type = d == "enum" ? ColumnType::kEnum : ColumnType::kSet;
    c->max_length = d == "enum" ? EnumBytes(c->enum_or_set_labels.size()) : SetBytes(c->enum_or_set_labels.size());
    c->meta = static_cast<uint16_t>(static_cast<uint16_t>(c->real_type) << 8 | c->max_length);
  } else if (d == "char" || d == "binary") {
    string_column(ColumnType::kString, collation);
    c->real_type = ColumnType::kString;
    c->max_length = static_cast<uint32_t>(t.octet_length);
    // Lengths over 255 fold two bits into the type byte, complemented (table_map_decoder.cc).
    const auto type_byte = static_cast<uint16_t>(0xFE ^ ((c->max_length >> 4) & 0x30));
    c->meta = static_cast<uint16_t>(type_byte << 8 | (c->max_length & 0xFF));
  } else if (d == "varchar" || d == "varbinary") {
    string_column(ColumnType::kVarchar, collation);
    c->max_length = static_cast<uint32_t>(t.octet_length);
    c->meta = static_cast<uint16_t>(c->max_length);
  } else if (IsOneOf(d, {"tinytext", "tinyblob", "text", "blob", "mediumtext", "mediumblob", "longtext", "longblob"})) {
    string_column(ColumnType::kBlob, collation);
    c->meta = d.starts_with("tiny") ? 1 : d.starts_with("medium") ? 3 : d.starts_with("long") ? 4 : 2;
  } else if (d == "inet4" || d == "inet6" || d == "uuid") {
    // MariaDB's fixed-size binary types: the binlog logs their stored bytes as BINARY(4) / (16).
    string_column(ColumnType::kString, kBinaryCollation);
    c->real_type = ColumnType::kString;
    c->max_length = d == "inet4" ? 4 : 16;
    c->meta = static_cast<uint16_t>(0xFE00 | c->max_length);
  } else if (d == "json") {  // MySQL's binary JSON (MariaDB's JSON is LONGTEXT in information_schema)
    c->type = ColumnType::kJson;
    c->meta = 4;
  } else if (IsOneOf(d, {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
                         "geometrycollection"})) {
    c->type = ColumnType::kGeometry;
    c->meta = 4;
    c->charset = kBinaryCollation;
    c->geometry_type = GeometryType(d);
  } else {
    return Status::NotSupported("type " + t.data_type + " (" + t.column_type + ") is not mapped to the binlog's");
  }
  if (c->real_type == ColumnType::kNull) c->real_type = c->type;
  return Status::OK();
}

// Days from 1970-01-01 to a proleptic Gregorian date (the civil-from-days inverse).
int64_t DaysFromCivil(int64_t y, uint32_t m, uint32_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<uint32_t>(y - era * 400);
  const uint32_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const uint32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The stored bytes of MariaDB's INET4, INET6 and UUID from the text SELECT sends: the address
// in network order; the UUID's 32 hex digits in their written order (as 10.11 logs them).
bool ParseFixedBinary(SnapshotRowConverter::TextForm form, std::string_view text, std::string* out) {
  out->clear();
  char buffer[64];
  if (form == SnapshotRowConverter::TextForm::kInet4 || form == SnapshotRowConverter::TextForm::kInet6) {
    if (text.size() >= sizeof buffer) return false;
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
    unsigned char address[16];
    const bool v4 = form == SnapshotRowConverter::TextForm::kInet4;
    if (inet_pton(v4 ? AF_INET : AF_INET6, buffer, address) != 1) return false;
    out->assign(reinterpret_cast<const char*>(address), v4 ? 4 : 16);
    return true;
  }
  auto nibble = [](char ch) {
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
  };
  int high = -1;
  for (char ch : text) {
    if (ch == '-') continue;
    const int n = nibble(ch);
    if (n < 0) return false;
    if (high < 0) {
      high = n;
    } else {
      out->push_back(static_cast<char>(high << 4 | n));
      high = -1;
    }
  }
  return high < 0 && out->size() == 16;
}

// A DATE, TIME or DATETIME value's fields (`kind` says which) from the client's.
void FillTemporal(const TimeValue& t, ColumnValue::Kind kind, binlog::TemporalValue* out) {
  if (kind == ColumnValue::Kind::kTime) {
    out->negative = t.negative;
    out->hour = t.day * 24 + t.hour;  // the client may split days off the hours
  } else {
    out->year = static_cast<uint16_t>(t.year);
    out->month = static_cast<uint8_t>(t.month);
    out->day = static_cast<uint8_t>(t.day);
    out->hour = t.hour;
  }
  out->minute = static_cast<uint8_t>(t.minute);
  out->second = static_cast<uint8_t>(t.second);
  out->micros = kind == ColumnValue::Kind::kDate ? 0 : t.microsecond;
}

std::string Printable(const FieldValue& f) {
  switch (f.kind) {
    case FieldKind::kNull: return "NULL";
    case FieldKind::kSigned: return std::to_string(f.i64);
    case FieldKind::kUnsigned: return std::to_string(f.u64);
    case FieldKind::kDouble: return std::to_string(f.f64);
    case FieldKind::kTime:
      return std::to_string(f.time.year) + "-" + std::to_string(f.time.month) + "-" + std::to_string(f.time.day) +
             " " + std::to_string(f.time.hour) + ":" + std::to_string(f.time.minute) + ":" +
             std::to_string(f.time.second) + "." + std::to_string(f.time.microsecond);
    case FieldKind::kBytes: {
      std::string s = "'";
      for (char ch : f.bytes.substr(0, 64)) {
        if (static_cast<unsigned char>(ch) < 0x20 || ch == '\'') {
          static constexpr char kHex[] = "0123456789abcdef";
          s += "\\x";
          s += kHex[(ch >> 4) & 0xF];
          s += kHex[ch & 0xF];
        } else {
          s += ch;
        }
      }
      return s + (f.bytes.size() > 64 ? "'..." : "'");
    }
  }
  return "?";
}

}  // namespace

Status BinlogColumnsOf(const TableShape& shape, const SnapshotColumnOptions& options,
                       std::vector<binlog::ColumnInfo>* columns) {
  columns->assign(shape.columns.size(), ColumnInfo{});
  for (size_t i = 0; i < shape.columns.size(); ++i) {
    const TableColumn& t = shape.columns[i];
    ColumnInfo& c = (*columns)[i];
    Status s = DescribeColumn(t, &c);
    if (!s.ok()) {
      return s.WithContext(QuoteIdentifier(shape.schema) + "." + QuoteIdentifier(shape.table) + " column " +
                           QuoteIdentifier(t.name));
    }
    c.name = t.name;
    c.nullable = t.nullable;
    c.is_key = t.primary_key;
    if (options.schema_column_type) {
      // As ApplySchemaProvider labels a MINIMAL-metadata table map (signedness of every column).
      if (!c.signedness_known) {
        c.is_unsigned = t.column_type.find(" unsigned") != std::string::npos;
        c.signedness_known = true;
      }
      c.column_type = options.integer_display_widths ? binlog::WithDefaultDisplayWidth(t.column_type) : t.column_type;
    }
  }
  return Status::OK();
}

Status SnapshotRowConverter::Init(const TableShape& shape, const SnapshotColumnOptions& options) {
  std::vector<ColumnInfo> columns;
  CANAL_RETURN_IF_ERROR(BinlogColumnsOf(shape, options, &columns));
  return Init(shape, std::move(columns), options.integer_display_widths);
}

Status SnapshotRowConverter::Init(const TableShape& shape, std::vector<binlog::ColumnInfo> columns,
                                  bool integer_display_widths) {
  table_ = QuoteIdentifier(shape.schema) + "." + QuoteIdentifier(shape.table);
  if (columns.size() != shape.columns.size()) {
    return Status::InvalidArgument(table_ + " has " + std::to_string(shape.columns.size()) + " columns, the binlog's " +
                                   std::to_string(columns.size()));
  }
  columns_ = std::move(columns);
  integer_display_widths_ = integer_display_widths;
  text_columns_ = columns_;
  labels_.assign(columns_.size(), {});
  for (size_t i = 0; i < columns_.size(); ++i) {
    ColumnInfo& c = text_columns_[i];
    if (!binlog::IsBinaryCharset(c.charset)) c.charset = kUtf8mb4Collation;
    const std::vector<std::string>& labels = columns_[i].enum_or_set_labels;
    for (size_t k = 0; k < labels.size(); ++k) labels_[i].emplace(labels[k], static_cast<uint32_t>(k));
  }
  values_.assign(columns_.size(), ColumnValue{});
  scratch_.assign(columns_.size(), std::string());
  text_forms_.assign(columns_.size(), TextForm::kAsIs);
  for (size_t i = 0; i < columns_.size(); ++i) {
    const std::string& d = shape.columns[i].data_type;
    if (!binlog::IsBinaryCharset(columns_[i].charset)) continue;
    text_forms_[i] = d == "inet4" ? TextForm::kInet4 : d == "inet6" ? TextForm::kInet6 : d == "uuid" ? TextForm::kUuid
                                                                                                    : TextForm::kAsIs;
  }
  routes_.assign(columns_.size(), Route::kGeneral);
  for (size_t i = 0; i < columns_.size(); ++i) {
    routes_[i] = RouteOf(i);
    // The type ConvertOne sets first, whatever the value: the fast path leaves it.
    ColumnValue& v = values_[i];
    v.type = binlog::EffectiveType(columns_[i]);
    v.kind = ColumnValue::Kind::kNull;
  }
  return Status::OK();
}

Status SnapshotRowConverter::Fail(size_t i, std::string_view why, std::string_view value) const {
  return Status::InvalidArgument(table_ + " column " + QuoteIdentifier(columns_[i].name) + ": value " +
                                 std::string(value) + " " + std::string(why));
}

Status SnapshotRowConverter::Convert(std::span<const FieldValue> fields) {
  if (fields.size() != columns_.size()) {
    return Status::InvalidArgument(table_ + ": a row of " + std::to_string(fields.size()) + " values for " +
                                   std::to_string(columns_.size()) + " columns");
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!ConvertFast(i, fields[i], &values_[i])) CANAL_RETURN_IF_ERROR(ConvertOne(i, fields[i], &values_[i]));
  }
  return Status::OK();
}

SnapshotRowConverter::Route SnapshotRowConverter::RouteOf(size_t i) const {
  const ColumnInfo& c = columns_[i];
  switch (binlog::EffectiveType(c)) {
    case ColumnType::kTiny:
    case ColumnType::kShort:
    case ColumnType::kInt24:
    case ColumnType::kLong:
    case ColumnType::kLongLong:
      return c.is_unsigned ? Route::kUnsigned : Route::kSigned;
    case ColumnType::kDouble:
      return Route::kDouble;
    case ColumnType::kNewDecimal:
      return Route::kDecimal;
    case ColumnType::kDateTime2:
      return Route::kDateTime;
    case ColumnType::kDate:
    case ColumnType::kNewDate:
      return Route::kDate;
    case ColumnType::kVarchar:
    case ColumnType::kVarString:
    case ColumnType::kString:
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob:
      if (text_forms_[i] != TextForm::kAsIs) return Route::kGeneral;
      return binlog::IsBinaryCharset(c.charset) ? Route::kBytes : Route::kText;
    default:  // YEAR, FLOAT, TIME, TIMESTAMP, BIT, ENUM, SET, JSON, GEOMETRY, old temporal types
      return Route::kGeneral;
  }
}

// The common values without ConvertOne's reset and dispatch: what each kind sets there, set here
// on a value whose constant parts Init filled. False (nothing decided) for anything else, which
// ConvertOne then converts or refuses with its message.
bool SnapshotRowConverter::ConvertFast(size_t i, const FieldValue& f, binlog::ColumnValue* v) const {
  using Kind = ColumnValue::Kind;
  const Route route = routes_[i];
  if (route == Route::kGeneral) return false;
  if (f.kind == FieldKind::kNull) {
    v->kind = Kind::kNull;
    return true;
  }
  switch (route) {
    case Route::kSigned:
    case Route::kUnsigned:
      if (f.kind != FieldKind::kSigned && f.kind != FieldKind::kUnsigned) return false;
      // i64 and u64 share their bits: the value either way, as ConvertOne casts it.
      v->u64 = f.kind == FieldKind::kUnsigned ? f.u64 : static_cast<uint64_t>(f.i64);
      v->kind = route == Route::kSigned ? Kind::kSigned : Kind::kUnsigned;
      return true;
    case Route::kDouble:
      if (f.kind != FieldKind::kDouble) return false;
      v->kind = Kind::kDouble;
      v->f64 = f.f64;
      return true;
    case Route::kDecimal:
      if (f.kind != FieldKind::kBytes || !CanonicalDecimalText(f.bytes, columns_[i].precision, columns_[i].decimals)) {
        return false;
      }
      v->kind = Kind::kDecimalText;
      v->raw = f.bytes;
      return true;
    case Route::kText:
    case Route::kBytes:
      if (f.kind != FieldKind::kBytes) return false;
      v->kind = route == Route::kText ? Kind::kString : Kind::kBytes;
      v->raw = f.bytes;
      return true;
    case Route::kDateTime:
    case Route::kDate: {
      if (f.kind != FieldKind::kTime) return false;
      const TimeValue& t = f.time;
      if (t.month > 12 || t.day > 31 || t.hour > 23 || t.minute > 59 || t.second > 59 || t.microsecond > 999999 ||
          t.year > 9999) {
        return false;
      }
      v->kind = route == Route::kDate ? Kind::kDate : Kind::kDateTime;
      FillTemporal(t, v->kind, &v->temporal);
      // (Set every time: a value ConvertOne refused reset it, and the column may be read again.)
      v->fsp = route == Route::kDate || columns_[i].meta > 6 ? 0 : static_cast<uint8_t>(columns_[i].meta);
      return true;
    }
    case Route::kGeneral:
      break;
  }
  return false;
}

Status SnapshotRowConverter::ConvertOne(size_t i, const FieldValue& f, ColumnValue* v) {
  const ColumnInfo& c = columns_[i];
  const ColumnType type = binlog::EffectiveType(c);
  *v = ColumnValue{};
  v->type = type;
  if (f.kind == FieldKind::kNull) {
    v->kind = ColumnValue::Kind::kNull;
    return Status::OK();
  }
  auto expect = [&](FieldKind kind) { return f.kind == kind ? Status::OK() : Fail(i, "has an unexpected type", Printable(f)); };
  switch (type) {
    case ColumnType::kTiny:
    case ColumnType::kShort:
    case ColumnType::kInt24:
    case ColumnType::kLong:
    case ColumnType::kLongLong:
    case ColumnType::kYear:
      if (f.kind != FieldKind::kSigned && f.kind != FieldKind::kUnsigned) return expect(FieldKind::kSigned);
      if (c.is_unsigned && type != ColumnType::kYear) {
        v->kind = ColumnValue::Kind::kUnsigned;
        v->u64 = f.kind == FieldKind::kUnsigned ? f.u64 : static_cast<uint64_t>(f.i64);
      } else {
        v->kind = ColumnValue::Kind::kSigned;
        v->i64 = f.kind == FieldKind::kSigned ? f.i64 : static_cast<int64_t>(f.u64);
      }
      return Status::OK();
    case ColumnType::kFloat:
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kDouble));
      v->kind = ColumnValue::Kind::kFloat;
      v->f32 = static_cast<float>(f.f64);  // a FLOAT widened to double by the client: exact both ways
      return Status::OK();
    case ColumnType::kDouble:
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kDouble));
      v->kind = ColumnValue::Kind::kDouble;
      v->f64 = f.f64;
      return Status::OK();
    case ColumnType::kNewDecimal:
    case ColumnType::kDecimal: {
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kBytes));
      // The server's text is Canal's when it is canonical for the column: kept as it is,
      // instead of packed to binary and printed back (a tenth of a narrow row's cost).
      if (CanonicalDecimalText(f.bytes, c.precision, c.decimals)) {
        v->kind = ColumnValue::Kind::kDecimalText;
        v->raw = f.bytes;
        return Status::OK();
      }
      std::string& raw = scratch_[i];
      raw.clear();
      Status s = binlog::AppendDecimalBinary(f.bytes, c.precision, c.decimals, &raw);
      if (!s.ok()) return Fail(i, "cannot be packed: " + std::string(s.message()), Printable(f));
      v->kind = ColumnValue::Kind::kDecimal;
      v->raw = raw;
      return Status::OK();
    }
    case ColumnType::kBit: {
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kBytes));
      if (f.bytes.size() > 8) return Fail(i, "has more than 64 bits", Printable(f));
      uint64_t bits = 0;
      for (char b : f.bytes) bits = bits << 8 | static_cast<uint8_t>(b);
      v->kind = ColumnValue::Kind::kUnsigned;
      v->u64 = bits;
      return Status::OK();
    }
    case ColumnType::kEnum: {
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kBytes));
      const auto it = labels_[i].find(f.bytes);
      if (it == labels_[i].end() && !f.bytes.empty()) return Fail(i, "is none of the ENUM's labels", Printable(f));
      // '' that is no label: the invalid value, index 0, as the server stores it.
      v->kind = ColumnValue::Kind::kUnsigned;
      v->u64 = it == labels_[i].end() ? 0 : it->second + 1;
      return Status::OK();
    }
    case ColumnType::kSet: {
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kBytes));
      uint64_t mask = 0;
      std::string_view rest = f.bytes;
      while (!rest.empty()) {  // members never hold a comma
        const size_t comma = rest.find(',');
        const std::string_view member = rest.substr(0, comma);
        const auto it = labels_[i].find(member);
        if (it == labels_[i].end()) return Fail(i, "holds a member the SET does not have", Printable(f));
        mask |= uint64_t{1} << it->second;
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
      v->kind = ColumnValue::Kind::kUnsigned;
      v->u64 = mask;
      return Status::OK();
    }
    case ColumnType::kDate:
    case ColumnType::kNewDate:
    case ColumnType::kTime:
    case ColumnType::kTime2:
    case ColumnType::kDateTime:
    case ColumnType::kDateTime2:
    case ColumnType::kTimestamp:
    case ColumnType::kTimestamp2: {
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kTime));
      const TimeValue& t = f.time;
      const bool fractional = type == ColumnType::kTime2 || type == ColumnType::kDateTime2 ||
                              type == ColumnType::kTimestamp2 || binlog::IsOldTemporalColumn(c);
      v->fsp = fractional && c.meta <= 6 ? static_cast<uint8_t>(c.meta) : 0;
      if (t.month > 12 || t.day > 31 || t.minute > 59 || t.second > 59 || t.microsecond > 999999 ||
          t.year > 9999) {
        return Fail(i, "is not a valid date or time", Printable(f));
      }
      if (type == ColumnType::kTimestamp || type == ColumnType::kTimestamp2) {
        v->kind = ColumnValue::Kind::kTimestamp;
        // The session is UTC (ChunkReader::Open), so these fields are the stored UTC instant;
        // the zero timestamp is stored as 0.
        const bool zero = t.year == 0 && t.month == 0 && t.day == 0;
        if (!zero && (t.year < 1970 || t.month == 0 || t.day == 0)) {
          return Fail(i, "is not a TIMESTAMP the binlog can hold", Printable(f));
        }
        v->u64 = zero ? 0
                      : static_cast<uint64_t>(DaysFromCivil(t.year, t.month, t.day) * 86400 + t.hour * 3600 +
                                              t.minute * 60 + t.second);
        v->timestamp_micros = t.microsecond;
        return Status::OK();
      }
      v->kind = type == ColumnType::kDate || type == ColumnType::kNewDate ? ColumnValue::Kind::kDate
                : type == ColumnType::kTime || type == ColumnType::kTime2 ? ColumnValue::Kind::kTime
                                                                          : ColumnValue::Kind::kDateTime;
      FillTemporal(t, v->kind, &v->temporal);
      return Status::OK();
    }
    case ColumnType::kJson:
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kBytes));
      v->kind = ColumnValue::Kind::kJson;
      v->json_is_text = true;
      v->raw = f.bytes;
      return Status::OK();
    case ColumnType::kVarchar:
    case ColumnType::kVarString:
    case ColumnType::kString:
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob:
    case ColumnType::kGeometry:
      CANAL_RETURN_IF_ERROR(expect(FieldKind::kBytes));
      v->kind = type != ColumnType::kGeometry && !binlog::IsBinaryCharset(c.charset) ? ColumnValue::Kind::kString
                                                                                      : ColumnValue::Kind::kBytes;
      v->raw = f.bytes;
      if (text_forms_[i] != TextForm::kAsIs) {
        if (!ParseFixedBinary(text_forms_[i], f.bytes, &scratch_[i])) {
          return Fail(i, "is not an address or UUID of the column's type", Printable(f));
        }
        v->raw = scratch_[i];
      }
      return Status::OK();
    default:
      return Fail(i, "is of binlog type " + std::string(binlog::ColumnTypeName(type)) + ", which is not mapped",
                  Printable(f));
  }
}

Status SnapshotRowConverter::AppendValue(size_t i, const render::ValueFormatOptions& options, std::string* out) const {
  // Text arrived in utf8mb4 (the connection's charset), not in the column's.
  return render::AppendCanalValue(values_[i], text_columns_[i], options, out);
}

int SnapshotRowConverter::SqlType(size_t i) const { return render::CanalSqlTypeOf(columns_[i], values_[i]); }

std::string SnapshotRowConverter::MysqlType(size_t i, const render::ValueFormatOptions& options) const {
  return render::CanalMysqlType(columns_[i], options, integer_display_widths_);
}

Status SnapshotRowConverter::AppendKey(const ChunkKey& key, KeyEncoder* encoder) {
  for (size_t column : key.columns) {
    if (column >= values_.size()) return Status::InvalidArgument(table_ + ": a key column past the row");
    if (values_[column].is_null()) {
      encoder->AppendNull();
      continue;
    }
    std::string* out = encoder->BeginValue();
    CANAL_RETURN_IF_ERROR(AppendValue(column, {}, out));
    encoder->EndValue();
  }
  return Status::OK();
}

Status AppendStreamKey(const binlog::TableMap& table, std::span<const binlog::ColumnValue> values,
                       const ChunkKey& key, KeyEncoder* encoder) {
  for (size_t column : key.columns) {
    if (column >= values.size() || column >= table.columns.size() || !values[column].is_present()) {
      return Status::InvalidArgument("`" + table.db + "`.`" + table.table + "`: key column " +
                                     std::to_string(column + 1) + " is not in the row image");
    }
    if (values[column].is_null()) {
      encoder->AppendNull();
      continue;
    }
    CANAL_RETURN_IF_ERROR(render::AppendCanalValue(values[column], table.columns[column], {}, encoder->BeginValue()));
    encoder->EndValue();
  }
  return Status::OK();
}

}  // namespace canal::snapshot
