#include "canal/parser/binlog/table_map_decoder.h"

#include <atomic>
#include <string>
#include <vector>

#include "canal/parser/binlog/byte_reader.h"
#include "canal/parser/binlog/column_type.h"
#include "canal/parser/binlog/error_kinds.h"
#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {

namespace {

// Column count above which a TABLE_MAP is treated as corrupt (MySQL's limit is 4096).
constexpr uint64_t kMaxColumns = 1u << 16;

Status ReadColumnMeta(ByteReader* r, ColumnInfo* c, size_t index) {
  auto fail = [&] { return Status::Truncated("metadata of column " + std::to_string(index + 1) + " truncated"); };
  uint8_t b0 = 0, b1 = 0;
  c->real_type = c->type;
  switch (c->type) {
    case ColumnType::kFloat:
    case ColumnType::kDouble:
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob:
    case ColumnType::kGeometry:
    case ColumnType::kJson:
    case ColumnType::kVector:
    case ColumnType::kTimestamp2:
    case ColumnType::kDateTime2:
    case ColumnType::kTime2:
      if (!r->ReadU8(&b0)) return fail();
      c->meta = b0;
      if (c->type == ColumnType::kTimestamp2 || c->type == ColumnType::kDateTime2 || c->type == ColumnType::kTime2) {
        if (b0 > 6) return Status::Corruption("column " + std::to_string(index + 1) + " has fractional precision " + std::to_string(b0));
      }
      break;
    case ColumnType::kVarchar:
    case ColumnType::kVarString: {
      uint16_t m = 0;
      if (!r->ReadLE(&m)) return fail();
      c->meta = m;
      c->max_length = m;
      break;
    }
    case ColumnType::kBit:
      if (!r->ReadU8(&b0) || !r->ReadU8(&b1)) return fail();
      c->meta = static_cast<uint16_t>(b1 << 8 | b0);
      c->max_length = uint32_t{b1} * 8 + b0;  // bits
      break;
    case ColumnType::kNewDecimal:
      if (!r->ReadU8(&b0) || !r->ReadU8(&b1)) return fail();
      c->meta = static_cast<uint16_t>(b0 << 8 | b1);
      c->precision = b0;
      c->decimals = b1;
      if (b0 == 0 || b0 > 65 || b1 > 38 || b1 > b0) {  // MariaDB allows scale 38
        return Status::Corruption("column " + std::to_string(index + 1) + " has DECIMAL(" + std::to_string(b0) +
                                  "," + std::to_string(b1) + ")");
      }
      break;
    case ColumnType::kString:
    case ColumnType::kEnum:
    case ColumnType::kSet: {
      if (!r->ReadU8(&b0) || !r->ReadU8(&b1)) return fail();
      c->meta = static_cast<uint16_t>(b0 << 8 | b1);
      // CHAR lengths over 255 fold two extra length bits into the type byte
      // (complemented, so that real ENUM/SET type bytes stay recognisable).
      if ((b0 & 0x30) != 0x30) {
        c->real_type = static_cast<ColumnType>(b0 | 0x30);
        c->max_length = b1 | (static_cast<uint32_t>((b0 & 0x30) ^ 0x30) << 4);
      } else {
        c->real_type = static_cast<ColumnType>(b0);
        c->max_length = b1;
      }
      if (c->real_type != ColumnType::kString && c->real_type != ColumnType::kEnum &&
          c->real_type != ColumnType::kSet) {
        return Status::Corruption("column " + std::to_string(index + 1) + " of type STRING has real type " +
                                  std::to_string(static_cast<int>(c->real_type)));
      }
      break;
    }
    case ColumnType::kTiny:
    case ColumnType::kShort:
    case ColumnType::kLong:
    case ColumnType::kNull:
    case ColumnType::kTimestamp:
    case ColumnType::kLongLong:
    case ColumnType::kInt24:
    case ColumnType::kDate:
    case ColumnType::kTime:
    case ColumnType::kDateTime:
    case ColumnType::kYear:
      c->meta = 0;
      break;
    default:
      return Status::NotSupported("column " + std::to_string(index + 1) + " has type code " +
                                  std::to_string(static_cast<int>(c->type)) + ", which no supported server writes");
  }
  return Status::OK();
}

// Bitmaps in optional metadata are MSB-first, unlike rows-event bitmaps.
bool MsbBit(std::string_view bits, size_t i) {
  return (static_cast<uint8_t>(bits[i / 8]) >> (7 - i % 8)) & 1;
}

Status ReadStringList(ByteReader* r, std::vector<std::string>* out) {
  uint64_t count = 0;
  if (!r->ReadPackedInt(&count) || count > r->remaining()) return Status::Corruption("label count out of range");
  out->clear();
  out->reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t len = 0;
    std::string_view s;
    if (!r->ReadPackedInt(&len) || !r->ReadBytes(len, &s)) return Status::Truncated("label truncated");
    out->emplace_back(s);
  }
  return Status::OK();
}

