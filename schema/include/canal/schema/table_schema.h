// The column list of one table as the schema history keeps it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canal::schema {

struct Column {
  std::string name;
  // information_schema DATA_TYPE, lower case: "int", "varchar", "enum",
  // "decimal", "mediumtext", ... (synonyms resolved: INTEGER -> int, BOOL -> tinyint).
  std::string type;
  bool is_unsigned = false;
  bool nullable = true;
  bool is_key = false;  // part of the primary key
  // Character set for character types ("utf8mb4", "latin1", "binary" for
  // BINARY/VARBINARY/BLOB); empty for the rest.
  std::string charset;
  std::string collation;  // as written; empty = the charset's default
  std::vector<std::string> labels;  // ENUM/SET labels
  int64_t length = -1;     // CHAR/VARCHAR/BINARY/BIT length, -1 when not given
  int64_t precision = -1;  // DECIMAL precision, FLOAT(M,D) M, time types' fsp
  int64_t scale = -1;      // DECIMAL scale

  bool operator==(const Column&) const = default;
};

struct TableSchema {
  std::string db, name;
  std::vector<Column> columns;
  std::string charset;  // the table's default character set
  std::string collation;

  bool operator==(const TableSchema&) const = default;
  const Column* Find(std::string_view column) const;  // case-insensitive
  int IndexOf(std::string_view column) const;         // -1 when absent
};

// True for types whose values carry a character set (CHAR, TEXT, ENUM, ...).
bool IsCharacterType(std::string_view type);
// Maximum bytes per character of a character set ("utf8mb4" -> 4); 0 when unknown.
int CharsetMaxLen(std::string_view charset);
// The canonical name of a character set ("utf8" -> "utf8mb3"), lower case.
std::string NormalizeCharset(std::string_view charset);
// The character set a collation belongs to ("latin1_swedish_ci" -> "latin1").
std::string CharsetOfCollation(std::string_view collation);

}  // namespace canal::schema
