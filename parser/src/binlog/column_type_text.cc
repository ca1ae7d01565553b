// A column's type text as the server prints it, derived from the binlog's
// TABLE_MAP metadata (column_text.h). Builds a fresh string: callers cache it
// per table.
#include <string>
#include <string_view>
#include <vector>

#include "canal/parser/binlog/column_text.h"

namespace canal::binlog {

namespace internal {
// Defined in charset.cc: maximum bytes per character of a collation's charset,
// 0 when the collation id is unknown.
int CharsetMaxBytesPerChar(uint32_t collation);
}  // namespace internal

namespace {

void AppendInt(uint64_t v, std::string* out) { *out += std::to_string(v); }

void AppendParenthesized(uint64_t n, std::string* out) {
  out->push_back('(');
  AppendInt(n, out);
  out->push_back(')');
}

// CHAR/VARCHAR length in characters when the charset is known, else in bytes.
uint32_t LengthInChars(uint32_t bytes, uint32_t charset) {
  const int per_char = internal::CharsetMaxBytesPerChar(charset);
  return per_char > 0 ? bytes / static_cast<uint32_t>(per_char) : bytes;
}

void AppendLabelList(std::string_view keyword, const ColumnInfo& column, std::string* out) {
  out->append(keyword);
  if (column.enum_or_set_labels.empty()) return;
  out->push_back('(');
  bool first = true;
  for (const std::string& label : column.enum_or_set_labels) {
    if (!first) out->push_back(',');
    first = false;
    out->push_back('\'');
    std::string utf8;
    AppendAsUtf8(label, column.charset, &utf8);
    for (char c : utf8) {
      if (c == '\'') out->push_back('\'');  // SQL quoting, as SHOW CREATE TABLE prints it
      out->push_back(c);
    }
    out->push_back('\'');
  }
  out->push_back(')');
}

std::string_view GeometryTypeName(uint8_t geometry_type) {
  switch (geometry_type) {
    case 1: return "point";
    case 2: return "linestring";
    case 3: return "polygon";
    case 4: return "multipoint";
    case 5: return "multilinestring";
    case 6: return "multipolygon";
    case 7: return "geometrycollection";
    default: return "geometry";
  }
}

// The display width SHOW CREATE TABLE prints for an integer column declared
// without one (MariaDB; MySQL before 8.0.19): the characters of the type's
// widest value, the sign included (BIGINT: 20 either way).
uint32_t DefaultDisplayWidth(ColumnType t, bool is_unsigned) {
  switch (t) {
    case ColumnType::kTiny: return is_unsigned ? 3 : 4;
    case ColumnType::kShort: return is_unsigned ? 5 : 6;
    case ColumnType::kInt24: return is_unsigned ? 8 : 9;
    case ColumnType::kLong: return is_unsigned ? 10 : 11;
    case ColumnType::kLongLong: return 20;
    default: return 0;
  }
}

}  // namespace

std::string WithDefaultDisplayWidth(std::string_view column_type) {
  struct Width {
    std::string_view name;
    ColumnType type;
  };
  static constexpr Width kIntegers[] = {{"tinyint", ColumnType::kTiny},     {"smallint", ColumnType::kShort},
                                        {"mediumint", ColumnType::kInt24},  {"int", ColumnType::kLong},
                                        {"bigint", ColumnType::kLongLong},  {"year", ColumnType::kYear}};
  for (const Width& w : kIntegers) {
    if (!column_type.starts_with(w.name)) continue;
    const std::string_view rest = column_type.substr(w.name.size());
    if (!rest.empty() && rest.front() != ' ') return std::string(column_type);  // has a width, or another type
    const bool is_unsigned = rest.find("unsigned") != std::string_view::npos;
    const uint32_t width = w.type == ColumnType::kYear ? 4 : DefaultDisplayWidth(w.type, is_unsigned);
    std::string out(w.name);
    out += '(';
    out += std::to_string(width);
    out += ')';
    out += rest;
    return out;
  }
  return std::string(column_type);
}

std::string ColumnTypeText(const ColumnInfo& column, bool integer_display_widths) {
  const bool widths = integer_display_widths;
  const ColumnType t = EffectiveType(column);
  std::string s;
  bool numeric = true;
  switch (t) {
    case ColumnType::kTiny: s = "tinyint"; break;
    case ColumnType::kShort: s = "smallint"; break;
    case ColumnType::kInt24: s = "mediumint"; break;
    case ColumnType::kLong: s = "int"; break;
    case ColumnType::kLongLong: s = "bigint"; break;
    case ColumnType::kFloat: s = "float"; break;
    case ColumnType::kDouble: s = "double"; break;
    case ColumnType::kDecimal:
    case ColumnType::kNewDecimal:
      s = "decimal";
      if (column.precision != 0) {
        s.push_back('(');
        AppendInt(unsigned{column.precision}, &s);
        s.push_back(',');
        AppendInt(unsigned{column.decimals}, &s);
        s.push_back(')');
      }
      break;
    default: numeric = false; break;
  }
  if (numeric) {
    if (widths && DefaultDisplayWidth(t, column.is_unsigned) != 0) {
      AppendParenthesized(DefaultDisplayWidth(t, column.is_unsigned), &s);
    }
    if (column.is_unsigned) s += " unsigned";
    return s;
  }

  const uint8_t fsp = static_cast<uint8_t>(column.meta > 6 ? 6 : column.meta);
  switch (t) {
    case ColumnType::kBit:
      s = "bit";
      if (column.max_length != 0) AppendParenthesized(column.max_length, &s);
      return s;
    case ColumnType::kYear: return widths ? "year(4)" : "year";
    case ColumnType::kDate:
    case ColumnType::kNewDate: return "date";
    case ColumnType::kTime:
    case ColumnType::kDateTime:
    case ColumnType::kTimestamp:
      s = t == ColumnType::kTime ? "time" : t == ColumnType::kDateTime ? "datetime" : "timestamp";
      // MariaDB's TIMESTAMP(N) etc. under the old codes (N from the schema).
      if (column.meta >= 1 && column.meta <= 6) AppendParenthesized(column.meta, &s);
      return s;
    case ColumnType::kTime2:
    case ColumnType::kDateTime2:
    case ColumnType::kTimestamp2:
      s = t == ColumnType::kTime2 ? "time" : t == ColumnType::kDateTime2 ? "datetime" : "timestamp";
      if (fsp != 0) AppendParenthesized(fsp, &s);
      return s;
    case ColumnType::kVarchar:
    case ColumnType::kVarString: {
      const uint32_t bytes = column.max_length != 0 ? column.max_length : column.meta;
      if (IsBinaryCharset(column.charset)) {
        s = "varbinary";
        AppendParenthesized(bytes, &s);
      } else {
        s = "varchar";
        AppendParenthesized(LengthInChars(bytes, column.charset), &s);
      }
      return s;
    }
    case ColumnType::kString:
      if (IsBinaryCharset(column.charset)) {
        s = "binary";
        AppendParenthesized(column.max_length, &s);
      } else {
        s = "char";
        AppendParenthesized(LengthInChars(column.max_length, column.charset), &s);
      }
      return s;
    case ColumnType::kEnum:
      AppendLabelList("enum", column, &s);
      return s;
    case ColumnType::kSet:
      AppendLabelList("set", column, &s);
      return s;
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob: {
      // BLOB's metadata is the size of its length prefix: 1..4 bytes.
      int size_class = t == ColumnType::kTinyBlob     ? 1
                       : t == ColumnType::kBlob       ? 2
                       : t == ColumnType::kMediumBlob ? 3
                                                      : 4;
      if (t == ColumnType::kBlob && column.meta >= 1 && column.meta <= 4) size_class = column.meta;
      static constexpr std::string_view kPrefixes[] = {"tiny", "", "medium", "long"};
      s = kPrefixes[size_class - 1];
      s += IsTextBlob(column) ? "text" : "blob";
      return s;
    }
    case ColumnType::kJson: return "json";
    case ColumnType::kGeometry: return std::string(GeometryTypeName(column.geometry_type));
    case ColumnType::kVector:
      s = "vector";
      if (column.vector_dimensions != 0) AppendParenthesized(column.vector_dimensions, &s);
      return s;
    default: return std::string();
  }
}

// Labels of "enum('a','it''s','x,y','back\\slash')" as the server prints
// COLUMN_TYPE: quotes inside a label doubled, backslashes escaped, commas
// allowed inside quotes. False when the text does not have that shape.
bool ParseEnumOrSetLabels(std::string_view column_type, std::vector<std::string>* labels) {
  labels->clear();
  const size_t open = column_type.find('(');
  if (open == std::string_view::npos) return false;
  size_t i = open + 1;
  const size_t n = column_type.size();
  while (true) {
    if (i >= n || column_type[i] != '\'') return false;
    ++i;
    std::string label;
    bool closed = false;
    while (i < n) {
      const char c = column_type[i];
      if (c == '\'') {
        if (i + 1 < n && column_type[i + 1] == '\'') {
          label += '\'';
          i += 2;
          continue;
        }
        ++i;
        closed = true;
        break;
      }
      if (c == '\\' && i + 1 < n) {
        const char e = column_type[i + 1];
        switch (e) {
          case '0': label += '\0'; break;
          case 'n': label += '\n'; break;
          case 'r': label += '\r'; break;
          case 't': label += '\t'; break;
          case 'Z': label += '\x1a'; break;
          default: label += e;
        }
        i += 2;
        continue;
      }
      label += c;
      ++i;
    }
    if (!closed) return false;
    labels->push_back(std::move(label));
    if (i >= n) return false;
    if (column_type[i] == ')') return true;
    if (column_type[i] != ',') return false;
    ++i;
  }
}

}  // namespace canal::binlog