template <typename Pred>
std::vector<ColumnInfo*> Select(TableMap* t, Pred pred) {
  std::vector<ColumnInfo*> v;
  for (auto& c : t->columns) {
    if (pred(c)) v.push_back(&c);
  }
  return v;
}

Status ApplyDefaultCharset(ByteReader r, const std::vector<ColumnInfo*>& cols) {
  uint64_t def = 0;
  if (!r.ReadPackedInt(&def)) return Status::Truncated("default charset truncated");
  for (auto* c : cols) c->charset = static_cast<uint32_t>(def);
  while (!r.empty()) {
    uint64_t idx = 0, cs = 0;
    if (!r.ReadPackedInt(&idx) || !r.ReadPackedInt(&cs)) return Status::Truncated("charset override truncated");
    if (idx >= cols.size()) return Status::Corruption("charset override for column #" + std::to_string(idx) + " out of range");
    cols[idx]->charset = static_cast<uint32_t>(cs);
  }
  return Status::OK();
}

Status ApplyColumnCharsets(ByteReader r, const std::vector<ColumnInfo*>& cols) {
  for (auto* c : cols) {
    uint64_t cs = 0;
    if (!r.ReadPackedInt(&cs)) return Status::Truncated("column charset list shorter than the columns");
    c->charset = static_cast<uint32_t>(cs);
  }
  return Status::OK();
}

