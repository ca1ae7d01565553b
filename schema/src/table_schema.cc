#include "canal/schema/table_schema.h"

#include <array>
#include <utility>

#include "canal/schema/sql_lexer.h"

namespace canal::schema {

const Column* TableSchema::Find(std::string_view column) const {
  const int i = IndexOf(column);
  return i < 0 ? nullptr : &columns[static_cast<size_t>(i)];
}

int TableSchema::IndexOf(std::string_view column) const {
  // Column names are case-insensitive in MySQL (ASCII folding is enough for the
  // names DDL uses; non-ASCII names compare byte for byte).
  for (size_t i = 0; i < columns.size(); ++i) {
    if (EqualsIgnoreCase(columns[i].name, column)) return static_cast<int>(i);
  }
  return -1;
}

bool IsCharacterType(std::string_view type) {
  for (std::string_view t : {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"}) {
    if (type == t) return true;
  }
  return false;
}

std::string NormalizeCharset(std::string_view charset) {
  std::string cs(charset);
  for (char& c : cs) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (cs == "utf8") return "utf8mb3";
  return cs;
}

int CharsetMaxLen(std::string_view charset) {
  // Maximum bytes per character, from the servers' SHOW CHARACTER SET (Maxlen).
  static constexpr std::array<std::pair<std::string_view, int>, 41> kMaxLen = {{
      {"big5", 2},    {"dec8", 1},    {"cp850", 1},   {"hp8", 1},     {"koi8r", 1},    {"latin1", 1},
      {"latin2", 1},  {"swe7", 1},    {"ascii", 1},   {"ujis", 3},    {"sjis", 2},     {"hebrew", 1},
      {"tis620", 1},  {"euckr", 2},   {"koi8u", 1},   {"gb2312", 2},  {"greek", 1},    {"cp1250", 1},
      {"gbk", 2},     {"latin5", 1},  {"armscii8", 1}, {"utf8mb3", 3}, {"ucs2", 2},     {"cp866", 1},
      {"keybcs2", 1}, {"macce", 1},   {"macroman", 1}, {"cp852", 1},  {"latin7", 1},   {"utf8mb4", 4},
      {"cp1251", 1},  {"utf16", 4},   {"utf16le", 4}, {"cp1256", 1},  {"cp1257", 1},   {"utf32", 4},
      {"binary", 1},  {"geostd8", 1}, {"cp932", 2},   {"eucjpms", 3}, {"gb18030", 4},
  }};
  const std::string cs = NormalizeCharset(charset);
  for (const auto& [name, len] : kMaxLen) {
    if (cs == name) return len;
  }
  return 0;
}

std::string CharsetOfCollation(std::string_view collation) {
  const std::string c = NormalizeCharset(collation);
  if (c == "binary") return c;
  const size_t us = c.find('_');
  return NormalizeCharset(us == std::string::npos ? c : c.substr(0, us));
}

}  // namespace canal::schema
