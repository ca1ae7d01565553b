#include "column_def.h"

#include <charconv>
#include <string>

namespace canal::schema {
namespace {

Status Unsupported(TokenCursor* c, std::string_view what) {
  return Status::NotSupported(std::string(what) + " " + Near(c));
}

bool Integer(const Token& t, int64_t* v) {
  if (t.kind != TokenKind::kNumber) return false;
  const char* b = t.text.data();
  const auto r = std::from_chars(b, b + t.text.size(), *v);
  return r.ec == std::errc() && r.ptr == b + t.text.size();
}

// "(M)" or "(M,D)" after a type; absent leaves the values as they are.
Status Params(TokenCursor* c, int64_t* first, int64_t* second) {
  if (!c->Punct('(')) return Status::OK();
  if (!Integer(c->Peek(), first)) return Unsupported(c, "expected a number in a type's length");
  c->Take();
  if (c->Punct(',')) {
    if (second == nullptr || !Integer(c->Peek(), second)) return Unsupported(c, "unexpected second type parameter");
    c->Take();
  }
  if (!c->Punct(')')) return Unsupported(c, "expected ')' after a type's length");
  return Status::OK();
}

// ENUM('a','b') / SET('x'): the labels.
Status Labels(TokenCursor* c, std::vector<std::string>* labels) {
  if (!c->Punct('(')) return Unsupported(c, "expected '(' after ENUM/SET");
  while (true) {
    if (c->Peek().kind != TokenKind::kString && c->Peek().kind != TokenKind::kHexString) {
      return Unsupported(c, "expected a quoted ENUM/SET label");
    }
    labels->push_back(c->Take().text);
    if (c->Punct(')')) return Status::OK();
    if (!c->Punct(',')) return Unsupported(c, "expected ',' or ')' in ENUM/SET labels");
  }
}

bool CharsetWords(TokenCursor* c) {
  return c->Word("CHARSET") || c->Words("CHARACTER", "SET") || c->Words("CHAR", "SET");
}

Status CharsetName(TokenCursor* c, std::string* out) {
  c->Punct('=');
  const Token& t = c->Peek();
  if (!t.IsIdentifier() && t.kind != TokenKind::kString) return Unsupported(c, "expected a character set name");
  *out = NormalizeCharset(c->Take().text);
  return Status::OK();
}

// DEFAULT / ON UPDATE value: a literal, a signed number, NULL, a word or a
// function call, or a parenthesised expression.
Status SkipValue(TokenCursor* c) {
  if (c->Punct('-') || c->Punct('+')) {
    if (c->Peek().kind != TokenKind::kNumber) return Unsupported(c, "expected a number after a sign");
    c->Take();
    return Status::OK();
  }
  const Token& t = c->Peek();
  if (t.IsPunct('(')) return c->SkipOne() ? Status::OK() : Unsupported(c, "unbalanced parenthesis");
  if (t.kind == TokenKind::kString || t.kind == TokenKind::kHexString || t.kind == TokenKind::kNumber) {
    c->Take();
    return Status::OK();
  }
  if (t.kind == TokenKind::kWord) {
    c->Take();
    if (c->Peek().IsPunct('(') && !c->SkipOne()) return Unsupported(c, "unbalanced parenthesis");
    return Status::OK();
  }
  return Unsupported(c, "expected a default value");
}

struct TypeName {
  std::string_view word, type;
};

// Plain synonyms: one word, one DATA_TYPE.
constexpr TypeName kSimpleTypes[] = {
    {"TINYINT", "tinyint"}, {"INT1", "tinyint"}, {"SMALLINT", "smallint"}, {"INT2", "smallint"},
    {"MEDIUMINT", "mediumint"}, {"INT3", "mediumint"}, {"MIDDLEINT", "mediumint"}, {"INT", "int"},
    {"INTEGER", "int"}, {"INT4", "int"}, {"BIGINT", "bigint"}, {"INT8", "bigint"},
    {"DECIMAL", "decimal"}, {"DEC", "decimal"}, {"NUMERIC", "decimal"}, {"FIXED", "decimal"},
    {"FLOAT", "float"}, {"FLOAT4", "float"}, {"DOUBLE", "double"}, {"FLOAT8", "double"}, {"REAL", "double"},
    {"DATE", "date"}, {"TIME", "time"}, {"DATETIME", "datetime"}, {"TIMESTAMP", "timestamp"},
    {"YEAR", "year"}, {"BIT", "bit"}, {"CHAR", "char"}, {"CHARACTER", "char"}, {"VARCHAR", "varchar"},
    {"BINARY", "binary"}, {"VARBINARY", "varbinary"}, {"TINYBLOB", "tinyblob"}, {"BLOB", "blob"},
    {"MEDIUMBLOB", "mediumblob"}, {"LONGBLOB", "longblob"}, {"TINYTEXT", "tinytext"}, {"TEXT", "text"},
    {"MEDIUMTEXT", "mediumtext"}, {"LONGTEXT", "longtext"}, {"ENUM", "enum"}, {"SET", "set"},
    {"JSON", "json"}, {"GEOMETRY", "geometry"}, {"POINT", "point"}, {"LINESTRING", "linestring"},
    {"POLYGON", "polygon"}, {"MULTIPOINT", "multipoint"}, {"MULTILINESTRING", "multilinestring"},
    {"MULTIPOLYGON", "multipolygon"}, {"GEOMETRYCOLLECTION", "geometrycollection"},
    {"GEOMCOLLECTION", "geomcollection"}, {"INET6", "inet6"}, {"INET4", "inet4"}, {"UUID", "uuid"},
    {"BOOL", "tinyint"}, {"BOOLEAN", "tinyint"}, {"SERIAL", "bigint"}, {"NCHAR", "char"},
    {"NVARCHAR", "varchar"}, {"LONG", "mediumtext"},
};

Status DataType(TokenCursor* c, bool mariadb, Column* col) {
  const Token& t = c->Peek();
  if (t.kind != TokenKind::kWord) return Unsupported(c, "expected a data type");
  const std::string w = AsciiUpper(t.text);
  bool national = false;
  if (w == "NATIONAL") {
    c->Take();
    national = true;
  }
  const std::string word = AsciiUpper(c->Peek().text);
  std::string_view type;
  for (const TypeName& n : kSimpleTypes) {
    if (word == n.word) type = n.type;
  }
  if (type.empty() || c->Peek().kind != TokenKind::kWord) return Unsupported(c, "unknown data type");
  c->Take();
  col->type.assign(type);
  if (word == "NCHAR" || word == "NVARCHAR") national = true;
  if (word == "BOOL" || word == "BOOLEAN") col->length = 1;
  if (word == "SERIAL") {
    col->is_unsigned = true;
    col->nullable = false;
  }
  if (word == "LONG") {  // LONG, LONG VARCHAR, LONG VARBINARY
    if (c->Word("VARBINARY")) col->type = "mediumblob";
    else c->Word("VARCHAR");
  }
  if (word == "DOUBLE") c->Word("PRECISION");
  if ((col->type == "char" || col->type == "varchar") && c->Word("VARYING")) col->type = "varchar";
  if (word == "NCHAR" && c->Word("VARCHAR")) col->type = "varchar";
  if (national) col->charset = "utf8mb3";

  if (col->type == "enum" || col->type == "set") {
    CANAL_RETURN_IF_ERROR(Labels(c, &col->labels));
  } else if (col->type == "decimal") {
    col->precision = 10;
    col->scale = 0;
    CANAL_RETURN_IF_ERROR(Params(c, &col->precision, &col->scale));
  } else if (col->type == "float" || col->type == "double") {
    int64_t m = -1, d = -1;
    CANAL_RETURN_IF_ERROR(Params(c, &m, &d));
    // FLOAT(p) with p > 24 is a DOUBLE.
    if (col->type == "float" && m > 24 && d < 0) col->type = "double";
    if (d >= 0) {
      col->precision = m;
      col->scale = d;
    }
  } else if (col->type == "time" || col->type == "datetime" || col->type == "timestamp") {
    col->precision = 0;
    CANAL_RETURN_IF_ERROR(Params(c, &col->precision, nullptr));
  } else if (col->type == "blob" || col->type == "text") {
    int64_t bytes = -1;
    CANAL_RETURN_IF_ERROR(Params(c, &bytes, nullptr));
    col->length = bytes;  // resolved into a sized type once the charset is known
  } else if (col->type == "json" && mariadb) {
    // MariaDB's JSON is an alias of LONGTEXT with a utf8mb4_bin collation.
    col->type = "longtext";
    col->charset = "utf8mb4";
    col->collation = "utf8mb4_bin";
  } else {
    int64_t scale = -1;
    CANAL_RETURN_IF_ERROR(Params(c, &col->length, &scale));
    if (col->type == "char" || col->type == "binary") {
      if (col->length < 0) col->length = 1;
    }
  }
  return Status::OK();
}

// Attributes straight after the type: signedness, charset, collation.
Status TypeAttributes(TokenCursor* c, Column* col) {
  while (true) {
    if (c->Word("UNSIGNED")) {
      col->is_unsigned = true;
    } else if (c->Word("SIGNED")) {
      col->is_unsigned = false;
    } else if (c->Word("ZEROFILL")) {
      col->is_unsigned = true;
    } else if (CharsetWords(c)) {
      CANAL_RETURN_IF_ERROR(CharsetName(c, &col->charset));
    } else if (c->Word("COLLATE")) {
      CANAL_RETURN_IF_ERROR(CharsetName(c, &col->collation));
    } else if (c->Word("BINARY")) {
      if (col->collation.empty()) col->collation = "binary";  // the charset's _bin collation
    } else if (c->Word("ASCII")) {
      col->charset = "latin1";
    } else if (c->Word("UNICODE")) {
      col->charset = "ucs2";
    } else if (c->Word("BYTE")) {
      col->charset = "binary";
    } else {
      return Status::OK();
    }
  }
}

// Column options after the type, in any order.
Status ColumnOptions(TokenCursor* c, Column* col, bool* primary_key) {
  while (true) {
    const Token& t = c->Peek();
    if (t.kind == TokenKind::kEnd || t.IsPunct(',') || t.IsPunct(')') || t.IsPunct(';') || t.IsWord("FIRST") ||
        t.IsWord("AFTER")) {
      return Status::OK();
    }
    if (t.kind == TokenKind::kError) return Status::Corruption(t.text);
    if (c->Words("NOT", "NULL")) {
      col->nullable = false;
    } else if (c->Word("NULL")) {
      col->nullable = true;
    } else if (c->Word("DEFAULT") || c->Words("ON", "UPDATE")) {
      CANAL_RETURN_IF_ERROR(SkipValue(c));
    } else if (c->Word("AUTO_INCREMENT") || c->Word("VISIBLE") || c->Word("INVISIBLE") ||
               c->Word("VIRTUAL") || c->Word("STORED") || c->Word("PERSISTENT") || c->Word("SERIAL")) {
      if (c->Peek().IsWord("DEFAULT") && c->Peek(1).IsWord("VALUE")) {  // SERIAL DEFAULT VALUE
        c->Take();
        c->Take();
      }
    } else if (c->Words("PRIMARY", "KEY")) {
      *primary_key = true;
      col->nullable = false;
    } else if (c->Word("KEY")) {
      *primary_key = true;  // a bare KEY in a column definition is PRIMARY KEY
      col->nullable = false;
    } else if (c->Word("UNIQUE")) {
      (void)(c->Word("KEY") || c->Word("INDEX"));
    } else if (c->Word("COMMENT")) {
      if (c->Peek().kind != TokenKind::kString) return Unsupported(c, "expected a string after COMMENT");
      c->Take();
    } else if (c->Words("GENERATED", "ALWAYS") || c->Word("AS")) {
      c->Word("AS");
      if (!c->Peek().IsPunct('(') || !c->SkipOne()) return Unsupported(c, "expected (expression) after AS");
    } else if (c->Word("CONSTRAINT")) {
      if (!c->Peek().IsWord("CHECK")) c->Take();  // the constraint's name
    } else if (c->Word("CHECK")) {
      if (!c->Peek().IsPunct('(') || !c->SkipOne()) return Unsupported(c, "expected (expression) after CHECK");
    } else if (c->Word("REFERENCES")) {
      std::string db, table;
      if (!c->QualifiedName(&db, &table)) return Unsupported(c, "expected a table after REFERENCES");
      if (c->Peek().IsPunct('(')) c->SkipOne();
      while (true) {
        if (c->Word("MATCH")) {
          c->Take();
        } else if (c->Words("ON", "DELETE") || c->Words("ON", "UPDATE")) {
          if (!(c->Word("RESTRICT") || c->Word("CASCADE") || c->Words("SET", "NULL") ||
                c->Words("SET", "DEFAULT") || c->Words("NO", "ACTION"))) {
            return Unsupported(c, "unknown referential action");
          }
        } else {
          break;
        }
      }
    } else if (c->Word("COLUMN_FORMAT") || c->Word("STORAGE") || c->Word("SRID") ||
               c->Word("REF_SYSTEM_ID") || c->Word("ENGINE_ATTRIBUTE") ||
               c->Word("SECONDARY_ENGINE_ATTRIBUTE") || c->Word("COMPRESSED")) {
      const bool eq = c->Punct('=');
      if (eq || (!c->Peek().IsPunct(',') && !c->Peek().IsPunct(')') && !c->AtEnd())) {
        if (c->Peek().IsWord("NOT") || c->Peek().IsWord("NULL")) continue;  // bare COMPRESSED
        c->Take();
      }
    } else if (c->Words("WITH", "SYSTEM") || c->Words("WITHOUT", "SYSTEM")) {
      if (!c->Word("VERSIONING")) return Unsupported(c, "expected VERSIONING");
    } else if (c->Word("COLLATE")) {  // also allowed after other options
      CANAL_RETURN_IF_ERROR(CharsetName(c, &col->collation));
    } else {
      return Unsupported(c, "unknown column option");
    }
  }
}

}  // namespace

std::string Near(TokenCursor* c) {
  const Token& t = c->Peek();
  if (t.kind == TokenKind::kEnd) return "at the end of the statement";
  if (t.kind == TokenKind::kError) return t.text;
  std::string text = t.text.substr(0, 40);
  for (char& ch : text) {
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';  // keep log lines on one line
  }
  return "at offset " + std::to_string(t.offset) + " near '" + text + "'";
}

std::string SizedLobType(bool text, int64_t bytes) {
  const char* prefix = bytes < 256 ? "tiny" : bytes < 65536 ? "" : bytes < 16777216 ? "medium" : "long";
  return std::string(prefix) + (text ? "text" : "blob");
}

Status ParseColumnDefinition(TokenCursor* c, bool mariadb, Column* column, bool* primary_key) {
  *column = Column{};
  *primary_key = false;
  if (!c->Identifier(&column->name)) return Unsupported(c, "expected a column name");
  CANAL_RETURN_IF_ERROR(DataType(c, mariadb, column));
  CANAL_RETURN_IF_ERROR(TypeAttributes(c, column));
  CANAL_RETURN_IF_ERROR(ColumnOptions(c, column, primary_key));
  if (column->type == "binary" || column->type == "varbinary" || column->type.ends_with("blob")) {
    column->charset = "binary";
  }
  if (column->charset == "binary" && (column->type == "char" || column->type == "varchar")) {
    column->type = column->type == "char" ? "binary" : "varbinary";  // CHAR(n) BYTE / CHARACTER SET binary
  }
  if (column->charset == "binary" && column->type.ends_with("text")) {
    column->type.replace(column->type.size() - 4, 4, "blob");
  }
  if (column->collation == "binary" && column->charset != "binary") {
    column->collation.clear();  // BINARY attribute: the charset's _bin collation
    column->collation = column->charset.empty() ? std::string("binary") : column->charset + "_bin";
  }
  if (column->charset.empty() && !column->collation.empty() && column->collation != "binary") {
    column->charset = CharsetOfCollation(column->collation);
  }
  if (!IsCharacterType(column->type) && column->charset != "binary") {
    column->charset.clear();
    column->collation.clear();
  }
  return Status::OK();
}

}  // namespace canal::schema