Status DecodeOptionalMetadata(ByteReader r, ServerFlavor flavor, TableMap* t) {
  const size_t n = t->columns.size();
  auto numeric = [flavor](const ColumnInfo& c) { return IsNumericColumn(c, flavor); };
  auto character = [flavor](const ColumnInfo& c) { return IsCharacterColumn(c, flavor); };
  while (!r.empty()) {
    uint8_t type = 0;
    uint64_t len = 0;
    std::string_view value;
    if (!r.ReadU8(&type) || !r.ReadPackedInt(&len) || !r.ReadBytes(len, &value)) {
      return Status::Truncated("optional metadata field truncated");
    }
    if (type < 32) t->optional_metadata_kinds |= 1u << type;
    ByteReader v(value);
    auto ctx = [&](Status s) { return s.WithContext("optional metadata " + std::to_string(type)); };
    switch (static_cast<OptionalMetadataType>(type)) {
      case OptionalMetadataType::kSignedness: {
        auto cols = Select(t, numeric);
        if (value.size() * 8 < cols.size()) return ctx(Status::Truncated("signedness bitmap too short"));
        for (size_t i = 0; i < cols.size(); ++i) {
          cols[i]->is_unsigned = MsbBit(value, i);
          cols[i]->signedness_known = true;
        }
        break;
      }
      case OptionalMetadataType::kDefaultCharset: {
        Status s = ApplyDefaultCharset(v, Select(t, character));
        if (!s.ok()) return ctx(s);
        break;
      }
      case OptionalMetadataType::kColumnCharset: {
        Status s = ApplyColumnCharsets(v, Select(t, character));
        if (!s.ok()) return ctx(s);
        break;
      }
      case OptionalMetadataType::kEnumAndSetDefaultCharset: {
        Status s = ApplyDefaultCharset(v, Select(t, IsEnumOrSetColumn));
        if (!s.ok()) return ctx(s);
        break;
      }
      case OptionalMetadataType::kEnumAndSetColumnCharset: {
        Status s = ApplyColumnCharsets(v, Select(t, IsEnumOrSetColumn));
        if (!s.ok()) return ctx(s);
        break;
      }
      case OptionalMetadataType::kColumnName: {
        for (size_t i = 0; i < n; ++i) {
          uint64_t l = 0;
          std::string_view name;
          if (!v.ReadPackedInt(&l) || !v.ReadBytes(l, &name)) return ctx(Status::Truncated("column name truncated"));
          t->columns[i].name.assign(name);
        }
        t->names_known = true;
        break;
      }
      case OptionalMetadataType::kSetStrValue:
      case OptionalMetadataType::kEnumStrValue: {
        ColumnType want = type == 5 ? ColumnType::kSet : ColumnType::kEnum;
        for (auto* c : Select(t, [want](const ColumnInfo& c) { return c.real_type == want; })) {
          Status s = ReadStringList(&v, &c->enum_or_set_labels);
          if (!s.ok()) return ctx(s);
        }
        break;
      }
      case OptionalMetadataType::kGeometryType: {
        for (auto* c : Select(t, [](const ColumnInfo& c) { return c.type == ColumnType::kGeometry; })) {
          uint64_t g = 0;
          if (!v.ReadPackedInt(&g)) return ctx(Status::Truncated("geometry type truncated"));
          c->geometry_type = static_cast<uint8_t>(g);
        }
        break;
      }
      case OptionalMetadataType::kSimplePrimaryKey: {
        while (!v.empty()) {
          uint64_t idx = 0;
          if (!v.ReadPackedInt(&idx) || idx >= n) return ctx(Status::Corruption("primary key column out of range"));
          t->columns[idx].is_key = true;
        }
        t->keys_known = true;
        break;
      }
      case OptionalMetadataType::kPrimaryKeyWithPrefix: {
        while (!v.empty()) {
          uint64_t idx = 0, prefix = 0;
          if (!v.ReadPackedInt(&idx) || !v.ReadPackedInt(&prefix) || idx >= n) {
            return ctx(Status::Corruption("primary key column out of range"));
          }
          t->columns[idx].is_key = true;
        }
        t->keys_known = true;
        break;
      }
      case OptionalMetadataType::kColumnVisibility: {
        if (value.size() * 8 < n) return ctx(Status::Truncated("visibility bitmap too short"));
        for (size_t i = 0; i < n; ++i) t->columns[i].visible = MsbBit(value, i);
        break;
      }
      case OptionalMetadataType::kVectorDimensionality: {
        for (auto* c : Select(t, [](const ColumnInfo& c) { return c.type == ColumnType::kVector; })) {
          uint64_t d = 0;
          if (!v.ReadPackedInt(&d)) return ctx(Status::Truncated("vector dimensionality truncated"));
          c->vector_dimensions = static_cast<uint32_t>(d);
        }
        break;
      }
      default:
        break;  // newer kinds are self-delimiting; skipping them loses nothing we use
    }
  }
  // With FULL metadata a table without a primary key has no key field at all.
  if (t->names_known) t->keys_known = true;
  return Status::OK();
}

}  // namespace

// Which columns the SIGNEDNESS bitmap and the charset lists number differ by
// server, and neither follows the other's documentation. Read off MariaDB
// 10.11's TABLE_MAPs (tests/integration/optional_metadata_live_test.cc probes
// every type): MariaDB gives every Field_num a signedness bit, YEAR included
// (its YEAR is numeric, and always unsigned), and lists a charset for every
// column that has one, GEOMETRY (binary) included; MySQL does neither.
// ENUM and SET are in neither list on either server (they have lists of
// their own). BIT has no signedness bit on either.
bool IsNumericColumn(const ColumnInfo& c, ServerFlavor flavor) {
  switch (c.type) {
    case ColumnType::kTiny:
    case ColumnType::kShort:
    case ColumnType::kInt24:
    case ColumnType::kLong:
    case ColumnType::kLongLong:
    case ColumnType::kFloat:
    case ColumnType::kDouble:
    case ColumnType::kNewDecimal:
    case ColumnType::kDecimal:
      return true;
    case ColumnType::kYear:
      return flavor == ServerFlavor::kMariaDB;
    default:
      return false;
  }
}

