#include "canal/schema/statement.h"

#include "token_cursor.h"

namespace canal::schema {
namespace {

// After CREATE/ALTER/DROP: the words that may sit before the object's keyword.
void SkipModifiers(TokenCursor* c) {
  while (true) {
    if (c->Words("OR", "REPLACE")) continue;
    if (c->Peek().IsWord("TEMPORARY") || c->Peek().IsWord("ONLINE") || c->Peek().IsWord("OFFLINE") ||
        c->Peek().IsWord("IGNORE") || c->Peek().IsWord("UNIQUE") || c->Peek().IsWord("FULLTEXT") ||
        c->Peek().IsWord("SPATIAL")) {
      c->Take();
      continue;
    }
    return;
  }
}

// CREATE USER / DROP ROLE / ...: access control, not DDL.
bool IsDclObject(const Token& t) { return t.IsWord("USER") || t.IsWord("ROLE"); }

// "... INDEX name [USING x] ON [db.]table": the table after ON.
void IndexTable(TokenCursor* c, StatementClass* out) {
  for (int guard = 0; guard < 8 && !c->AtEnd(); ++guard) {
    if (c->Word("ON")) {
      std::string db, table;
      if (c->QualifiedName(&db, &table)) {
        out->db = std::move(db);
        out->table = std::move(table);
      }
      return;
    }
    c->Take();
  }
}

}  // namespace

StatementClass ClassifyStatement(std::string_view sql, const LexerOptions& options) {
  StatementClass out;
  TokenCursor c(sql, options);
  while (c.Punct('(')) {
  }
  const Token first = c.Take();
  if (first.kind != TokenKind::kWord) return out;
  const std::string head = AsciiUpper(first.text);
  if (head == "INSERT" || head == "UPDATE" || head == "DELETE" || head == "REPLACE" || head == "LOAD") {
    out.kind = StatementKind::kDml;
    return out;
  }
  if (head == "GRANT" || head == "REVOKE") {
    out.kind = StatementKind::kDcl;
    return out;
  }
  if (head == "SET") {
    if (c.Peek().IsWord("PASSWORD") || c.Peek().IsWord("ROLE") || c.Peek().IsWord("DEFAULT")) {
      out.kind = StatementKind::kDcl;
    }
    return out;
  }
  if (head == "CREATE") out.verb = DdlVerb::kCreate;
  else if (head == "ALTER") out.verb = DdlVerb::kAlter;
  else if (head == "DROP") out.verb = DdlVerb::kDrop;
  else if (head == "RENAME") out.verb = DdlVerb::kRename;
  else if (head == "TRUNCATE") out.verb = DdlVerb::kTruncate;
  else return out;

  if (out.verb == DdlVerb::kRename || out.verb == DdlVerb::kCreate || out.verb == DdlVerb::kDrop ||
      out.verb == DdlVerb::kAlter) {
    if (IsDclObject(c.Peek())) {
      out.kind = StatementKind::kDcl;
      out.verb = DdlVerb::kNone;
      return out;
    }
  }
  out.kind = StatementKind::kDdl;
  if (out.verb == DdlVerb::kTruncate) {
    c.Word("TABLE");
    out.object = DdlObject::kTable;
    std::string db, table;
    if (c.QualifiedName(&db, &table)) {
      out.db = std::move(db);
      out.table = std::move(table);
    }
    return out;
  }
  SkipModifiers(&c);
  if (IsDclObject(c.Peek())) {  // CREATE OR REPLACE USER
    out.kind = StatementKind::kDcl;
    out.verb = DdlVerb::kNone;
    return out;
  }
  // MySQL's "CREATE DEFINER=x SQL SECURITY y VIEW": the object is further on.
  const Token& obj = c.Peek();
  if (obj.IsWord("TABLE") || obj.IsWord("TABLES")) {
    c.Take();
    out.object = DdlObject::kTable;
    if (out.verb == DdlVerb::kAlter || out.verb == DdlVerb::kDrop) c.IfExists();
    if (out.verb == DdlVerb::kCreate) c.IfNotExists();
    std::string db, table;
    if (c.QualifiedName(&db, &table)) {
      out.db = std::move(db);
      out.table = std::move(table);
    }
  } else if (obj.IsWord("INDEX") || obj.IsWord("KEY")) {
    c.Take();
    out.object = DdlObject::kIndex;
    IndexTable(&c, &out);
  } else if (obj.IsWord("DATABASE") || obj.IsWord("SCHEMA")) {
    c.Take();
    out.object = DdlObject::kDatabase;
  } else {
    out.object = DdlObject::kOther;
  }
  return out;
}

bool MayChangeColumns(const StatementClass& c) {
  if (c.kind != StatementKind::kDdl) return false;
  // TRUNCATE keeps the columns, but MySQL logs it as DDL and tools expect the
  // history to record its position: it is replayed as a no-op.
  return c.object == DdlObject::kTable || c.object == DdlObject::kDatabase || c.verb == DdlVerb::kTruncate;
}

}  // namespace canal::schema
