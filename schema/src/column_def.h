// Column definitions inside CREATE TABLE and ALTER TABLE: the data type, its
// attributes and the column's options. Internal to the DDL parser.
#pragma once

#include "canal/common/status.h"
#include "canal/schema/table_schema.h"
#include "token_cursor.h"

namespace canal::schema {

// `name type [attributes...]`, stopping before ',' ')' ';' FIRST AFTER or the end.
// *primary_key is set for an inline PRIMARY KEY. A character column's charset is
// left empty when the statement gives none (the table's default applies).
Status ParseColumnDefinition(TokenCursor* c, bool mariadb, Column* column, bool* primary_key);

// The smallest TEXT/BLOB type that holds `bytes` bytes ("tinytext", "text", ...).
std::string SizedLobType(bool text, int64_t bytes);

// Error text naming where the parser stopped: "at offset 42 near 'FOO'".
std::string Near(TokenCursor* c);

}  // namespace canal::schema