bool IsCharacterColumn(const ColumnInfo& c, ServerFlavor flavor) {
  switch (c.type) {
    case ColumnType::kVarchar:
    case ColumnType::kVarString:
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob:
    case ColumnType::kVector:  // MySQL 9 counts VECTOR (binary charset) among them
      return true;
    case ColumnType::kGeometry:
      return flavor == ServerFlavor::kMariaDB;
    case ColumnType::kString:
      return c.real_type == ColumnType::kString;
    default:
      return false;
  }
}

bool IsEnumOrSetColumn(const ColumnInfo& c) {
  return c.real_type == ColumnType::kEnum || c.real_type == ColumnType::kSet;
}

void TableLayoutId::Renew() {
  static std::atomic<uint64_t> next{0};
  value_ = next.fetch_add(1, std::memory_order_relaxed) + 1;
}

Status DecodeTableMap(std::string_view body, uint8_t post_header_length, ServerFlavor flavor, TableMap* t) {
  t->layout_id.Renew();  // whatever follows changes the columns
  ByteReader r(body);
  size_t id_len = post_header_length == 6 ? 4 : 6;
  if (!r.ReadUIntLE(id_len, &t->table_id) || !r.ReadLE(&t->flags)) return Status::Truncated("post-header truncated");
  if (post_header_length > id_len + 2 && !r.Skip(post_header_length - id_len - 2)) {
    return Status::Truncated("post-header truncated");
  }
  uint8_t len = 0;
  std::string_view s;
  if (!r.ReadU8(&len) || !r.ReadBytes(len, &s) || !r.Skip(1)) return Status::Truncated("database name truncated");
  t->db.assign(s);
  if (!r.ReadU8(&len) || !r.ReadBytes(len, &s) || !r.Skip(1)) return Status::Truncated("table name truncated");
  t->table.assign(s);
  uint64_t ncols = 0;
  if (!r.ReadPackedInt(&ncols)) return Status::Truncated("column count truncated");
  if (ncols == 0 || ncols > kMaxColumns || ncols > r.remaining()) {
    return Status::Corruption("column count " + std::to_string(ncols) + " out of range");
  }
  const uint8_t* types = nullptr;
  if (!r.ReadBytes(ncols, &types)) return Status::Truncated("column types truncated");
  t->columns.assign(ncols, ColumnInfo{});
  for (size_t i = 0; i < ncols; ++i) {
    t->columns[i].type = static_cast<ColumnType>(types[i]);
    if (t->columns[i].type == ColumnType::kJson) t->has_json = true;
  }
  if (r.empty()) {
    // Pre-GA 5.1 trees wrote no metadata block and no null bitmap: every column
    // is nullable and CHAR lengths fit one byte.
    for (auto& c : t->columns) {
      c.real_type = c.type;
      if (c.type == ColumnType::kString) c.max_length = 255;
      if (ColumnMetaLength(c.type) > 0 && c.type != ColumnType::kString) {
        return Status::Corruption("TABLE_MAP without metadata block has a column of type " +
                                  std::string(ColumnTypeName(c.type)) + ", which needs metadata");
      }
    }
    for (size_t i = 0; i < ncols; ++i) t->columns[i].name = "@" + std::to_string(i + 1);
    return Status::OK();
  }
  uint64_t meta_len = 0;
  std::string_view meta;
  if (!r.ReadPackedInt(&meta_len) || !r.ReadBytes(meta_len, &meta)) return Status::Truncated("metadata block truncated");
  ByteReader mr(meta);
  for (size_t i = 0; i < ncols; ++i) CANAL_RETURN_IF_ERROR(ReadColumnMeta(&mr, &t->columns[i], i));
  if (!mr.empty()) {
    return Status::Corruption("metadata block has " + std::to_string(mr.remaining()) + " byte(s) left over");
  }
  std::string_view nulls;
  if (!r.ReadBytes((ncols + 7) / 8, &nulls)) return Status::Truncated("null bitmap truncated");
  for (size_t i = 0; i < ncols; ++i) {
    t->columns[i].nullable = (static_cast<uint8_t>(nulls[i / 8]) >> (i % 8)) & 1;
  }
  CANAL_RETURN_IF_ERROR(DecodeOptionalMetadata(r, flavor, t));
  if (!t->names_known) {
    for (size_t i = 0; i < ncols; ++i) t->columns[i].name = "@" + std::to_string(i + 1);
  }
  return Status::OK();
}

