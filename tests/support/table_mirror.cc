#include "support/table_mirror.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

namespace canal::testing {
namespace {

namespace entry = canal::entry;
using Columns = google::protobuf::RepeatedPtrField<entry::Column>;

// How a column's Canal text turns back into the stored value.
enum class ValueKind {
  kNumber,  // integers, DECIMAL, BIT, ENUM (index), SET (bitmask), YEAR: an SQL number
  kFloat,   // FLOAT: text read as a double, then rounded to a float, as the source stored it
  kBinary,  // binary strings and GEOMETRY: ISO-8859-1 text, one char per byte
  kText,    // character strings and JSON: UTF-8, compared byte for byte when matching a whole row
  kOther,   // DOUBLE, temporal kinds, anything unknown: the text, converted by the server
};

// The type's name in Column.mysqlType ("int(11) unsigned" -> "int").
std::string BaseType(std::string_view mysql_type) {
  std::string base;
  for (char c : mysql_type) {
    if (c == '(' || c == ' ') break;
    base += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return base;
}

bool OneOf(const std::string& s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

ValueKind KindOf(const entry::Column& c) {
  const std::string base = BaseType(c.mysqltype());
  if (base.empty()) {
    // No mysqlType: java.sql.Types BINARY, VARBINARY, LONGVARBINARY, BLOB are bytes.
    const int t = c.sqltype();
    return t == -2 || t == -3 || t == -4 || t == 2004 ? ValueKind::kBinary : ValueKind::kOther;
  }
  if (OneOf(base, {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric", "bit",
                   "enum", "set", "year", "bool", "boolean"})) {
    return ValueKind::kNumber;
  }
  if (base == "float") return ValueKind::kFloat;
  if (OneOf(base, {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point",
                   "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
                   "geometrycollection"})) {
    return ValueKind::kBinary;
  }
  if (OneOf(base, {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "json"})) return ValueKind::kText;
  return ValueKind::kOther;
}

bool IsSqlNumber(std::string_view s) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  const size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == int_start) return false;
  if (i == s.size()) return true;
  if (s[i] != '.') return false;
  const size_t frac_start = ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i == s.size() && i > frac_start;
}

// The bytes of ISO-8859-1 text (each char U+0000..U+00FF, UTF-8 encoded, is
// one byte); false when a char is past U+00FF or the UTF-8 is broken.
bool Latin1Bytes(std::string_view text, std::string* bytes) {
  bytes->clear();
  bytes->reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      bytes->push_back(static_cast<char>(b));
    } else if ((b == 0xC2 || b == 0xC3) && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
      bytes->push_back(static_cast<char>(((b & 0x03) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3F)));
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

std::string Utf8Literal(std::string_view text) { return "_utf8mb4 X'" + HexDigits(text) + "'"; }

// The SQL expression of a column's value.
Status Literal(const entry::Column& c, std::string* out) {
  if (client::IsNull(c)) {
    *out = "NULL";
    return Status::OK();
  }
  const std::string& v = c.value();
  switch (KindOf(c)) {
    case ValueKind::kNumber:
      if (!IsSqlNumber(v)) {
        return Status::InvalidArgument("column " + c.name() + " (" + c.mysqltype() + "): '" + v + "' is not a number");
      }
      *out = v;
      return Status::OK();
    case ValueKind::kFloat:
      *out = "CAST(" + Utf8Literal(v) + " AS FLOAT)";
      return Status::OK();
    case ValueKind::kBinary: {
      std::string bytes;
      if (!Latin1Bytes(v, &bytes)) {
        return Status::InvalidArgument("column " + c.name() + " (" + c.mysqltype() +
                                       "): value is not ISO-8859-1 text (a char past U+00FF)");
      }
      *out = "X'" + HexDigits(bytes) + "'";
      return Status::OK();
    }
    case ValueKind::kText:
    case ValueKind::kOther:
      *out = Utf8Literal(v);
      return Status::OK();
  }
  return Status::InvalidArgument("unknown value kind");
}

// "`c` = value" for every column, joined by `separator`.
Status Assignments(const Columns& columns, bool skip_keys, std::string_view separator, std::string* out) {
  out->clear();
  std::string literal;
  for (const entry::Column& c : columns) {
    if (skip_keys && c.iskey()) continue;
    CANAL_RETURN_IF_ERROR(Literal(c, &literal));
    if (!out->empty()) *out += separator;
    *out += QuoteIdentifier(c.name()) + " = " + literal;
  }
  return Status::OK();
}

// A condition that holds for the row with these values: the key columns
// (`whole_row` false; compared by the column's collation, as the key is
// unique by it) or every column (`whole_row` true; text compared byte for
// byte, so "a" finds "a", not "A" or "a ").
Status Match(const Columns& columns, bool whole_row, std::string* out) {
  out->clear();
  std::string literal;
  for (const entry::Column& c : columns) {
    if (!whole_row && !c.iskey()) continue;
    CANAL_RETURN_IF_ERROR(Literal(c, &literal));
    if (!out->empty()) *out += " AND ";
    const std::string name = QuoteIdentifier(c.name());
    if (client::IsNull(c)) {
      *out += name + " IS NULL";
    } else if (whole_row && KindOf(c) == ValueKind::kText) {
      *out += "CONVERT(" + name + " USING utf8mb4) COLLATE utf8mb4_nopad_bin <=> " + literal +
              " COLLATE utf8mb4_nopad_bin";
    } else {
      *out += name + " <=> " + literal;
    }
  }
  if (out->empty()) *out = "TRUE";  // no columns: never for a row image
  return Status::OK();
}

bool HasKey(const Columns& columns) {
  return std::any_of(columns.begin(), columns.end(), [](const entry::Column& c) { return c.iskey(); });
}

// The key columns' values (or the whole row's, without a key), for telling
// the rows of a table apart.
std::string KeyText(const Columns& columns) {
  const bool keyed = HasKey(columns);
  std::string key;
  for (const entry::Column& c : columns) {
    if (keyed && !c.iskey()) continue;
    key += c.name();
    key += client::IsNull(c) ? std::string_view("\x01N", 2) : std::string_view("\x01V", 2);
    if (!client::IsNull(c)) key += c.value();
    key += '\x02';
  }
  return key;
}

// Whether a key column differs between the before and the after image.
bool KeyChanged(const Columns& before, const Columns& after) {
  for (const entry::Column& b : before) {
    if (!b.iskey()) continue;
    const auto a = std::find_if(after.begin(), after.end(), [&](const entry::Column& c) { return c.name() == b.name(); });
    if (a == after.end()) continue;  // not in the after image: unchanged (never in a FULL image)
    if (client::IsNull(*a) != client::IsNull(b) || a->value() != b.value()) return true;
  }
  return false;
}

std::string ColumnList(const Columns& columns) {
  std::string names;
  for (const entry::Column& c : columns) names += (names.empty() ? "" : ", ") + QuoteIdentifier(c.name());
  return names;
}

Status Replace(const std::string& table, const Columns& columns, std::string* sql) {
  std::string values, literal;
  for (const entry::Column& c : columns) {
    CANAL_RETURN_IF_ERROR(Literal(c, &literal));
    values += (values.empty() ? "" : ", ") + literal;
  }
  *sql = "REPLACE INTO " + table + " (" + ColumnList(columns) + ") VALUES (" + values + ")";
  return Status::OK();
}

std::string Where(const entry::Header& h) {
  return "entry " + h.logfilename() + ":" + std::to_string(h.logfileoffset()) + " (" + h.schemaname() + "." +
         h.tablename() + ")";
}

}  // namespace

bool IsSnapshot(const entry::Header& h) {
  return std::any_of(h.props().begin(), h.props().end(),
                     [](const entry::Pair& p) { return p.key() == "snapshot" && p.value() == "true"; });
}

std::string MirrorCounts::ToString() const {
  return "inserts=" + std::to_string(inserts) + " updates=" + std::to_string(updates) + " (key changes " +
         std::to_string(key_updates) + ") deletes=" + std::to_string(deletes) +
         " snapshot rows=" + std::to_string(snapshot_rows) + " (repeats " + std::to_string(snapshot_repeats) +
         ") ddl=" + std::to_string(ddls) + " ignored=" + std::to_string(ignored) +
         " missed updates=" + std::to_string(missed_updates) + " deletes=" + std::to_string(missed_deletes);
}

TableMirror::TableMirror(std::string socket) : socket_(std::move(socket)) {}

Status TableMirror::Connect() {
  CANAL_RETURN_IF_ERROR(session_.Connect(socket_));
  // UTC: canal-server's TIMESTAMP text (timestamp offset 0). Strict, so a
  // value the mirror cannot take fails instead of being cut, but without
  // NO_ZERO_DATE / NO_ZERO_IN_DATE, which the source's default allows too;
  // 0 into an AUTO_INCREMENT column stays 0. No foreign key checks: a
  // snapshot need not deliver parents first. No binlog: the mirror is an end.
  for (const char* sql : {"SET SESSION time_zone = '+00:00'",
                          "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION'",
                          "SET SESSION foreign_key_checks = 0", "SET SESSION sql_log_bin = 0"}) {
    CANAL_RETURN_IF_ERROR(session_.Execute(sql));
  }
  return Status::OK();
}

Status TableMirror::Run(const std::string& sql, uint64_t* affected) { return session_.Execute(sql, affected); }

Status TableMirror::Apply(client::Message& batch) {
  Status s = batch.ParseEntries();
  if (!s.ok()) return s.WithContext("batch " + std::to_string(batch.batch_id()));
  CANAL_RETURN_IF_ERROR(Run("START TRANSACTION"));
  in_batch_ = true;
  for (const entry::Entry& e : batch.entries()) {
    s = ApplyEntry(e);
    if (!s.ok()) {
      in_batch_ = false;
      (void)Run("ROLLBACK");  // the error to report is s
      return s.WithContext("batch " + std::to_string(batch.batch_id()));
    }
  }
  in_batch_ = false;
  return Run("COMMIT");
}

Status TableMirror::Apply(const entry::Entry& e) { return ApplyEntry(e); }

Status TableMirror::ApplyEntry(const entry::Entry& e) {
  ++counts_.entries;
  if (client::EntryTypeOf(e) != entry::ROWDATA) {
    ++counts_.ignored;
    return Status::OK();
  }
  const entry::Header& h = e.header();
  entry::RowChange change;
  if (!change.ParseFromString(e.storevalue())) return Status::Corruption(Where(h) + ": RowChange does not parse");

  if (client::IsDdl(change)) {
    const std::string& schema = change.ddlschemaname().empty() ? h.schemaname() : change.ddlschemaname();
    // A schema that does not exist yet (CREATE DATABASE's own) cannot be the
    // default; the statement names it then.
    if (!schema.empty()) (void)session_.SelectDb(schema);
    Status s = Run(change.sql());
    if (!s.ok()) return s.WithContext(Where(h) + " DDL");
    ++counts_.ddls;
    if (in_batch_) return Run("START TRANSACTION");  // the DDL committed the batch's transaction
    return Status::OK();
  }
  const entry::EventType type = client::EventTypeOf(change);
  if (type != entry::INSERT && type != entry::UPDATE && type != entry::DELETE) {
    ++counts_.ignored;
    return Status::OK();
  }

  const std::string table = QualifiedName(h.schemaname(), h.tablename());
  const bool snapshot = IsSnapshot(h);
  std::string sql, set, where;
  int index = 0;
  for (const entry::RowData& row : change.rowdatas()) {
    const std::string at = Where(h) + " " + client::EventTypeName(type) + " row " + std::to_string(index++);
    Status s;
    if (snapshot || type == entry::INSERT) {
      const Columns& after = row.aftercolumns();
      if (snapshot) {
        ++counts_.snapshot_rows;
        if (!snapshot_keys_.insert(table + '\0' + KeyText(after)).second) ++counts_.snapshot_repeats;
      } else {
        ++counts_.inserts;
      }
      s = Replace(table, after, &sql);
      if (s.ok()) s = Run(sql);
    } else if (type == entry::UPDATE) {
      const Columns& before = row.beforecolumns();
      const Columns& after = row.aftercolumns();
      ++counts_.updates;
      if (!HasKey(before)) {
        s = Assignments(after, false, ", ", &set);
        if (s.ok()) s = Match(before, true, &where);
        if (s.ok()) s = Run("UPDATE " + table + " SET " + set + " WHERE " + where + " LIMIT 1");
      } else if (KeyChanged(before, after)) {
        ++counts_.key_updates;
        uint64_t deleted = 0;
        s = Match(before, false, &where);
        if (s.ok()) s = Run("DELETE FROM " + table + " WHERE " + where, &deleted);
        if (s.ok() && deleted == 0) ++counts_.missed_updates;
        if (s.ok()) s = Replace(table, after, &sql);
        if (s.ok()) s = Run(sql);
      } else {
        uint64_t matched = 0;
        s = Assignments(after, true, ", ", &set);
        if (s.ok()) s = Match(before, false, &where);
        if (s.ok() && !set.empty()) s = Run("UPDATE " + table + " SET " + set + " WHERE " + where, &matched);
        if (s.ok() && !set.empty() && matched == 0) {
          // The row is not here yet: a snapshot leaves a row the stream changed after the chunk's
          // point to the stream, whose full after image is the row (docs/snapshot.md), so an
          // update is an upsert of it.
          ++counts_.missed_updates;
          s = Replace(table, after, &sql);
          if (s.ok()) s = Run(sql);
        }
      }
    } else {
      const Columns& before = row.beforecolumns();
      ++counts_.deletes;
      uint64_t deleted = 0;
      const bool keyed = HasKey(before);
      s = Match(before, !keyed, &where);
      if (s.ok()) s = Run("DELETE FROM " + table + " WHERE " + where + (keyed ? "" : " LIMIT 1"), &deleted);
      if (s.ok() && deleted == 0) ++counts_.missed_deletes;
    }
    if (!s.ok()) return s.WithContext(at);
  }
  return Status::OK();
}

}  // namespace canal::testing