namespace {

// Type families for checking a schema's DATA_TYPE against a binlog column type.
// Within a family the check is permissive (information_schema shows today's
// schema, and e.g. a DATETIME's precision or a VARCHAR's length may have
// changed); integers are compared by exact width, because a TINYINT read as an
// INT (or the other way) is a different column, not a different size.
enum class SchemaTypeFamily : uint8_t {
  kUnknown,  // empty or unrecognised DATA_TYPE: nothing to check against
  kTiny, kShort, kInt24, kLong, kLongLong,  // integer widths
  kYear, kDecimal, kFloating, kTemporal, kBit,
  kString,  // char/varchar/text/blob/binary, and MariaDB types stored as strings
  kEnumSet, kJson, kGeometry, kVector,
};

SchemaTypeFamily FamilyOfDataType(std::string_view t) {
  using F = SchemaTypeFamily;
  struct Entry {
    std::string_view name;
    F family;
  };
  static constexpr Entry kTable[] = {
      {"tinyint", F::kTiny}, {"bool", F::kTiny}, {"boolean", F::kTiny}, {"smallint", F::kShort},
      {"mediumint", F::kInt24}, {"int", F::kLong}, {"integer", F::kLong}, {"bigint", F::kLongLong},
      {"year", F::kYear}, {"decimal", F::kDecimal}, {"numeric", F::kDecimal}, {"fixed", F::kDecimal},
      {"float", F::kFloating}, {"double", F::kFloating}, {"real", F::kFloating},
      {"double precision", F::kFloating}, {"date", F::kTemporal}, {"time", F::kTemporal},
      {"datetime", F::kTemporal}, {"timestamp", F::kTemporal}, {"bit", F::kBit}, {"char", F::kString},
      {"varchar", F::kString}, {"binary", F::kString}, {"varbinary", F::kString}, {"tinytext", F::kString},
      {"text", F::kString}, {"mediumtext", F::kString}, {"longtext", F::kString}, {"tinyblob", F::kString},
      {"blob", F::kString}, {"mediumblob", F::kString}, {"longblob", F::kString}, {"uuid", F::kString},
      {"inet4", F::kString}, {"inet6", F::kString}, {"enum", F::kEnumSet}, {"set", F::kEnumSet},
      {"json", F::kJson}, {"geometry", F::kGeometry}, {"point", F::kGeometry}, {"linestring", F::kGeometry},
      {"polygon", F::kGeometry}, {"multipoint", F::kGeometry}, {"multilinestring", F::kGeometry},
      {"multipolygon", F::kGeometry}, {"geometrycollection", F::kGeometry}, {"geomcollection", F::kGeometry},
      {"vector", F::kVector},
  };
  std::string lower(t);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  for (const Entry& e : kTable) {
    if (e.name == lower) return e.family;
  }
  return F::kUnknown;
}

// Whether a column the schema calls `family` can be logged as binlog column `c`.
bool SchemaTypeFitsBinlogColumn(SchemaTypeFamily family, const ColumnInfo& c) {
  using F = SchemaTypeFamily;
  const ColumnType t = c.real_type == ColumnType::kNull ? c.type : c.real_type;
  const bool string_type = t == ColumnType::kString || t == ColumnType::kVarchar || t == ColumnType::kVarString ||
                           t == ColumnType::kTinyBlob || t == ColumnType::kMediumBlob ||
                           t == ColumnType::kLongBlob || t == ColumnType::kBlob;
  switch (family) {
    case F::kUnknown: return true;
    case F::kTiny: return t == ColumnType::kTiny;
    case F::kShort: return t == ColumnType::kShort;
    case F::kInt24: return t == ColumnType::kInt24;
    case F::kLong: return t == ColumnType::kLong;
    case F::kLongLong: return t == ColumnType::kLongLong;
    case F::kYear: return t == ColumnType::kYear;
    case F::kDecimal: return t == ColumnType::kNewDecimal || t == ColumnType::kDecimal;
    case F::kFloating: return t == ColumnType::kFloat || t == ColumnType::kDouble;
    case F::kTemporal:
      return t == ColumnType::kDate || t == ColumnType::kNewDate || t == ColumnType::kTime ||
             t == ColumnType::kTime2 || t == ColumnType::kDateTime || t == ColumnType::kDateTime2 ||
             t == ColumnType::kTimestamp || t == ColumnType::kTimestamp2;
    case F::kBit: return t == ColumnType::kBit;
    case F::kString: return string_type;
    case F::kEnumSet: return t == ColumnType::kEnum || t == ColumnType::kSet;
    // MySQL logs JSON as JSON; a server that stores it as text logs a blob.
    case F::kJson: return t == ColumnType::kJson || t == ColumnType::kBlob || t == ColumnType::kLongBlob;
    case F::kGeometry: return t == ColumnType::kGeometry;
    // MySQL 9 has a VECTOR type; MariaDB stores vectors as binary strings.
    case F::kVector: return t == ColumnType::kVector || string_type;
  }
  return true;
}

}  // namespace

Status ApplySchemaProvider(TableSchemaProvider* provider, TableMap* t) {
  std::vector<SchemaColumn> cols;
  Status s = provider->GetColumns(t->db, t->table, &cols);
  if (s.IsNotFound()) return Status::OK();  // keep positional names; the output says so
  if (!s.ok()) return s.WithContext("schema of `" + t->db + "`.`" + t->table + "`");
  if (cols.size() != t->columns.size()) {
    return Status::Corruption("schema of `" + t->db + "`.`" + t->table + "` has " + std::to_string(cols.size()) +
                              " columns but the binlog's TABLE_MAP has " + std::to_string(t->columns.size()) +
                              "; refusing to label values with the wrong columns")
        .WithSubcode(kErrorSchemaMismatch);
  }
  // Every column is checked before any is labelled: a mismatch leaves the table
  // map as the binlog described it.
  for (size_t i = 0; i < cols.size(); ++i) {
    const ColumnInfo& c = t->columns[i];
    if (!SchemaTypeFitsBinlogColumn(FamilyOfDataType(cols[i].data_type), c)) {
      const ColumnType bt = c.real_type == ColumnType::kNull ? c.type : c.real_type;
      return Status::Corruption("schema of `" + t->db + "`.`" + t->table + "` says column " +
                                std::to_string(i + 1) + " `" + cols[i].name + "` is " + cols[i].data_type +
                                " but the binlog's TABLE_MAP has type " + std::string(ColumnTypeName(bt)) +
                                " there (the table changed since the event was written?); refusing to label "
                                "values with the wrong columns")
          .WithSubcode(kErrorSchemaMismatch);
    }
  }
  for (size_t i = 0; i < cols.size(); ++i) {
    ColumnInfo& c = t->columns[i];
    c.name = cols[i].name;
    c.is_key = cols[i].is_key;
    if (!c.signedness_known) {
      c.is_unsigned = cols[i].is_unsigned;
      c.signedness_known = true;
    }
    // MINIMAL metadata has no charsets: the schema's (history or
    // information_schema) let text convert to UTF-8.
    if (c.charset == 0 && !cols[i].charset.empty()) c.charset = DefaultCollationOfCharset(cols[i].charset);
    if (c.enum_or_set_labels.empty()) c.enum_or_set_labels = cols[i].enum_or_set_labels;
    c.column_type = t->integer_display_widths ? WithDefaultDisplayWidth(cols[i].column_type) : cols[i].column_type;
  }
  ApplySchemaTemporalPrecision(cols, t);
  t->names_known = true;
  t->keys_known = true;
  t->layout_id.Renew();
  return Status::OK();
}

}  // namespace canal::binlog
